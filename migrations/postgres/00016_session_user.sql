-- The signed-in user's id beside the session data, so that finding a
-- session reads its user in the same statement (a join on the primary key
-- of users) instead of a second round trip on every request. It is written
-- with the session (the web layer reads it from the session data) and is
-- NULL for sessions without a user and for those written before it: those
-- read the user as before.
-- +goose Up
ALTER TABLE sessions ADD COLUMN user_id BIGINT;

-- +goose Down
ALTER TABLE sessions DROP COLUMN user_id;
