-- Each trajectory's SFT "messages" array, rendered once at import with
-- every assistant weight 0, and the marks of its assistant messages (the
-- message, the offset of its weight digit, its target tokens): an SFT
-- export copies the rendering and sets the supervised digits, instead of
-- reading, decoding and rendering every visible message again (that was
-- most of an export's CPU). Visible messages never change after import.
-- Trajectories imported before this migration have no row: exports render
-- those from their messages, as before. A table of its own, so the rows
-- every page reads from trajectories stay small.
-- +goose Up
CREATE TABLE trajectory_sft (
    trajectory_id INTEGER PRIMARY KEY REFERENCES trajectories (id) ON DELETE CASCADE,
    messages      TEXT NOT NULL, -- the rendered "messages" array
    marks         TEXT NOT NULL, -- "message offset tokens" triples, ";"-separated
    tools_sha     TEXT NOT NULL  -- SHA-256 (hex) of trajectories.tools: exports read
                                 -- each distinct tool list once, not once per trajectory
);

-- +goose Down
DROP TABLE trajectory_sft;
