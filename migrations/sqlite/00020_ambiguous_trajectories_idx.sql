-- Trajectories with an ambiguous decision, by run (and domain), in the
-- order the run page lists them. "Ambiguous" is the filter annotators and
-- leads use most, and about one trajectory in seven matches it, so the
-- run page read seven rows for every one it showed: on the 35,000-
-- trajectory pool, airline trajectories with an ambiguous decision took
-- 398 heap rows (347 filtered out) for a page of 51. The predicate is the
-- run page's own condition (store.Trajectories: t.n_ambiguous > 0), which
-- is what lets the planner pick these indexes.
-- +goose Up
CREATE INDEX trajectories_run_ambiguous_idx ON trajectories (run_id, ext_id) WHERE n_ambiguous > 0;
CREATE INDEX trajectories_run_domain_ambiguous_idx ON trajectories (run_id, domain, ext_id) WHERE n_ambiguous > 0;

-- +goose Down
DROP INDEX trajectories_run_domain_ambiguous_idx;
DROP INDEX trajectories_run_ambiguous_idx;
