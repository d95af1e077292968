-- Planner statistics (issue: scale). An import bulk-loads hundreds of
-- thousands of rows, then refreshes the statistics of the tables it grew
-- (store.DB.analyzeGrown): without that, until autovacuum gets to them (a
-- minute at best, never where it is off), the planner takes a run of 2,376
-- queued items for 10 and the queue page joins them all before sorting
-- (20 ms instead of 1). Log payloads (message text, tool calls and schemas,
-- evidence) are never filtered, joined or sorted on, and sampling them was
-- three quarters of ANALYZE's time on a 35,000-trajectory run (3.0 s
-- against 0.8 s without them): statistics target 0 leaves them out of every
-- ANALYZE, ours and autovacuum's. SQLite plans from its indexes alone, so
-- its migration is empty.
-- +goose Up
ALTER TABLE messages
    ALTER COLUMN content SET STATISTICS 0,
    ALTER COLUMN tool_calls SET STATISTICS 0;
ALTER TABLE trajectories
    ALTER COLUMN request SET STATISTICS 0,
    ALTER COLUMN tools SET STATISTICS 0,
    ALTER COLUMN hidden SET STATISTICS 0,
    ALTER COLUMN meta SET STATISTICS 0,
    ALTER COLUMN violations SET STATISTICS 0,
    ALTER COLUMN flow_reasons SET STATISTICS 0;
ALTER TABLE decisions
    ALTER COLUMN args SET STATISTICS 0,
    ALTER COLUMN reasons SET STATISTICS 0,
    ALTER COLUMN detail SET STATISTICS 0;
ALTER TABLE coverage_paths
    ALTER COLUMN steps SET STATISTICS 0;

-- +goose Down
ALTER TABLE coverage_paths
    ALTER COLUMN steps SET STATISTICS -1;
ALTER TABLE decisions
    ALTER COLUMN args SET STATISTICS -1,
    ALTER COLUMN reasons SET STATISTICS -1,
    ALTER COLUMN detail SET STATISTICS -1;
ALTER TABLE trajectories
    ALTER COLUMN request SET STATISTICS -1,
    ALTER COLUMN tools SET STATISTICS -1,
    ALTER COLUMN hidden SET STATISTICS -1,
    ALTER COLUMN meta SET STATISTICS -1,
    ALTER COLUMN violations SET STATISTICS -1,
    ALTER COLUMN flow_reasons SET STATISTICS -1;
ALTER TABLE messages
    ALTER COLUMN content SET STATISTICS -1,
    ALTER COLUMN tool_calls SET STATISTICS -1;
