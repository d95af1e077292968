-- The run page lists trajectories in natural order: task2 before task10
-- (τ-bench ids are gpt-4o-airline-task10-trial0, and byte order put task10
-- to task19 between task1 and task2). sort_key is the id with every run
-- of digits padded with zeros to 20 (store.naturalKey writes it at
-- import); the list orders and pages by (sort_key, ext_id), and the
-- indexes that served its byte order now serve this one. COLLATE "C", as
-- ext_id: the order is byte order, as in SQLite.
--
-- The backfill computes the same key in SQL: the id split into runs of
-- digits and of other characters, the digit runs padded
-- (TestNaturalKeyBackfill checks it against naturalKey).
-- +goose Up
ALTER TABLE trajectories ADD COLUMN sort_key TEXT COLLATE "C" NOT NULL DEFAULT '';
UPDATE trajectories t SET sort_key = COALESCE((
    SELECT string_agg(CASE WHEN r.m[1] ~ '^[0-9]' AND length(r.m[1]) < 20 THEN lpad(r.m[1], 20, '0') ELSE r.m[1] END, '' ORDER BY r.n)
    FROM regexp_matches(t.ext_id, '[0-9]+|[^0-9]+', 'g') WITH ORDINALITY AS r(m, n)), '');

DROP INDEX trajectories_run_success_idx;
DROP INDEX trajectories_run_domain_idx;
DROP INDEX trajectories_run_ambiguous_idx;
DROP INDEX trajectories_run_domain_ambiguous_idx;
CREATE INDEX trajectories_run_order_idx   ON trajectories (run_id, sort_key, ext_id);
CREATE INDEX trajectories_run_success_idx ON trajectories (run_id, success, sort_key, ext_id);
CREATE INDEX trajectories_run_domain_idx  ON trajectories (run_id, domain, sort_key, ext_id);
CREATE INDEX trajectories_run_ambiguous_idx ON trajectories (run_id, sort_key, ext_id) WHERE n_ambiguous > 0;
CREATE INDEX trajectories_run_domain_ambiguous_idx ON trajectories (run_id, domain, sort_key, ext_id) WHERE n_ambiguous > 0;

-- +goose Down
DROP INDEX trajectories_run_domain_ambiguous_idx;
DROP INDEX trajectories_run_ambiguous_idx;
DROP INDEX trajectories_run_domain_idx;
DROP INDEX trajectories_run_success_idx;
DROP INDEX trajectories_run_order_idx;
CREATE INDEX trajectories_run_success_idx ON trajectories (run_id, success, ext_id);
CREATE INDEX trajectories_run_domain_idx  ON trajectories (run_id, domain, ext_id);
CREATE INDEX trajectories_run_ambiguous_idx ON trajectories (run_id, ext_id) WHERE n_ambiguous > 0;
CREATE INDEX trajectories_run_domain_ambiguous_idx ON trajectories (run_id, domain, ext_id) WHERE n_ambiguous > 0;
ALTER TABLE trajectories DROP COLUMN sort_key;
