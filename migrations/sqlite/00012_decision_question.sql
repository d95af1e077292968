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
ALTER TABLE decisions ADD COLUMN question TEXT NOT NULL DEFAULT '[]';
UPDATE decisions SET question = s.question
FROM (SELECT rowid AS id,
        (SELECT json_group_array(json(e.value)) FROM json_each(args) e
         WHERE json_extract(e.value, '$.status') NOT IN ('literal', 'normalized', 'derived', 'enum', 'free_text')) AS question
      FROM decisions) s
WHERE s.question <> '[]' AND decisions.rowid = s.id;

-- +goose Down
ALTER TABLE decisions DROP COLUMN question;
