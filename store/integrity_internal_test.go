package store

import (
	"context"
	"fmt"
	"testing"

	"groundwork/grounding"
)

// TestBulkIntegrity: the rows of messages, decisions, decision_reasons and
// coverage_paths always belong to an existing trajectory, and go with it,
// on both dialects: foreign keys in SQLite, statement-level triggers in
// Postgres (migration 00013).
func TestBulkIntegrity(t *testing.T) {
	for name, open := range coverageStores(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			ctx := context.Background()
			var ts []*grounding.Trajectory
			for i := range 3 {
				ts = append(ts, coverageTrajectory(i))
			}
			seq := func(yield func(*grounding.Trajectory, error) bool) {
				for _, tr := range ts {
					if !yield(tr, nil) {
						return
					}
				}
			}
			res, err := db.ImportTrajectories(ctx, "integrity", grounding.ImportResult{File: "i.jsonl", Format: "canonical", SHA256: "i"}, seq)
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			if err := db.x.SelectContext(ctx, &ids, db.x.Rebind(`SELECT id FROM trajectories WHERE run_id = ? ORDER BY id`), res.RunID); err != nil || len(ids) != 3 {
				t.Fatalf("trajectories %v, %v", ids, err)
			}
			exec := func(q string, args ...any) error {
				_, err := db.x.ExecContext(ctx, db.x.Rebind(q), args...)
				return err
			}
			missing := ids[2] + 1000

			if err := exec(`INSERT INTO messages (trajectory_id, idx, role, content, content_null, tool_call_id, name, is_error, hidden, hidden_kind)
				VALUES (?, 0, 'user', 'orphan', ?, '', '', ?, ?, '')`, missing, false, false, false); err == nil {
				t.Error("a message of a trajectory that does not exist was stored")
			}
			if err := exec(`INSERT INTO decision_reasons (trajectory_id, ordinal, run_id, reason) VALUES (?, 0, ?, 'x.y')`, missing, res.RunID); err == nil {
				t.Error("a decision reason of a trajectory that does not exist was stored")
			}
			if err := exec(`INSERT INTO decision_reasons (trajectory_id, ordinal, run_id, reason) VALUES (?, 0, ?, 'x.y')`, ids[0], res.RunID+1000); err == nil {
				t.Error("a decision reason of a run that does not exist was stored")
			}
			// A batch with one orphan among good rows fails as a whole.
			if err := exec(`INSERT INTO decision_reasons (trajectory_id, ordinal, run_id, reason) VALUES (?, 0, ?, 'x.a'), (?, 0, ?, 'x.b')`,
				ids[0], res.RunID, missing, res.RunID); err == nil {
				t.Error("a multi-row insert holding an orphan was stored")
			}
			if err := exec(`INSERT INTO decision_reasons (trajectory_id, ordinal, run_id, reason) VALUES (?, 0, ?, 'x.ok')`, ids[0], res.RunID); err != nil {
				t.Errorf("a decision reason of an existing trajectory was refused: %v", err)
			}
			if db.d.name == "postgres" {
				if err := exec(`UPDATE decisions SET trajectory_id = ? WHERE trajectory_id = ? AND ordinal = 0`, ids[1], ids[0]); err == nil {
					t.Error("a decision moved to another trajectory")
				}
				if err := exec(`UPDATE messages SET trajectory_id = ? WHERE trajectory_id = ? AND idx = 0`, missing, ids[0]); err == nil {
					t.Error("a message moved to a trajectory that does not exist")
				}
				// Updating anything else is untouched by the key triggers.
				if err := exec(`UPDATE decisions SET mask = mask WHERE trajectory_id = ?`, ids[0]); err != nil {
					t.Errorf("updating a decision's mask: %v", err)
				}
			}

			tables := []string{"messages", "decisions", "decision_reasons", "coverage_paths"}
			count := func(table string, id int64) int {
				var n int
				if err := db.x.GetContext(ctx, &n, db.x.Rebind(fmt.Sprintf(`SELECT COUNT(*) FROM %s WHERE trajectory_id = ?`, table)), id); err != nil {
					t.Fatal(err)
				}
				return n
			}
			kept := map[string]int{}
			for _, table := range tables {
				kept[table] = count(table, ids[1])
				if count(table, ids[0]) == 0 {
					t.Fatalf("%s has no row of trajectory %d to delete", table, ids[0])
				}
			}
			if err := exec(`DELETE FROM trajectories WHERE id = ?`, ids[0]); err != nil {
				t.Fatalf("delete a trajectory: %v", err)
			}
			for _, table := range tables {
				if n := count(table, ids[0]); n != 0 {
					t.Errorf("%s keeps %d rows of the deleted trajectory", table, n)
				}
				if n := count(table, ids[1]); n != kept[table] {
					t.Errorf("%s has %d rows of a trajectory that was not deleted, had %d", table, n, kept[table])
				}
			}
		})
	}
}
