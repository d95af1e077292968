package store

import (
	"context"
	"os"
	"testing"

	"groundwork/grounding"
)

// TestAnalyzeAfterImport: on Postgres an import leaves fresh planner
// statistics behind for the key columns of the tables it grew, and none for
// the log payloads (migration 00011), whether or not autovacuum runs.
func TestAnalyzeAfterImport(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_DATABASE_URL not set: the Postgres tests must run under CI")
		}
		t.Skip("TEST_DATABASE_URL not set: skipping a Postgres-only test")
	}
	db := coverageStores(t)["postgres"](t)
	ctx := context.Background()
	seq := func(yield func(*grounding.Trajectory, error) bool) {
		for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 300, Seed: 3, Kind: "tau"}) {
			if !yield(tr, nil) {
				return
			}
		}
	}
	if _, err := db.ImportTrajectories(ctx, "fresh", grounding.ImportResult{File: "g.jsonl", Format: "canonical", SHA256: "g"}, seq); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"trajectories", "messages", "decisions", "coverage_paths"} {
		var analyzed bool
		if err := db.x.GetContext(ctx, &analyzed,
			`SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relname = $1`, table); err != nil {
			t.Fatal(err)
		}
		if !analyzed {
			t.Errorf("%s was not analyzed after an import of 300 trajectories", table)
		}
	}
	var cols []string
	if err := db.x.SelectContext(ctx, &cols,
		`SELECT attname FROM pg_stats WHERE tablename = 'messages' ORDER BY attname`); err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	for _, c := range cols {
		has[c] = true
	}
	if !has["trajectory_id"] || !has["hidden"] {
		t.Errorf("messages statistics cover %v, want trajectory_id and hidden among them", cols)
	}
	if has["content"] || has["tool_calls"] {
		t.Errorf("messages statistics cover %v: the payload columns (content, tool_calls) should have none", cols)
	}

	// A second, small import into the grown tables stays under the
	// threshold: nothing is analyzed again.
	var before string
	db.x.GetContext(ctx, &before, `SELECT last_analyze::text FROM pg_stat_user_tables WHERE relname = 'messages'`)
	small := func(yield func(*grounding.Trajectory, error) bool) {
		for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 2, Seed: 4, Kind: "tau"}) {
			tr.ID = "small-" + tr.ID
			if !yield(tr, nil) {
				return
			}
		}
	}
	if _, err := db.ImportTrajectories(ctx, "fresh", grounding.ImportResult{File: "h.jsonl", Format: "canonical", SHA256: "h"}, small); err != nil {
		t.Fatal(err)
	}
	var after string
	db.x.GetContext(ctx, &after, `SELECT last_analyze::text FROM pg_stat_user_tables WHERE relname = 'messages'`)
	if after != before {
		t.Errorf("a 2-trajectory import analyzed messages again (%s, then %s)", before, after)
	}
}
