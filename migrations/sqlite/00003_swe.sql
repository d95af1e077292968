-- SWE diagnostics (SPEC §5): SWE-bench instance metadata the diagnostics are
-- computed against, evaluation results per run, and each SWE trajectory's
-- diagnostics, computed once (grounding.DiagnoseSWE) so the comparison page
-- reads rows instead of re-parsing logs. Localization is not stored: it is
-- the recall of swe_instances.patch_files among swe_diagnostics.edited_files,
-- computed at read time, so metadata imported later applies at once.
-- See migrations.go for the conventions; postgres/00003_swe.sql is the twin.

-- +goose Up
-- One row per instance; a later import of the same id replaces it. The
-- token counts are the evidence slices' sizes (grounding.SWEEvidenceOf).
CREATE TABLE swe_instances (
    instance_id       TEXT    NOT NULL PRIMARY KEY,
    repo              TEXT    NOT NULL,
    base_commit       TEXT    NOT NULL,
    version           TEXT    NOT NULL,
    patch             TEXT    NOT NULL,
    test_patch        TEXT    NOT NULL,
    fail_to_pass      TEXT    NOT NULL, -- JSON array of test names
    pass_to_pass      TEXT    NOT NULL, -- JSON array of test names
    problem_statement TEXT    NOT NULL,
    patch_files       TEXT    NOT NULL, -- JSON array: the files patch changes
    loc_tokens        INTEGER NOT NULL,
    rep_tokens        INTEGER NOT NULL,
    patch_tokens      INTEGER NOT NULL,
    source_file       TEXT    NOT NULL,
    imported_at       TEXT    NOT NULL
) STRICT;

-- Whether a run's patch for an instance resolved it (SWE-bench harness).
CREATE TABLE swe_results (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    instance_id TEXT    NOT NULL,
    resolved    INTEGER NOT NULL CHECK (resolved IN (0, 1)),
    source_file TEXT    NOT NULL,
    imported_at TEXT    NOT NULL,
    PRIMARY KEY (run_id, instance_id)
) STRICT;

-- version is the diagnostics algorithm's (store.sweDiagnosticsVersion); rows
-- of an older version are recomputed. stages holds one letter per step
-- (L, R, P; lower case for a fall-back). NULL reproduction/verification:
-- not applicable (no steps / no source edit).
CREATE TABLE swe_diagnostics (
    trajectory_id INTEGER NOT NULL PRIMARY KEY REFERENCES trajectories (id) ON DELETE CASCADE,
    run_id        INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ext_id        TEXT    NOT NULL,
    instance_id   TEXT    NOT NULL,
    version       INTEGER NOT NULL,
    steps         INTEGER NOT NULL,
    stages        TEXT    NOT NULL,
    edited_files  TEXT    NOT NULL, -- JSON array
    reproduction  INTEGER CHECK (reproduction IN (0, 1)),
    verification  INTEGER CHECK (verification IN (0, 1)),
    completed     INTEGER NOT NULL CHECK (completed IN (0, 1))
) STRICT;
-- A run's timeline, paged by ext id, and the comparison's per-run scan.
CREATE UNIQUE INDEX swe_diagnostics_run_idx ON swe_diagnostics (run_id, ext_id);

-- +goose Down
DROP TABLE swe_diagnostics;
DROP TABLE swe_results;
DROP TABLE swe_instances;
