-- The decisions that did not pass, by run, verdict and tool: the run page's
-- decision filters ("a get_line_details that failed") find their
-- trajectories here instead of walking the run's trajectories in page order
-- and probing each one's decisions, which reads the whole run when the
-- matches are rare or late. BenchmarkRunPageRareDecision (50,000 generated
-- trajectories, 443,000 decisions), tool=get_line_details&verdict=fail,
-- 2,156 matches: SQLite 139 -> 9 ms, Postgres 56 -> 13 ms; a tool with no
-- failed decision: 207 -> 9 ms and 156 -> 1.6 ms. Passing decisions, 96%
-- of them, are left out (the partial predicate), so an import writes one
-- entry for every 25 decisions, where the full (run_id, verdict,
-- trajectory_id) index that 00015 dropped cost one per decision.
-- store.Trajectories states the predicate in that query's SQL, so a generic
-- plan of the prepared statement can use the index too.
-- +goose Up
CREATE INDEX decisions_run_unsettled_idx ON decisions (run_id, verdict, tool, trajectory_id, ordinal) WHERE verdict <> 'pass';

-- +goose Down
DROP INDEX decisions_run_unsettled_idx;
