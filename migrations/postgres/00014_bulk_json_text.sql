-- The bulk tables' JSON as text, and one index fewer on messages (issue:
-- scale). On a 35,000-trajectory import Postgres spent a tenth of its CPU
-- validating JSON it was handed (117 MB of decision evidence, every
-- trajectory's tool schemas, every tool call) and parsing reason lists and
-- path steps into JSONB, and a third maintaining 3.5 million index entries.
-- Every one of these values is written by groundwork's own encoders (the
-- importer has already decoded and validated the log, and tests pin the
-- encoders to encoding/json byte for byte); nothing queries inside them
-- (the store reads them whole and decodes in Go, as it does on SQLite,
-- where they were always TEXT). So they are TEXT here too, and a read
-- returns the bytes that were written in both dialects.
--
-- messages_visible_idx (trajectory_id, hidden, idx) duplicated the primary
-- key (trajectory_id, idx): its readers ask for one trajectory's messages
-- below an index, visible or hidden, which is a range of the primary key
-- with a filter over a few dozen rows. It cost 700,000 index entries per
-- 35,000 trajectories.
--
-- Changing a column's type rewrites its table: on a large existing
-- database this migration takes as long as copying those tables once.
-- +goose Up
DROP INDEX messages_visible_idx;
ALTER TABLE messages ALTER COLUMN tool_calls TYPE TEXT;
ALTER TABLE decisions
    ALTER COLUMN args DROP DEFAULT, ALTER COLUMN args TYPE TEXT, ALTER COLUMN args SET DEFAULT '[]',
    ALTER COLUMN question DROP DEFAULT, ALTER COLUMN question TYPE TEXT, ALTER COLUMN question SET DEFAULT '[]',
    ALTER COLUMN reasons DROP DEFAULT, ALTER COLUMN reasons TYPE TEXT, ALTER COLUMN reasons SET DEFAULT '[]';
ALTER TABLE trajectories
    ALTER COLUMN tools TYPE TEXT, ALTER COLUMN hidden TYPE TEXT, ALTER COLUMN meta TYPE TEXT,
    ALTER COLUMN flow_reasons DROP DEFAULT, ALTER COLUMN flow_reasons TYPE TEXT, ALTER COLUMN flow_reasons SET DEFAULT '[]',
    ALTER COLUMN violations DROP DEFAULT, ALTER COLUMN violations TYPE TEXT, ALTER COLUMN violations SET DEFAULT '[]';
ALTER TABLE queue_items
    ALTER COLUMN why DROP DEFAULT, ALTER COLUMN why TYPE TEXT, ALTER COLUMN why SET DEFAULT '[]';
ALTER TABLE coverage_paths ALTER COLUMN steps TYPE TEXT;

-- +goose Down
ALTER TABLE coverage_paths ALTER COLUMN steps TYPE JSONB USING steps::jsonb;
ALTER TABLE queue_items
    ALTER COLUMN why DROP DEFAULT, ALTER COLUMN why TYPE JSONB USING why::jsonb, ALTER COLUMN why SET DEFAULT '[]';
ALTER TABLE trajectories
    ALTER COLUMN tools TYPE JSON USING tools::json, ALTER COLUMN hidden TYPE JSON USING hidden::json, ALTER COLUMN meta TYPE JSON USING meta::json,
    ALTER COLUMN flow_reasons DROP DEFAULT, ALTER COLUMN flow_reasons TYPE JSONB USING flow_reasons::jsonb, ALTER COLUMN flow_reasons SET DEFAULT '[]',
    ALTER COLUMN violations DROP DEFAULT, ALTER COLUMN violations TYPE JSONB USING violations::jsonb, ALTER COLUMN violations SET DEFAULT '[]';
ALTER TABLE decisions
    ALTER COLUMN args DROP DEFAULT, ALTER COLUMN args TYPE JSON USING args::json, ALTER COLUMN args SET DEFAULT '[]',
    ALTER COLUMN question DROP DEFAULT, ALTER COLUMN question TYPE JSON USING question::json, ALTER COLUMN question SET DEFAULT '[]',
    ALTER COLUMN reasons DROP DEFAULT, ALTER COLUMN reasons TYPE JSONB USING reasons::jsonb, ALTER COLUMN reasons SET DEFAULT '[]';
ALTER TABLE messages ALTER COLUMN tool_calls TYPE JSON USING tool_calls::json;
CREATE INDEX messages_visible_idx ON messages (trajectory_id, hidden, idx);
