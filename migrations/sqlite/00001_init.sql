-- Initial schema: accounts, web sessions, runs and the imported trajectories
-- with their messages and decisions. See migrations.go for the conventions
-- (times, booleans, JSON) shared with postgres/00001_init.sql.
-- STRICT tables make SQLite reject a value of the wrong type instead of
-- storing it silently, which keeps the two dialects honest.

-- +goose Up
CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    role          TEXT    NOT NULL CHECK (role IN ('admin', 'researcher', 'annotator')),
    password_hash BLOB    NOT NULL,
    created_at    TEXT    NOT NULL
) STRICT;

-- scs sessions (github.com/alexedwards/scs/v2).
CREATE TABLE sessions (
    token  TEXT PRIMARY KEY,
    data   BLOB NOT NULL,
    expiry TEXT NOT NULL
) STRICT;
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

-- Counters are maintained by the import transaction so the runs page never
-- counts over the pool.
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL UNIQUE,
    created_at   TEXT    NOT NULL,
    trajectories INTEGER NOT NULL DEFAULT 0,
    successes    INTEGER NOT NULL DEFAULT 0,
    decisions    INTEGER NOT NULL DEFAULT 0,
    tool_calls   INTEGER NOT NULL DEFAULT 0,
    messages     INTEGER NOT NULL DEFAULT 0,
    imports      INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One imported file. sha256 is unique: the same content is imported once.
CREATE TABLE imports (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    file         TEXT    NOT NULL,
    format       TEXT    NOT NULL,
    sha256       TEXT    NOT NULL UNIQUE,
    bytes        INTEGER NOT NULL,
    trajectories INTEGER NOT NULL DEFAULT 0,
    messages     INTEGER NOT NULL DEFAULT 0,
    decisions    INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT    NOT NULL
) STRICT;
CREATE INDEX imports_run_idx ON imports (run_id);

CREATE TABLE trajectories (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    import_id    INTEGER NOT NULL REFERENCES imports (id) ON DELETE CASCADE,
    ext_id       TEXT    NOT NULL,
    parent_id    TEXT    NOT NULL,
    domain       TEXT    NOT NULL,
    success      INTEGER NOT NULL CHECK (success IN (0, 1)),
    reward       REAL,
    n_messages   INTEGER NOT NULL,
    n_decisions  INTEGER NOT NULL,
    n_tool_calls INTEGER NOT NULL,
    n_errors     INTEGER NOT NULL,
    source_file  TEXT    NOT NULL,
    source_index INTEGER NOT NULL,
    source_line  INTEGER NOT NULL,
    format       TEXT    NOT NULL,
    request      TEXT    NOT NULL,
    tools        TEXT    NOT NULL, -- JSON array of tool schemas
    hidden       TEXT    NOT NULL, -- JSON array of hidden entries
    meta         TEXT,             -- JSON or NULL
    -- Doubles as the keyset index of the unfiltered list.
    UNIQUE (run_id, ext_id)
) STRICT;
CREATE INDEX trajectories_run_success_idx ON trajectories (run_id, success, ext_id);
CREATE INDEX trajectories_run_domain_idx  ON trajectories (run_id, domain, ext_id);
CREATE INDEX trajectories_import_idx      ON trajectories (import_id);

-- idx is the message's position in the trajectory.
CREATE TABLE messages (
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    idx           INTEGER NOT NULL,
    role          TEXT    NOT NULL,
    content       TEXT    NOT NULL,
    content_null  INTEGER NOT NULL CHECK (content_null IN (0, 1)),
    tool_calls    TEXT,             -- JSON array or NULL
    tool_call_id  TEXT    NOT NULL,
    name          TEXT    NOT NULL,
    is_error      INTEGER NOT NULL CHECK (is_error IN (0, 1)),
    hidden        INTEGER NOT NULL CHECK (hidden IN (0, 1)),
    hidden_kind   TEXT    NOT NULL,
    PRIMARY KEY (trajectory_id, idx)
) STRICT;
-- The visible history before a decision, without scanning hidden messages.
CREATE INDEX messages_visible_idx ON messages (trajectory_id, hidden, idx);

-- grounding.Decisions of each trajectory, computed once at import.
-- call_idx -1: a text reply; observation_idx -1: no observation.
CREATE TABLE decisions (
    trajectory_id   INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ordinal         INTEGER NOT NULL,
    message_idx     INTEGER NOT NULL,
    call_idx        INTEGER NOT NULL,
    tool            TEXT    NOT NULL,
    observation_idx INTEGER NOT NULL,
    is_error        INTEGER NOT NULL CHECK (is_error IN (0, 1)),
    PRIMARY KEY (trajectory_id, ordinal)
) STRICT;
-- The tool filter of the trajectory list and the tool facet of a run.
CREATE INDEX decisions_run_tool_idx ON decisions (run_id, tool, trajectory_id);

-- +goose Down
DROP TABLE decisions;
DROP TABLE messages;
DROP TABLE trajectories;
DROP TABLE imports;
DROP TABLE runs;
DROP TABLE sessions;
DROP TABLE users;
