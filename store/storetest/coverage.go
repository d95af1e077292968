package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"groundwork/grounding"
	"groundwork/store"
)

// coverageTests are the promises of the coverage store (store/coverage.go).
var coverageTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"CoverageImport", testCoverageImport},
	{"CoverageVersion", testCoverageVersion},
	{"CoverageRecheck", testCoverageRecheck},
	{"CoverageScales", testCoverageScales},
	{"CoverageViews", testCoverageViews},
	{"CoverageViewAllOrNothing", testCoverageViewAllOrNothing},
}

// coveragePool is a small pool with certified and uncertified trajectories,
// errors and recoveries (TauLike), two parents per task.
func coveragePool(prefix string, n int) []*grounding.Trajectory {
	var ts []*grounding.Trajectory
	for i := range n {
		ts = append(ts, TauLike(prefix, i))
	}
	return ts
}

// wantPool computes what CoveragePool must return for ts, from the
// grounding functions alone.
func wantPool(ts []*grounding.Trajectory) map[string]grounding.PoolTrajectory {
	out := map[string]grounding.PoolTrajectory{}
	for _, tr := range ts {
		r := grounding.CheckDefault(tr)
		steps := grounding.PathSteps(tr, r.Decisions)
		masks := make([]int, len(r.Decisions))
		sup := 0
		for i, d := range r.Decisions {
			masks[i] = d.Mask
			sup += d.Mask
		}
		out[tr.ID] = grounding.PoolTrajectory{ExtID: tr.ID, Parent: tr.Parent(), Domain: tr.Domain,
			Path: grounding.CanonicalPath(steps, masks, tr.Succeeded() && r.Workflow), Supervised: sup,
			Tokens: grounding.CertifiedTokens(steps, masks)}
	}
	return out
}

func mustPool(t *testing.T, db *store.DB, runs ...int64) ([]grounding.PoolTrajectory, string) {
	t.Helper()
	pool, version, err := db.CoveragePool(ctx, runs)
	if err != nil {
		t.Fatalf("CoveragePool(%v) error: %v", runs, err)
	}
	return pool, version
}

func testCoverageImport(t *testing.T, db *store.DB) {
	ts := coveragePool("cov", 12)
	res := mustImport(t, db, "cov", "cov.jsonl", ts...)
	pool, _ := mustPool(t, db, res.RunID)
	want := wantPool(ts)
	if len(pool) != len(ts) {
		t.Fatalf("CoveragePool = %d trajectories, want %d", len(pool), len(ts))
	}
	certified := 0
	for i, p := range pool {
		w := want[p.ExtID]
		w.ID, w.Run = p.ID, res.RunID
		if p != w {
			t.Errorf("CoveragePool[%s] = %+v, want %+v", p.ExtID, p, w)
		}
		if i > 0 && pool[i-1].ID >= p.ID {
			t.Errorf("CoveragePool not in id order at %d", i)
		}
		if p.Path != "" {
			certified++
		}
	}
	run := mustRun(t, db, "cov")
	if certified != run.Certified || certified == 0 {
		t.Errorf("CoveragePool has %d certified trajectories, the run counts %d", certified, run.Certified)
	}

	// Two runs pool together; an unknown run and no run are refused.
	res2 := mustImport(t, db, "cov2", "cov2.jsonl", coveragePool("other", 3)...)
	both, _ := mustPool(t, db, res2.RunID, res.RunID, res.RunID)
	if len(both) != 15 {
		t.Errorf("CoveragePool(two runs) = %d trajectories, want 15", len(both))
	}
	if _, _, err := db.CoveragePool(ctx, []int64{res.RunID, 999}); !errors.Is(err, grounding.ErrNotFound) {
		t.Errorf("CoveragePool(unknown run) error = %v, want ErrNotFound", err)
	}
	if _, err := db.CoverageVersion(ctx, nil); !errors.Is(err, grounding.ErrInvalid) {
		t.Errorf("CoverageVersion(no run) error = %v, want ErrInvalid", err)
	}
}

