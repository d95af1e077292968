-- The Postgres migration of this number makes the statement-level
-- integrity checks of 00013 probe trajectories by primary key. SQLite
-- kept its foreign keys, which probe by key already; this version only
-- keeps both dialects in step.
-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
