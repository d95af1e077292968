-- decisions_run_verdict_idx (run_id, verdict, trajectory_id) served the run
-- page's verdict filter ("trajectories with an ambiguous decision"), which
-- now reads the trajectory's own counters (n_pass, n_fail, n_ambiguous,
-- kept by every verdict, undo and recheck). Nothing else reads it; it cost
-- one index entry per decision at import (298,000 for 35,000 trajectories)
-- and an index update on every verdict, since verdict is in its key.
-- +goose Up
DROP INDEX decisions_run_verdict_idx;

-- +goose Down
CREATE INDEX decisions_run_verdict_idx ON decisions (run_id, verdict, trajectory_id);
