-- Adjudication, continued: each claim row also remembers what its annotator
-- did with the item in the current round (a standing verdict, or a skip), so
-- handing out the next item reads one small table per candidate instead of
-- replaying events. verdict_events stays the history; these columns are
-- derived from it in the same transaction.
-- +goose Up
ALTER TABLE claims ADD COLUMN verdict TEXT    NOT NULL DEFAULT '' CHECK (verdict IN ('', 'pass', 'fail'));
ALTER TABLE claims ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1));
-- The annotator's open claim, and "mine today".
CREATE INDEX claims_user_idx ON claims (user_id, verdict, expires_at);
-- "Is this event undone?" without scanning a decision's events.
CREATE INDEX verdict_events_undoes_idx ON verdict_events (undoes);
-- The next item of one run, in queue order, without sorting the run.
CREATE INDEX queue_items_run_next_idx ON queue_items (run_id, state, priority DESC, created_at, id);

-- +goose Down
DROP INDEX queue_items_run_next_idx;
DROP INDEX verdict_events_undoes_idx;
DROP INDEX claims_user_idx;
ALTER TABLE claims DROP COLUMN skipped;
ALTER TABLE claims DROP COLUMN verdict;
