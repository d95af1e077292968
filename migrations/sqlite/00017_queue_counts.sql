-- The queue's items counted by run and state, so the review screen and the
-- queue page read their progress line from a row instead of counting the
-- whole queue on every view. Triggers keep the counts, so no write path can
-- forget them. Postgres keeps rows of differences (a settlement never
-- queues behind a hot row); SQLite's writer is alone, so here each run has
-- one row, moved in place. Readers sum a run's rows either way.
-- +goose Up
CREATE TABLE queue_counts (
    run_id     INTEGER PRIMARY KEY,
    n_open     INTEGER NOT NULL DEFAULT 0,
    n_conflict INTEGER NOT NULL DEFAULT 0,
    n_done     INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO queue_counts (run_id, n_open, n_conflict, n_done)
SELECT run_id, SUM(state = 'open'), SUM(state = 'conflict'), SUM(state = 'done')
FROM queue_items GROUP BY run_id;

-- +goose StatementBegin
CREATE TRIGGER queue_items_counted_insert AFTER INSERT ON queue_items
BEGIN
    INSERT INTO queue_counts (run_id, n_open, n_conflict, n_done)
    VALUES (NEW.run_id, NEW.state = 'open', NEW.state = 'conflict', NEW.state = 'done')
    ON CONFLICT (run_id) DO UPDATE SET n_open = n_open + excluded.n_open,
        n_conflict = n_conflict + excluded.n_conflict, n_done = n_done + excluded.n_done;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER queue_items_counted_delete AFTER DELETE ON queue_items
BEGIN
    UPDATE queue_counts SET n_open = n_open - (OLD.state = 'open'),
        n_conflict = n_conflict - (OLD.state = 'conflict'), n_done = n_done - (OLD.state = 'done')
    WHERE run_id = OLD.run_id;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER queue_items_counted_move AFTER UPDATE OF state, run_id ON queue_items
WHEN OLD.state IS NOT NEW.state OR OLD.run_id IS NOT NEW.run_id
BEGIN
    UPDATE queue_counts SET n_open = n_open - (OLD.state = 'open'),
        n_conflict = n_conflict - (OLD.state = 'conflict'), n_done = n_done - (OLD.state = 'done')
    WHERE run_id = OLD.run_id;
    INSERT INTO queue_counts (run_id, n_open, n_conflict, n_done)
    VALUES (NEW.run_id, NEW.state = 'open', NEW.state = 'conflict', NEW.state = 'done')
    ON CONFLICT (run_id) DO UPDATE SET n_open = n_open + excluded.n_open,
        n_conflict = n_conflict + excluded.n_conflict, n_done = n_done + excluded.n_done;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER queue_items_counted_move;
DROP TRIGGER queue_items_counted_delete;
DROP TRIGGER queue_items_counted_insert;
DROP TABLE queue_counts;
