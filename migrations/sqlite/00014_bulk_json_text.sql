-- The bulk tables' JSON as text, and one index fewer on messages (issue:
-- scale). SQLite always stored JSON as TEXT; the Postgres migration of this
-- number makes Postgres do the same. Both drop messages_visible_idx, which
-- duplicated the primary key (trajectory_id, idx): its readers ask for one
-- trajectory's messages below an index, a range of the primary key with a
-- filter over a few dozen rows.
-- +goose Up
DROP INDEX messages_visible_idx;

-- +goose Down
CREATE INDEX messages_visible_idx ON messages (trajectory_id, hidden, idx);
