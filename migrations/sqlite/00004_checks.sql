-- Grounding check results (SPEC §3), stored at import and by recheck.
-- auto_verdict is the engine's; human_verdict ('' | 'pass' | 'fail') is the
-- current human verdict, derived from the adjudication history; verdict and
-- mask are the effective ones: a human verdict overrides g_t, never R_τ or the
-- workflow, so mask = R · workflow · g with g from the human when there is one.
-- +goose Up
ALTER TABLE runs ADD COLUMN n_pass       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_fail       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_ambiguous  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_queued     INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_supervised INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN n_certified  INTEGER NOT NULL DEFAULT 0;

ALTER TABLE trajectories ADD COLUMN checked_at     TEXT;
ALTER TABLE trajectories ADD COLUMN engine_version TEXT    NOT NULL DEFAULT '';
ALTER TABLE trajectories ADD COLUMN profile        TEXT    NOT NULL DEFAULT '';
ALTER TABLE trajectories ADD COLUMN workflow_ok    INTEGER NOT NULL DEFAULT 1 CHECK (workflow_ok IN (0, 1));
ALTER TABLE trajectories ADD COLUMN flow_reasons   TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE trajectories ADD COLUMN violations     TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE trajectories ADD COLUMN n_pass         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN n_fail         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN n_ambiguous    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN n_queued       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN n_supervised   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trajectories ADD COLUMN certified      INTEGER NOT NULL DEFAULT 0 CHECK (certified IN (0, 1));

ALTER TABLE decisions ADD COLUMN action       TEXT    NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN e            INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN v            INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN g            INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN flow_ok      INTEGER NOT NULL DEFAULT 1 CHECK (flow_ok IN (0, 1));
ALTER TABLE decisions ADD COLUMN auto_verdict TEXT    NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN human_verdict TEXT    NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN verdict      TEXT    NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN mask         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE decisions ADD COLUMN queued       INTEGER NOT NULL DEFAULT 0 CHECK (queued IN (0, 1));
ALTER TABLE decisions ADD COLUMN reasons      TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE decisions ADD COLUMN args         TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE decisions ADD COLUMN detail       TEXT    NOT NULL DEFAULT '';

-- One row per (decision, reason code): the run page's reason filter and the
-- per-reason counts read an index instead of parsing JSON.
CREATE TABLE decision_reasons (
    trajectory_id INTEGER NOT NULL REFERENCES trajectories (id) ON DELETE CASCADE,
    ordinal       INTEGER NOT NULL,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    reason        TEXT    NOT NULL,
    PRIMARY KEY (trajectory_id, ordinal, reason)
) STRICT;
CREATE INDEX decision_reasons_run_idx ON decision_reasons (run_id, reason, trajectory_id);
-- The verdict filter of the trajectory list.
CREATE INDEX decisions_run_verdict_idx ON decisions (run_id, verdict, trajectory_id);

-- +goose Down
DROP INDEX decisions_run_verdict_idx;
DROP TABLE decision_reasons;
ALTER TABLE decisions DROP COLUMN detail;
ALTER TABLE decisions DROP COLUMN args;
ALTER TABLE decisions DROP COLUMN reasons;
ALTER TABLE decisions DROP COLUMN queued;
ALTER TABLE decisions DROP COLUMN mask;
ALTER TABLE decisions DROP COLUMN verdict;
ALTER TABLE decisions DROP COLUMN human_verdict;
ALTER TABLE decisions DROP COLUMN auto_verdict;
ALTER TABLE decisions DROP COLUMN flow_ok;
ALTER TABLE decisions DROP COLUMN g;
ALTER TABLE decisions DROP COLUMN v;
ALTER TABLE decisions DROP COLUMN e;
ALTER TABLE decisions DROP COLUMN action;
ALTER TABLE trajectories DROP COLUMN certified;
ALTER TABLE trajectories DROP COLUMN n_supervised;
ALTER TABLE trajectories DROP COLUMN n_queued;
ALTER TABLE trajectories DROP COLUMN n_ambiguous;
ALTER TABLE trajectories DROP COLUMN n_fail;
ALTER TABLE trajectories DROP COLUMN n_pass;
ALTER TABLE trajectories DROP COLUMN violations;
ALTER TABLE trajectories DROP COLUMN flow_reasons;
ALTER TABLE trajectories DROP COLUMN workflow_ok;
ALTER TABLE trajectories DROP COLUMN profile;
ALTER TABLE trajectories DROP COLUMN engine_version;
ALTER TABLE trajectories DROP COLUMN checked_at;
ALTER TABLE runs DROP COLUMN n_certified;
ALTER TABLE runs DROP COLUMN n_supervised;
ALTER TABLE runs DROP COLUMN n_queued;
ALTER TABLE runs DROP COLUMN n_ambiguous;
ALTER TABLE runs DROP COLUMN n_fail;
ALTER TABLE runs DROP COLUMN n_pass;
