-- Exports (issue: export) read, for every trajectory, which messages are
-- supervised: a message is when each of its decisions has mask 1 (and the
-- verdict source the export asks for). This index answers that from the
-- index alone, in message order, so the export's summary and its SFT
-- decision loads never visit the wide decision rows (evidence JSON).
-- +goose Up
CREATE INDEX decisions_export_idx ON decisions (trajectory_id, message_idx, mask, human_verdict);

-- +goose Down
DROP INDEX decisions_export_idx;
