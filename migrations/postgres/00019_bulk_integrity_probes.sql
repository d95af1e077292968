-- The statement-level integrity checks of 00013 probe the trajectories
-- table by its primary key, once per distinct trajectory of a statement,
-- whatever the size of the table. PL/pgSQL plans a query once per
-- session and keeps the plan: planned at an import's first batch into a
-- new database, when the table held a few hundred rows, the anti-join
-- hashed a sequential scan of the table, and every later COPY of the
-- import (four a batch) scanned the whole table again, so the checks grew
-- with the square of the import's size (perf during a 35,000-trajectory
-- import: 7.5% of Postgres' CPU in that scan and its hash; with the probes
-- the checks' samples fell from 1,068 to 482 of about 8,400). OFFSET 0
-- keeps the EXISTS a subplan, so the plan is an index probe per distinct
-- trajectory, however small the table is when it is made.
-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bulk_rows_have_trajectory() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan BIGINT;
BEGIN
    SELECT n.trajectory_id INTO orphan FROM (SELECT DISTINCT trajectory_id FROM inserted) n
    WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.id = n.trajectory_id OFFSET 0) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names trajectory %, which does not exist', TG_TABLE_NAME, orphan
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bulk_rows_have_trajectory_of_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan RECORD;
BEGIN
    SELECT n.trajectory_id, n.run_id INTO orphan FROM (SELECT DISTINCT trajectory_id, run_id FROM inserted) n
    WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.id = n.trajectory_id AND t.run_id = n.run_id OFFSET 0) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names trajectory % of run %, which does not exist', TG_TABLE_NAME, orphan.trajectory_id, orphan.run_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bulk_rows_have_trajectory() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan BIGINT;
BEGIN
    SELECT n.trajectory_id INTO orphan FROM (SELECT DISTINCT trajectory_id FROM inserted) n
    WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.id = n.trajectory_id) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names trajectory %, which does not exist', TG_TABLE_NAME, orphan
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION bulk_rows_have_trajectory_of_run() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan RECORD;
BEGIN
    SELECT n.trajectory_id, n.run_id INTO orphan FROM (SELECT DISTINCT trajectory_id, run_id FROM inserted) n
    WHERE NOT EXISTS (SELECT 1 FROM trajectories t WHERE t.id = n.trajectory_id AND t.run_id = n.run_id) LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'insert into % names trajectory % of run %, which does not exist', TG_TABLE_NAME, orphan.trajectory_id, orphan.run_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
