-- SWE diagnostics (SPEC §5): SWE-bench instance metadata the diagnostics are
-- computed against, evaluation results per run, and each SWE trajectory's
-- diagnostics, computed once (grounding.DiagnoseSWE) so the comparison page
-- reads rows instead of re-parsing logs. Localization is not stored: it is
-- the recall of swe_instances.patch_files among swe_diagnostics.edited_files,
-- computed at read time, so metadata imported later applies at once.
-- See migrations.go for the conventions; sqlite/00003_swe.sql is the twin.

-- +goose Up
-- One row per instance; a later import of the same id replaces it. The
-- token counts are the evidence slices' sizes (grounding.SWEEvidenceOf).
-- Test-name lists are JSON (not JSONB) as they are copied from the metadata.
CREATE TABLE swe_instances (
    instance_id       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    repo              TEXT             NOT NULL,
    base_commit       TEXT             NOT NULL,
    version           TEXT             NOT NULL,
    patch             TEXT             NOT NULL,
    test_patch        TEXT             NOT NULL,
    fail_to_pass      JSON             NOT NULL,
    pass_to_pass      JSON             NOT NULL,
    problem_statement TEXT             NOT NULL,
    patch_files       JSONB            NOT NULL,
    loc_tokens        BIGINT           NOT NULL,
    rep_tokens        BIGINT           NOT NULL,
    patch_tokens      BIGINT           NOT NULL,
    source_file       TEXT             NOT NULL,
    imported_at       TIMESTAMPTZ      NOT NULL
);

-- Whether a run's patch for an instance resolved it (SWE-bench harness).
CREATE TABLE swe_results (
    run_id      BIGINT           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    instance_id TEXT COLLATE "C" NOT NULL,
    resolved    BOOLEAN          NOT NULL,
    source_file TEXT             NOT NULL,
    imported_at TIMESTAMPTZ      NOT NULL,
    PRIMARY KEY (run_id, instance_id)
);

-- version is the diagnostics algorithm's (store.sweDiagnosticsVersion); rows
-- of an older version are recomputed. stages holds one letter per step
-- (L, R, P; lower case for a fall-back). NULL reproduction/verification:
-- not applicable (no steps / no source edit).
CREATE TABLE swe_diagnostics (
    trajectory_id BIGINT           NOT NULL PRIMARY KEY REFERENCES trajectories (id) ON DELETE CASCADE,
    run_id        BIGINT           NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    ext_id        TEXT COLLATE "C" NOT NULL,
    instance_id   TEXT COLLATE "C" NOT NULL,
    version       BIGINT           NOT NULL,
    steps         BIGINT           NOT NULL,
    stages        TEXT             NOT NULL,
    edited_files  JSONB            NOT NULL,
    reproduction  BOOLEAN,
    verification  BOOLEAN,
    completed     BOOLEAN          NOT NULL
);
-- A run's timeline, paged by ext id, and the comparison's per-run scan.
CREATE UNIQUE INDEX swe_diagnostics_run_idx ON swe_diagnostics (run_id, ext_id);

-- +goose Down
DROP TABLE swe_diagnostics;
DROP TABLE swe_results;
DROP TABLE swe_instances;
