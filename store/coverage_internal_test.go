package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"groundwork/grounding"
)

// coverageStores opens a fresh store per dialect: SQLite always, Postgres
// in a throw-away database when TEST_DATABASE_URL is set. (The contract
// suite cannot reach the rows these tests change by hand: no store method
// sets a mask outside the adjudication code.)
func coverageStores(t *testing.T) map[string]func(t *testing.T) *DB {
	out := map[string]func(t *testing.T) *DB{
		"sqlite": func(t *testing.T) *DB {
			db, err := Open(context.Background(), filepath.Join(t.TempDir(), "g.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return out
	}
	out["postgres"] = func(t *testing.T) *DB {
		admin, err := sql.Open("postgres", base)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		name := fmt.Sprintf("gw_cov_%d", time.Now().UnixNano())
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(base)
		u.Path = "/" + name
		db, err := Open(context.Background(), u.String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			db.Close()
			if a, err := sql.Open("postgres", base); err == nil {
				a.Exec("DROP DATABASE " + name)
				a.Close()
			}
		})
		return db
	}
	return out
}

// coverageTrajectory: the user names a reservation, the agent reads it and
// replies. Certified under the generic profile.
func coverageTrajectory(i int) *grounding.Trajectory {
	ok := true
	res := fmt.Sprintf("R%05d", i)
	return &grounding.Trajectory{
		ID: fmt.Sprintf("t%d", i), ParentID: fmt.Sprintf("p%d", i/2), Domain: "shop", Success: &ok,
		Tools: []grounding.Tool{{Name: "get_reservation", Parameters: json.RawMessage(`{"type":"object","properties":{"reservation_id":{"type":"string"}}}`)}},
		Messages: []grounding.Message{
			{Role: grounding.RoleUser, Content: "Please look up reservation " + res},
			{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{
				{ID: "c1", Name: "get_reservation", Arguments: json.RawMessage(`{"reservation_id":"` + res + `"}`)}}},
			{Role: grounding.RoleTool, ToolCallID: "c1", Content: `{"reservation_id":"` + res + `","status":"active"}`},
			{Role: grounding.RoleAssistant, Content: "Reservation " + res + " is active."},
		},
	}
}

// TestCoverageInvalidation changes masks and workflow flags the way the
// adjudication code does (plain UPDATEs) and checks that the triggers move
// the coverage version and that readers derive stale paths again; then that
// trajectories without coverage rows are backfilled.
func TestCoverageInvalidation(t *testing.T) {
	ctx := context.Background()
	for name, open := range coverageStores(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			var ts []*grounding.Trajectory
			for i := range 4 {
				ts = append(ts, coverageTrajectory(i))
			}
			seq := func(yield func(*grounding.Trajectory, error) bool) {
				for _, tr := range ts {
					if !yield(tr, nil) {
						return
					}
				}
			}
			res, err := db.ImportTrajectories(ctx, "trig", grounding.ImportResult{File: "t.jsonl", Format: "canonical", SHA256: "t"}, seq)
			if err != nil {
				t.Fatal(err)
			}
			run := []int64{res.RunID}
			pool := func() ([]grounding.PoolTrajectory, string) {
				t.Helper()
				p, v, err := db.CoveragePool(ctx, run)
				if err != nil {
					t.Fatal(err)
				}
				return p, v
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.x.ExecContext(ctx, db.x.Rebind(q), args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			orig, v0 := pool()
			for _, p := range orig {
				if p.Path == "" || p.Supervised != 2 || p.Tokens == 0 {
					t.Fatalf("fixture trajectory %s not certified: %+v", p.ExtID, p)
				}
			}
			first := orig[0].ID

			// A human fail on the call: the path loses it, the version moves.
			exec(`UPDATE decisions SET mask = 0 WHERE trajectory_id = ? AND ordinal = 0`, first)
			p1, v1 := pool()
			if v1 == v0 {
				t.Errorf("a mask change left the coverage version at %q", v0)
			}
			if p1[0].Path != "respond>end:ok" || p1[0].Supervised != 1 || p1[0].Tokens >= orig[0].Tokens {
				t.Errorf("after unmasking the call: %+v", p1[0])
			}
			if !slices.Equal(p1[1:], orig[1:]) {
				t.Errorf("other trajectories changed: %+v", p1[1:])
			}
			// A reader at v0 catches up with the one changed trajectory.
			ch, v, ok, err := db.CoverageChanges(ctx, run, v0)
			if err != nil || !ok || v != v1 || len(ch) != 1 || ch[0].ID != first || ch[0].Path != p1[0].Path ||
				ch[0].Supervised != 1 || ch[0].Tokens != p1[0].Tokens {
				t.Errorf("CoverageChanges(v0) = %+v, %q, %v, %v; want trajectory %d as in %+v at %q", ch, v, ok, err, first, p1[0], v1)
			}
			if ch, v, ok, _ := db.CoverageChanges(ctx, run, v1); !ok || v != v1 || len(ch) != 0 {
				t.Errorf("CoverageChanges(current) = %+v, %q, %v; want nothing new", ch, v, ok)
			}
			if _, _, ok, _ := db.CoverageChanges(ctx, run, "garbage"); ok {
				t.Errorf("CoverageChanges(garbage) ok")
			}
			var stale bool
			if err := db.x.GetContext(ctx, &stale, db.x.Rebind(`SELECT stale FROM coverage_paths WHERE trajectory_id = ?`), first); err != nil || !stale {
				t.Errorf("coverage row stale = %v, %v; want true", stale, err)
			}
			// Writing the same mask again changes nothing.
			exec(`UPDATE decisions SET mask = 0 WHERE trajectory_id = ? AND ordinal = 0`, first)
			if _, v := pool(); v != v1 {
				t.Errorf("an unchanged mask moved the version %q → %q", v1, v)
			}
			exec(`UPDATE decisions SET mask = 1 WHERE trajectory_id = ? AND ordinal = 0`, first)
			p2, v2 := pool()
			if v2 == v1 || !slices.Equal(p2, orig) {
				t.Errorf("after restoring the mask: version %q (was %q), pool %+v", v2, v1, p2[0])
			}
			// A broken workflow uncertifies the trajectory.
			exec(`UPDATE trajectories SET workflow_ok = ? WHERE id = ?`, false, first)
			p3, v3 := pool()
			if v3 == v2 || p3[0].Path != "" {
				t.Errorf("after a workflow violation: version %q (was %q), %+v", v3, v2, p3[0])
			}
			exec(`UPDATE trajectories SET workflow_ok = ? WHERE id = ?`, true, first)

			// An import needs a whole new pool.
			_, vBefore := pool()
			if _, err := db.ImportTrajectories(ctx, "trig", grounding.ImportResult{File: "u.jsonl", Format: "canonical", SHA256: "u"},
				func(yield func(*grounding.Trajectory, error) bool) { yield(coverageTrajectory(9), nil) }); err != nil {
				t.Fatal(err)
			}
			if _, _, ok, _ := db.CoverageChanges(ctx, run, vBefore); ok {
				t.Errorf("CoverageChanges across an import is ok, want a full read")
			}
			exec(`DELETE FROM trajectories WHERE ext_id = ?`, "t9")
			exec(`UPDATE runs SET trajectories = trajectories - 1 WHERE id = ?`, res.RunID)

			// Rows lost (trajectories imported before migration 00008) are
			// computed again from the stored messages and decisions.
			exec(`DELETE FROM coverage_paths WHERE run_id = ?`, res.RunID)
			if p4, _ := pool(); !slices.Equal(p4, orig) {
				t.Errorf("after backfill: %+v, want %+v", p4, orig)
			}
			var n int
			if err := db.x.GetContext(ctx, &n, db.x.Rebind(`SELECT COUNT(*) FROM coverage_paths WHERE run_id = ? AND stale = ?`), res.RunID, false); err != nil || n != 4 {
				t.Errorf("backfilled rows = %d, %v; want 4 fresh ones", n, err)
			}
		})
	}
}
