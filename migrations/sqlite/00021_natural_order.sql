-- The run page lists trajectories in natural order: task2 before task10
-- (τ-bench ids are gpt-4o-airline-task10-trial0, and byte order put task10
-- to task19 between task1 and task2). sort_key is the id with every run
-- of digits padded with zeros to 20 (store.naturalKey writes it at
-- import); the list orders and pages by (sort_key, ext_id), and the
-- indexes that served its byte order now serve this one.
--
-- The backfill computes the same key in SQL: a recursive walk over each
-- id's characters that collects a run of digits and writes it padded when
-- a non-digit or the end closes it (TestNaturalKeyBackfill checks it
-- against naturalKey).
-- +goose Up
ALTER TABLE trajectories ADD COLUMN sort_key TEXT NOT NULL DEFAULT '';
WITH RECURSIVE walk(id, rest, run, acc) AS (
    SELECT id, ext_id, '', '' FROM trajectories
    UNION ALL
    SELECT id, substr(rest, 2),
        CASE WHEN substr(rest, 1, 1) BETWEEN '0' AND '9' THEN run || substr(rest, 1, 1) ELSE '' END,
        CASE WHEN substr(rest, 1, 1) BETWEEN '0' AND '9' THEN acc
             ELSE acc || CASE WHEN run = '' OR length(run) >= 20 THEN run ELSE substr('00000000000000000000' || run, -20) END || substr(rest, 1, 1) END
    FROM walk WHERE rest <> ''
)
UPDATE trajectories SET sort_key = k.key
FROM (SELECT id, acc || CASE WHEN run = '' OR length(run) >= 20 THEN run ELSE substr('00000000000000000000' || run, -20) END AS key
      FROM walk WHERE rest = '') k
WHERE trajectories.id = k.id;

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