func testCoverageVersion(t *testing.T, db *store.DB) {
	a := mustImport(t, db, "a", "a.jsonl", coveragePool("a", 4)...)
	b := mustImport(t, db, "b", "b.jsonl", coveragePool("b", 4)...)
	v1, err := db.CoverageVersion(ctx, []int64{a.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := db.CoverageVersion(ctx, []int64{a.RunID}); v != v1 {
		t.Errorf("CoverageVersion changed without a change: %q then %q", v1, v)
	}
	if _, v := mustPool(t, db, a.RunID); v != v1 {
		t.Errorf("CoveragePool version %q, CoverageVersion %q", v, v1)
	}
	// Another run's import leaves a's version alone; an import into a
	// moves it.
	mustImport(t, db, "b", "b2.jsonl", coveragePool("b2", 2)...)
	if v, _ := db.CoverageVersion(ctx, []int64{a.RunID}); v != v1 {
		t.Errorf("an import into run b changed run a's version: %q → %q", v1, v)
	}
	vb, _ := db.CoverageVersion(ctx, []int64{b.RunID})
	mustImport(t, db, "a", "a2.jsonl", coveragePool("a2", 2)...)
	v2, _ := db.CoverageVersion(ctx, []int64{a.RunID})
	if v2 == v1 {
		t.Errorf("an import into run a left its version at %q", v1)
	}
	if v, _ := db.CoverageVersion(ctx, []int64{a.RunID, b.RunID}); !strings.Contains(v, v2) || !strings.Contains(v, vb) {
		t.Errorf("CoverageVersion(a, b) = %q, want both %q and %q", v, v2, vb)
	}
}

// testCoverageRecheck: a recheck whose check changes masks moves paths and
// the version; the pool follows the effective masks.
func testCoverageRecheck(t *testing.T, db *store.DB) {
	ts := coveragePool("re", 9)
	res := mustImport(t, db, "re", "re.jsonl", ts...)
	before, v1 := mustPool(t, db, res.RunID)
	// The new check supervises nothing in trajectories whose id ends in 1.
	check := func(tr *grounding.Trajectory) grounding.Result {
		r := grounding.CheckDefault(tr)
		if strings.HasSuffix(tr.ID, "1") {
			for i := range r.Decisions {
				r.Decisions[i].Mask = 0
			}
		}
		return r
	}
	if _, err := db.Recheck(ctx, res.RunID, check, nil); err != nil {
		t.Fatalf("Recheck error: %v", err)
	}
	after, v2 := mustPool(t, db, res.RunID)
	if v1 == v2 {
		t.Errorf("Recheck left the coverage version at %q", v1)
	}
	changed := 0
	for i := range after {
		b, a := before[i], after[i]
		if strings.HasSuffix(a.ExtID, "1") {
			if a.Path != "" || a.Supervised != 0 || a.Tokens != 0 {
				t.Errorf("after Recheck %s = %+v, want no path, no supervised decision", a.ExtID, a)
			}
			if b.Path != "" {
				changed++
			}
			continue
		}
		if a != b {
			t.Errorf("after Recheck %s = %+v, want unchanged %+v", a.ExtID, a, b)
		}
	}
	if changed == 0 {
		t.Fatal("the fixture has no certified trajectory whose id ends in 1")
	}
	// A recheck with the default check restores the paths.
	if _, err := db.Recheck(ctx, res.RunID, grounding.CheckDefault, nil); err != nil {
		t.Fatal(err)
	}
	if again, _ := mustPool(t, db, res.RunID); !slices.Equal(again, before) {
		t.Errorf("after a second Recheck the pool differs from the imported one")
	}
}

func testCoverageScales(t *testing.T, db *store.DB) {
	scales, err := db.CoverageScales(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(scales, grounding.DefaultScales()) {
		t.Errorf("CoverageScales = %v, want the defaults %v", scales, grounding.DefaultScales())
	}
	if err := db.SaveCoverageScale(ctx, grounding.Scale{Name: "70B", Depth: 12}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveCoverageScale(ctx, grounding.Scale{Name: "8b", Depth: 5}); err != nil {
		t.Fatal(err)
	}
	scales, _ = db.CoverageScales(ctx)
	want := []grounding.Scale{{Name: "1.7B", Depth: 1}, {Name: "4B", Depth: 2}, {Name: "8b", Depth: 5}, {Name: "14B", Depth: 4}, {Name: "30B-A3B", Depth: 8}, {Name: "70B", Depth: 12}}
	if !slices.Equal(scales, want) {
		t.Errorf("CoverageScales after saves = %v, want %v", scales, want)
	}
	for _, bad := range []grounding.Scale{{Name: "", Depth: 1}, {Name: "x", Depth: 0}, {Name: "x y", Depth: 2}} {
		wantErr(t, "SaveCoverageScale(invalid)", db.SaveCoverageScale(ctx, bad), grounding.ErrInvalid)
	}
	if err := db.DeleteCoverageScale(ctx, "70b"); err != nil {
		t.Errorf("DeleteCoverageScale(70b) error: %v", err)
	}
	wantErr(t, "DeleteCoverageScale(unknown)", db.DeleteCoverageScale(ctx, "70B"), grounding.ErrNotFound)
	if scales, _ = db.CoverageScales(ctx); len(scales) != 5 {
		t.Errorf("CoverageScales after delete = %v", scales)
	}
}

// saveTestView selects budget parents of the runs' pool and saves them.
func saveTestView(t *testing.T, db *store.DB, name string, budget int, runs ...int64) (grounding.CoverageView, []grounding.ViewMember, error) {
	t.Helper()
	pool, _ := mustPool(t, db, runs...)
	p := grounding.NewPool(pool)
	sel, err := p.SelectStructured(budget, 3, nil)
	if err != nil {
		t.Fatalf("SelectStructured(%d) error: %v", budget, err)
	}
	members := grounding.ViewMembers(p, sel)
	v, err := db.SaveView(ctx, grounding.CoverageView{Name: name, Scale: grounding.Scale{Name: "8B", Depth: 3}, Budget: budget,
		Method: grounding.MethodStructured, Runs: runs}, members)
	return v, members, err
}

func testCoverageViews(t *testing.T, db *store.DB) {
	a := mustImport(t, db, "va", "va.jsonl", coveragePool("va", 16)...)
	b := mustImport(t, db, "vb", "vb.jsonl", coveragePool("vb", 8)...)
	v, members, err := saveTestView(t, db, "core-8B", 3, a.RunID)
	if err != nil {
		t.Fatalf("SaveView error: %v", err)
	}
	if v.ID == 0 || v.Parents != 3 || v.Trajectories != len(members) || v.CreatedAt.IsZero() || !slices.Equal(v.Runs, []int64{a.RunID}) {
		t.Errorf("SaveView = %+v (%d members)", v, len(members))
	}
	got, err := db.ViewByName(ctx, a.RunID, " core-8B ")
	if err != nil {
		t.Fatalf("ViewByName error: %v", err)
	}
	if got.ID != v.ID || got.Scale != v.Scale || got.Budget != 3 || got.Method != grounding.MethodStructured || !got.CreatedAt.Equal(v.CreatedAt) {
		t.Errorf("ViewByName = %+v, want %+v", got, v)
	}
	if byID, err := db.View(ctx, v.ID); err != nil || byID.ID != v.ID {
		t.Errorf("View(%d) = %+v, %v", v.ID, byID, err)
	}
	wantErr(t, "ViewByName(other run)", func() error { _, err := db.ViewByName(ctx, b.RunID, "core-8B"); return err }(), grounding.ErrNotFound)
	wantErr(t, "View(unknown)", func() error { _, err := db.View(ctx, 9999); return err }(), grounding.ErrNotFound)

	ids, err := db.ViewTrajectoryIDs(ctx, v.ID, a.RunID)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, m := range members {
		want = append(want, m.TrajectoryID)
	}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("ViewTrajectoryIDs = %v, want %v", ids, want)
	}
	if all, _ := db.ViewTrajectoryIDs(ctx, v.ID, 0); !slices.Equal(all, want) {
		t.Errorf("ViewTrajectoryIDs(all runs) = %v, want %v", all, want)
	}
	if none, _ := db.ViewTrajectoryIDs(ctx, v.ID, b.RunID); len(none) != 0 {
		t.Errorf("ViewTrajectoryIDs(other run) = %v", none)
	}
	ms, err := db.ViewMembers(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(members) {
		t.Fatalf("ViewMembers = %d, want %d", len(ms), len(members))
	}
	for _, m := range ms {
		i := slices.IndexFunc(members, func(x grounding.ViewMember) bool { return x.TrajectoryID == m.TrajectoryID })
		if i < 0 || members[i] != m {
			t.Errorf("ViewMembers has %+v, saved %+v", m, members[max(i, 0)])
		}
	}

	// The same name in the same run conflicts, names the run, and saves
	// nothing; in another run it is fine; a view over both runs conflicts.
	_, _, err = saveTestView(t, db, "core-8B", 2, a.RunID)
	wantErr(t, "SaveView(same name)", err, grounding.ErrConflict)
	if err != nil && !strings.Contains(err.Error(), `"va"`) {
		t.Errorf("SaveView(same name) error %q does not name the run", err)
	}
	if _, _, err := saveTestView(t, db, "core-8B", 2, b.RunID); err != nil {
		t.Errorf("SaveView(same name, other run) error: %v", err)
	}
	_, _, err = saveTestView(t, db, "core-8B", 4, a.RunID, b.RunID)
	wantErr(t, "SaveView(name taken in one of two runs)", err, grounding.ErrConflict)
	both, _, err := saveTestView(t, db, "both", 4, a.RunID, b.RunID)
	if err != nil || !slices.Equal(both.Runs, []int64{a.RunID, b.RunID}) {
		t.Errorf("SaveView(two runs) = %+v, %v", both, err)
	}
	views, err := db.Views(ctx, []int64{a.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if len(views) != 2 || views[0].Name != "both" || views[1].Name != "core-8B" {
		t.Errorf("Views(a) = %+v, want both then core-8B", views)
	}
	if all, _ := db.Views(ctx, nil); len(all) != 3 {
		t.Errorf("Views(all) = %d views, want 3", len(all))
	}
	_, _, err = saveTestView(t, db, "  ", 2, a.RunID)
	wantErr(t, "SaveView(blank name)", err, grounding.ErrInvalid)
}

// testCoverageViewAllOrNothing: a view whose members fail half-way leaves
// nothing behind, and its name stays free.
func testCoverageViewAllOrNothing(t *testing.T, db *store.DB) {
	a := mustImport(t, db, "an", "an.jsonl", coveragePool("an", 8)...)
	pool, _ := mustPool(t, db, a.RunID)
	p := grounding.NewPool(pool)
	sel, err := p.SelectStructured(2, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	members := grounding.ViewMembers(p, sel)
	bad := append(slices.Clone(members), grounding.ViewMember{TrajectoryID: 987654, RunID: a.RunID, Parent: "ghost", Stage: "core"})
	view := grounding.CoverageView{Name: "half", Scale: grounding.Scale{Name: "8B", Depth: 3}, Budget: 2, Method: grounding.MethodStructured, Runs: []int64{a.RunID}}
	if _, err := db.SaveView(ctx, view, bad); err == nil {
		t.Fatal("SaveView with a missing trajectory succeeded")
	}
	if vs, _ := db.Views(ctx, nil); len(vs) != 0 {
		t.Errorf("after a failed SaveView, Views = %+v, want none", vs)
	}
	wrongRun := append(slices.Clone(members), grounding.ViewMember{TrajectoryID: members[0].TrajectoryID, RunID: a.RunID + 1, Parent: "x"})
	_, err = db.SaveView(ctx, view, wrongRun)
	wantErr(t, "SaveView(member of another run)", err, grounding.ErrInvalid)
	_, err = db.SaveView(ctx, view, nil)
	wantErr(t, "SaveView(no members)", err, grounding.ErrInvalid)
	if _, err := db.SaveView(ctx, view, members); err != nil {
		t.Errorf("SaveView after failures error: %v", err)
	}
}
