-- The arguments in question (issue: scale). A queue list shows, for each
-- item, the arguments whose evidence left the decision to a human
-- (grounding.InQuestion); it read every argument's evidence (1.3 KB a
-- decision) and decoded it to keep one or two, 40% of the queue page's
-- CPU. question holds just those, as a JSON array in argument order,
-- written with args at import and recheck. The backfill keeps the
-- arguments whose status is not among grounding.SettledStatuses (the
-- statuses below), exactly what InQuestion keeps; it rewrites only the
-- rows where that list is not empty.
-- +goose Up
ALTER TABLE decisions ADD COLUMN question JSON NOT NULL DEFAULT '[]';
ALTER TABLE decisions ALTER COLUMN question SET STATISTICS 0;
UPDATE decisions SET question = s.question
FROM (SELECT trajectory_id, ordinal,
        (SELECT json_agg(a.e ORDER BY a.n) FROM json_array_elements(args) WITH ORDINALITY AS a(e, n)
         WHERE a.e->>'status' NOT IN ('literal', 'normalized', 'derived', 'enum', 'free_text')) AS question
      FROM decisions) s
WHERE s.question IS NOT NULL AND decisions.trajectory_id = s.trajectory_id AND decisions.ordinal = s.ordinal;

-- +goose Down
ALTER TABLE decisions DROP COLUMN question;
