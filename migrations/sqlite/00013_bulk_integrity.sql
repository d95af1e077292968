-- Referential integrity of the bulk tables (issue: scale): the Postgres
-- migration of this number replaces the row-by-row foreign keys of
-- messages, decisions, decision_reasons and coverage_paths with
-- statement-level checks. SQLite checks a foreign key with an index probe
-- inside the statement, cheaply; its keys stay, and this version only keeps
-- both dialects in step.
-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
