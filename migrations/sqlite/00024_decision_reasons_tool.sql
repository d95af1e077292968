-- Each reason row carries its decision's tool, indexed after the reason, so
-- the run page's "a reason on a tool" filter (reason=vis.normalized&
-- tool=cancel_line) reads exactly its matches from one index range. Both
-- alone were common (91,478 vis.normalized rows, 8,588 cancel_line
-- decisions among 443,000) and together matched two decisions: the walk
-- over the run in page order read all 50,000 trajectories (SQLite 812 ms,
-- Postgres 1.7 s), and a list from either side needs a lookup per entry
-- (store.decisionPage). A decision's tool never changes; a recheck rewrites
-- the rows from the decisions. decision_reasons_run_idx stays for the
-- per-trajectory probe of a reason alone.
-- +goose Up
ALTER TABLE decision_reasons ADD COLUMN tool TEXT NOT NULL DEFAULT '';
UPDATE decision_reasons SET tool = (SELECT d.tool FROM decisions d
    WHERE d.trajectory_id = decision_reasons.trajectory_id AND d.ordinal = decision_reasons.ordinal);
CREATE INDEX decision_reasons_run_tool_idx ON decision_reasons (run_id, reason, tool, trajectory_id, ordinal);

-- +goose Down
DROP INDEX decision_reasons_run_tool_idx;
ALTER TABLE decision_reasons DROP COLUMN tool;
