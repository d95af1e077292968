-- The distinct domains and tools of each run, kept at import time so the run
-- page's filter menus never scan a run's decisions (SELECT DISTINCT tool over
-- 200,000 decision rows took 80 ms on Postgres at 50,000 trajectories).
-- +goose Up
CREATE TABLE run_facets (
    run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind   TEXT    NOT NULL CHECK (kind IN ('domain', 'tool')),
    value  TEXT    NOT NULL,
    PRIMARY KEY (run_id, kind, value)
) STRICT;
INSERT INTO run_facets (run_id, kind, value)
    SELECT DISTINCT run_id, 'domain', domain FROM trajectories WHERE domain <> '';
INSERT INTO run_facets (run_id, kind, value)
    SELECT DISTINCT run_id, 'tool', tool FROM decisions WHERE tool <> '';

-- +goose Down
DROP TABLE run_facets;
