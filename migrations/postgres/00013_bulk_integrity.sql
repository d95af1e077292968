-- Referential integrity of the bulk tables, set by set (issue: scale).
-- messages, decisions, decision_reasons and coverage_paths get hundreds of
-- thousands of rows per import, written by COPY in the same transaction as
-- the trajectories they belong to. Their foreign keys were checked row by
-- row, each check a query of its own: 1.2 million of them for a 35,000-
-- trajectory import, 9 of the 17 s of CPU Postgres spent on it (the same
-- rows into bare tables by COPY take 1.7 s). The same guarantees now hold
-- through statement-level triggers that see each statement's rows at once:
--
--   - every row inserted must name an existing trajectory, and for the
--     tables that carry run_id, that trajectory's run (stronger than the
--     two keys were: run_id was only checked to exist). One anti-join per
--     COPY of a batch, over the batch's distinct trajectories (a few
--     hundred, for thousands of rows), instead of a lookup per row.
--   - trajectory_id and run_id cannot be changed by an UPDATE (nothing
--     changes them; a foreign key would have re-checked them).
--   - deleting trajectories deletes their rows in these tables, as ON
--     DELETE CASCADE did (deleting a run still cascades to its
--     trajectories through their own foreign key, which stays).
--
-- SQLite checks a foreign key with an index probe inside the statement;
-- its keys stay, and its migration is empty.
-- +goose Up
ALTER TABLE messages DROP CONSTRAINT messages_trajectory_id_fkey;
ALTER TABLE decisions DROP CONSTRAINT decisions_trajectory_id_fkey;
ALTER TABLE decisions DROP CONSTRAINT decisions_run_id_fkey;
ALTER TABLE decision_reasons DROP CONSTRAINT decision_reasons_trajectory_id_fkey;
ALTER TABLE decision_reasons DROP CONSTRAINT decision_reasons_run_id_fkey;
ALTER TABLE coverage_paths DROP CONSTRAINT coverage_paths_trajectory_id_fkey;
ALTER TABLE coverage_paths DROP CONSTRAINT coverage_paths_run_id_fkey;

-- +goose StatementBegin
CREATE FUNCTION bulk_rows_have_trajectory() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE FUNCTION bulk_rows_have_trajectory_of_run() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- +goose StatementBegin
CREATE FUNCTION bulk_keys_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the trajectory and run of a row of % cannot change', TG_TABLE_NAME
        USING ERRCODE = 'foreign_key_violation';
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION trajectories_delete_bulk_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM messages WHERE trajectory_id IN (SELECT id FROM deleted);
    DELETE FROM decision_reasons WHERE trajectory_id IN (SELECT id FROM deleted);
    DELETE FROM decisions WHERE trajectory_id IN (SELECT id FROM deleted);
    DELETE FROM coverage_paths WHERE trajectory_id IN (SELECT id FROM deleted);
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER messages_have_trajectory AFTER INSERT ON messages
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION bulk_rows_have_trajectory();
CREATE TRIGGER decisions_have_trajectory AFTER INSERT ON decisions
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION bulk_rows_have_trajectory_of_run();
CREATE TRIGGER decision_reasons_have_trajectory AFTER INSERT ON decision_reasons
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION bulk_rows_have_trajectory_of_run();
CREATE TRIGGER coverage_paths_have_trajectory AFTER INSERT ON coverage_paths
    REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION bulk_rows_have_trajectory_of_run();

CREATE TRIGGER messages_keys_immutable BEFORE UPDATE OF trajectory_id ON messages
    FOR EACH ROW WHEN (NEW.trajectory_id IS DISTINCT FROM OLD.trajectory_id) EXECUTE FUNCTION bulk_keys_immutable();
CREATE TRIGGER decisions_keys_immutable BEFORE UPDATE OF trajectory_id, run_id ON decisions
    FOR EACH ROW WHEN (NEW.trajectory_id IS DISTINCT FROM OLD.trajectory_id OR NEW.run_id IS DISTINCT FROM OLD.run_id)
    EXECUTE FUNCTION bulk_keys_immutable();
CREATE TRIGGER decision_reasons_keys_immutable BEFORE UPDATE OF trajectory_id, run_id ON decision_reasons
    FOR EACH ROW WHEN (NEW.trajectory_id IS DISTINCT FROM OLD.trajectory_id OR NEW.run_id IS DISTINCT FROM OLD.run_id)
    EXECUTE FUNCTION bulk_keys_immutable();
CREATE TRIGGER coverage_paths_keys_immutable BEFORE UPDATE OF trajectory_id, run_id ON coverage_paths
    FOR EACH ROW WHEN (NEW.trajectory_id IS DISTINCT FROM OLD.trajectory_id OR NEW.run_id IS DISTINCT FROM OLD.run_id)
    EXECUTE FUNCTION bulk_keys_immutable();

CREATE TRIGGER trajectories_delete_bulk_rows AFTER DELETE ON trajectories
    REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION trajectories_delete_bulk_rows();

-- +goose Down
DROP TRIGGER trajectories_delete_bulk_rows ON trajectories;
DROP TRIGGER coverage_paths_keys_immutable ON coverage_paths;
DROP TRIGGER decision_reasons_keys_immutable ON decision_reasons;
DROP TRIGGER decisions_keys_immutable ON decisions;
DROP TRIGGER messages_keys_immutable ON messages;
DROP TRIGGER coverage_paths_have_trajectory ON coverage_paths;
DROP TRIGGER decision_reasons_have_trajectory ON decision_reasons;
DROP TRIGGER decisions_have_trajectory ON decisions;
DROP TRIGGER messages_have_trajectory ON messages;
DROP FUNCTION trajectories_delete_bulk_rows();
DROP FUNCTION bulk_keys_immutable();
DROP FUNCTION bulk_rows_have_trajectory_of_run();
DROP FUNCTION bulk_rows_have_trajectory();
ALTER TABLE coverage_paths ADD CONSTRAINT coverage_paths_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE coverage_paths ADD CONSTRAINT coverage_paths_trajectory_id_fkey FOREIGN KEY (trajectory_id) REFERENCES trajectories (id) ON DELETE CASCADE;
ALTER TABLE decision_reasons ADD CONSTRAINT decision_reasons_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE decision_reasons ADD CONSTRAINT decision_reasons_trajectory_id_fkey FOREIGN KEY (trajectory_id) REFERENCES trajectories (id) ON DELETE CASCADE;
ALTER TABLE decisions ADD CONSTRAINT decisions_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE decisions ADD CONSTRAINT decisions_trajectory_id_fkey FOREIGN KEY (trajectory_id) REFERENCES trajectories (id) ON DELETE CASCADE;
ALTER TABLE messages ADD CONSTRAINT messages_trajectory_id_fkey FOREIGN KEY (trajectory_id) REFERENCES trajectories (id) ON DELETE CASCADE;
