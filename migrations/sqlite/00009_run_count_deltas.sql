-- Run counters moved by human verdicts, waiting to be folded into runs.
-- On Postgres every settled verdict moves its run's counters; updating the
-- runs row directly made all annotators of a run queue behind one row lock
-- held through each commit (measured: 16 of 32 sessions waiting on it, 150
-- verdicts/s). A settlement that finds the row locked appends its
-- difference here instead, and whoever holds the row next folds the rows it
-- sees into it. Readers add the rows not folded yet. SQLite folds directly
-- (its writer is alone anyway), so there the table stays empty.
-- run_id has no foreign key on purpose: checking one would lock the hot
-- runs row again (FOR KEY SHARE).
-- +goose Up
CREATE TABLE run_count_deltas (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL,
    n_pass       INTEGER NOT NULL DEFAULT 0,
    n_fail       INTEGER NOT NULL DEFAULT 0,
    n_ambiguous  INTEGER NOT NULL DEFAULT 0,
    n_queued     INTEGER NOT NULL DEFAULT 0,
    n_supervised INTEGER NOT NULL DEFAULT 0,
    n_certified  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX run_count_deltas_run_idx ON run_count_deltas (run_id);

-- +goose Down
DROP TABLE run_count_deltas;
