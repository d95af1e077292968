-- Planner statistics (issue: scale): the Postgres migration of this number
-- keeps log payloads out of ANALYZE. SQLite plans from its indexes alone
-- and needs nothing; the version exists so both dialects stay in step.
-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
