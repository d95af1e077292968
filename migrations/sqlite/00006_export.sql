-- Personal API tokens for scripted exports (issue: export). A token is 32
-- random bytes shown once; only its SHA-256 is kept. A fast hash is enough
-- because the secret has 256 bits of entropy (nothing to brute-force, unlike
-- a password), and it lets a request find its token by an indexed lookup.
-- prefix (the token's first characters) tells tokens apart in the UI.
-- +goose Up
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL DEFAULT '',
    prefix       TEXT    NOT NULL,
    hash         BLOB    NOT NULL UNIQUE,
    created_at   TEXT    NOT NULL,
    last_used_at TEXT,
    revoked_at   TEXT
) STRICT;
CREATE INDEX api_tokens_user_idx ON api_tokens (user_id, created_at);

-- +goose Down
DROP TABLE api_tokens;
