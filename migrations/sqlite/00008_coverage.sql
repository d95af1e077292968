-- Coverage (issue 5, SPEC §4): canonical paths per trajectory, the model
-- scales of the project, and saved views (named selections of parents).
--
-- What invalidates the coverage pages' cache, per run: an import changes
-- runs.trajectories; a recheck bumps runs.coverage_version; and the
-- triggers below append to coverage_changes, in the same transaction, for
-- every change of a decision's effective mask or of a trajectory's success
-- or workflow flag, whichever code makes it (a recheck, a human verdict, a
-- settlement), and mark the trajectory's coverage row stale. Appending
-- rather than bumping a counter on runs keeps concurrent verdicts of one
-- run from waiting on one row. The pages cache their aggregates per (runs,
-- trajectories, coverage_version, max coverage_changes id, scale) in
-- memory and read only these while nothing changed.
--
-- coverage_paths has one row per trajectory: steps is the JSON list of
-- grounding.PathStep, one per decision, independent of verdicts (written at
-- import and recheck); path is the canonical key over the current effective
-- masks ('' unless certified), path_id its grounding.PathID, supervised the
-- decisions with mask 1 and tokens the certified target tokens
-- (grounding.CertifiedTokens). stale = 1 says a mask or the trajectory's
-- eligibility changed since path was computed: readers derive the path
-- again from steps and the current masks (store/coverage.go).
--
-- Views: coverage_views holds what was selected and how; coverage_view_runs
-- the runs the view covers, with the view's name (unique per run);
-- coverage_view_members the certified trajectories of the selected parents
-- at save time, with their parent and the stage that picked it. Exports
-- restrict to a view by joining coverage_view_members on trajectory_id
-- (store.DB.ViewByName and ViewTrajectoryIDs).
-- +goose Up
ALTER TABLE runs ADD COLUMN coverage_version INTEGER NOT NULL DEFAULT 0;

CREATE TABLE coverage_paths (
    trajectory_id INTEGER PRIMARY KEY REFERENCES trajectories (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    steps         TEXT    NOT NULL,
    path          TEXT    NOT NULL DEFAULT '',
    path_id       TEXT    NOT NULL DEFAULT '',
    supervised    INTEGER NOT NULL DEFAULT 0,
    tokens        INTEGER NOT NULL DEFAULT 0,
    stale         INTEGER NOT NULL DEFAULT 0 CHECK (stale IN (0, 1))
) STRICT;
CREATE INDEX coverage_paths_run_idx ON coverage_paths (run_id, trajectory_id);

CREATE TABLE coverage_changes (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE
) STRICT;
CREATE INDEX coverage_changes_run_idx ON coverage_changes (run_id, id);
CREATE INDEX coverage_changes_trajectory_idx ON coverage_changes (trajectory_id);

-- +goose StatementBegin
CREATE TRIGGER decisions_mask_coverage AFTER UPDATE OF mask ON decisions
WHEN NEW.mask IS NOT OLD.mask
BEGIN
    UPDATE coverage_paths SET stale = 1 WHERE trajectory_id = NEW.trajectory_id AND stale = 0;
    INSERT INTO coverage_changes (run_id, trajectory_id) VALUES (NEW.run_id, NEW.trajectory_id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER trajectories_eligible_coverage AFTER UPDATE OF success, workflow_ok ON trajectories
WHEN NEW.success IS NOT OLD.success OR NEW.workflow_ok IS NOT OLD.workflow_ok
BEGIN
    UPDATE coverage_paths SET stale = 1 WHERE trajectory_id = NEW.id AND stale = 0;
    INSERT INTO coverage_changes (run_id, trajectory_id) VALUES (NEW.run_id, NEW.id);
END;
-- +goose StatementEnd

CREATE TABLE coverage_scales (
    name     TEXT    PRIMARY KEY,
    depth    INTEGER NOT NULL CHECK (depth BETWEEN 1 AND 1000),
    position INTEGER NOT NULL
) STRICT;
INSERT INTO coverage_scales (name, depth, position) VALUES
    ('1.7B', 1, 1), ('4B', 2, 2), ('8B', 3, 3), ('14B', 4, 4), ('30B-A3B', 8, 5);

CREATE TABLE coverage_views (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT    NOT NULL,
    scale        TEXT    NOT NULL,
    depth        INTEGER NOT NULL,
    budget       INTEGER NOT NULL,
    method       TEXT    NOT NULL CHECK (method IN ('structured', 'random')),
    seed         INTEGER NOT NULL DEFAULT 0,
    parents      INTEGER NOT NULL,
    trajectories INTEGER NOT NULL,
    created_by   INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at   TEXT    NOT NULL
) STRICT;

CREATE TABLE coverage_view_runs (
    view_id INTEGER NOT NULL REFERENCES coverage_views (id) ON DELETE CASCADE,
    run_id  INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name    TEXT    NOT NULL,
    PRIMARY KEY (view_id, run_id),
    UNIQUE (run_id, name)
) STRICT;

CREATE TABLE coverage_view_members (
    view_id       INTEGER NOT NULL REFERENCES coverage_views (id) ON DELETE CASCADE,
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    parent_id     TEXT    NOT NULL,
    stage         TEXT    NOT NULL,
    PRIMARY KEY (view_id, trajectory_id)
) STRICT;
CREATE INDEX coverage_view_members_run_idx ON coverage_view_members (view_id, run_id, trajectory_id);

-- +goose Down
DROP TRIGGER trajectories_eligible_coverage;
DROP TRIGGER decisions_mask_coverage;
DROP TABLE coverage_view_members;
DROP TABLE coverage_view_runs;
DROP TABLE coverage_views;
DROP TABLE coverage_scales;
DROP TABLE coverage_changes;
DROP TABLE coverage_paths;
ALTER TABLE runs DROP COLUMN coverage_version;
