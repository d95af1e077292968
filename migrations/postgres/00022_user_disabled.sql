-- An admin can disable an account (issue: security audit): its sessions are
-- deleted and its API tokens revoked at once, and it can no longer log in.
-- NULL: the account is enabled. Disabling keeps the row, so the account's
-- verdicts, notes and tokens keep naming who made them.
-- +goose Up
ALTER TABLE users ADD COLUMN disabled_at TIMESTAMPTZ;

-- +goose Down
ALTER TABLE users DROP COLUMN disabled_at;
