-- Human adjudication (issue: adjudication studio). Verdicts are append-only
-- events; decisions.human_verdict / decided_by / decided_at are the current
-- verdict derived from them (kept in the same transaction as the event), so
-- pages and exports read one row per decision.
-- +goose Up
ALTER TABLE runs ADD COLUMN overlap INTEGER NOT NULL DEFAULT 1 CHECK (overlap >= 1);

ALTER TABLE decisions ADD COLUMN decided_by INTEGER REFERENCES users (id);
ALTER TABLE decisions ADD COLUMN decided_at TEXT;

-- One item per decision that needs (or needed) a human look.
CREATE TABLE queue_items (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,
    source        TEXT    NOT NULL CHECK (source IN ('auto', 'manual')),
    why           TEXT    NOT NULL DEFAULT '[]', -- JSON: reason codes (auto) or the lead's note (manual)
    priority      INTEGER NOT NULL DEFAULT 0,    -- higher first: value of a human verdict here
    required      INTEGER NOT NULL DEFAULT 1,    -- k independent verdicts
    state         TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'conflict', 'done')),
    created_at    TEXT    NOT NULL,
    created_by    INTEGER REFERENCES users (id),
    UNIQUE (trajectory_id, ordinal)
) STRICT;
CREATE INDEX queue_items_next_idx ON queue_items (state, priority DESC, created_at, id);
CREATE INDEX queue_items_run_idx  ON queue_items (run_id, state);

-- A server-side lease on an item by one annotator.
CREATE TABLE claims (
    item_id    INTEGER NOT NULL REFERENCES queue_items (id) ON DELETE CASCADE,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    claimed_at TEXT    NOT NULL,
    expires_at TEXT    NOT NULL,
    PRIMARY KEY (item_id, user_id)
) STRICT;
CREATE INDEX claims_expiry_idx ON claims (expires_at);

-- Every change of a label, never updated or deleted.
CREATE TABLE verdict_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    item_id       INTEGER REFERENCES queue_items (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,
    user_id       INTEGER NOT NULL REFERENCES users (id),
    kind          TEXT    NOT NULL CHECK (kind IN ('verdict', 'undo', 'final', 'skip', 'note', 'enqueue')),
    verdict       TEXT    NOT NULL DEFAULT '' CHECK (verdict IN ('', 'pass', 'fail')),
    prev_verdict  TEXT    NOT NULL DEFAULT '' CHECK (prev_verdict IN ('', 'pass', 'fail')),
    note          TEXT    NOT NULL DEFAULT '',
    undoes        INTEGER REFERENCES verdict_events (id),
    created_at    TEXT    NOT NULL
) STRICT;
CREATE INDEX verdict_events_decision_idx ON verdict_events (trajectory_id, ordinal, id);
CREATE INDEX verdict_events_user_idx     ON verdict_events (user_id, created_at);
CREATE INDEX verdict_events_item_idx     ON verdict_events (item_id, id);

-- +goose Down
DROP TABLE verdict_events;
DROP TABLE claims;
DROP TABLE queue_items;
ALTER TABLE decisions DROP COLUMN decided_at;
ALTER TABLE decisions DROP COLUMN decided_by;
ALTER TABLE runs DROP COLUMN overlap;
