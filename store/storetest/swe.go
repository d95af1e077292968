package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
)

// sweTests are the promises of the SWE diagnostics store (store/swe.go).
var sweTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"SWEInstances", testSWEInstances},
	{"SWEInstancesAllOrNothing", testSWEInstancesAllOrNothing},
	{"SWEResults", testSWEResults},
	{"SWEDiagnostics", testSWEDiagnostics},
	{"SWESubject", testSWESubject},
	{"SWEStamp", testSWEStamp},
}

const swePatch = "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def div(a, b):\n-    return a / b\n+    return a / b if b else 0\n"

// SWEInstance returns reference metadata for id whose fix changes
// pkg/calc.py and, when two is set, pkg/util.py too.
func SWEInstance(id string, two bool) *grounding.SWEInstance {
	patch := swePatch
	if two {
		patch += "diff --git a/pkg/util.py b/pkg/util.py\n--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -3 +3 @@\n-x\n+y\n"
	}
	return &grounding.SWEInstance{InstanceID: id, Repo: "acme/calc", BaseCommit: "abc", Version: "1.0", Patch: patch,
		TestPatch: "diff --git a/tests/t.py b/tests/t.py\n+def test_zero(): pass\n", ProblemStatement: "div(1, 0) raises <ZeroDivisionError>",
		FailToPass: []string{"tests/t.py::test_zero"}, PassToPass: []string{}}
}

// SWELike returns a mini-swe-agent-shaped trajectory for instance inst: it
// writes and runs a reproduction script that fails, edits pkg/calc.py,
// re-runs it (passing when fixed is set) and submits.
func SWELike(id, inst string, fixed bool) *grounding.Trajectory {
	rerun := "0"
	if !fixed {
		rerun = "Traceback (most recent call last):\nZeroDivisionError"
	}
	steps := []struct{ cmd, out string }{
		{"ls", "pkg"},
		{"cat <<'EOF' > reproduce.py\nprint(1/0)\nEOF", ""},
		{"python reproduce.py", "Traceback (most recent call last):\nZeroDivisionError: division by zero"},
		{"sed -i 's/a \\/ b/a \\/ b if b else 0/' pkg/calc.py", ""},
		{"python reproduce.py", rerun},
		{"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff --cached", swePatch},
	}
	t := &grounding.Trajectory{ID: id, ParentID: inst, Domain: grounding.DomainSWE, Source: grounding.Source{Format: "mini-swe-agent"},
		Request: "fix div", Messages: []grounding.Message{{Role: grounding.RoleUser, Content: "fix div"}}}
	for i, s := range steps {
		cid := fmt.Sprintf("call_%d", i)
		args, _ := json.Marshal(map[string]string{"command": s.cmd})
		t.Messages = append(t.Messages,
			grounding.Message{Role: grounding.RoleAssistant, Content: "THOUGHT", ToolCalls: []grounding.ToolCall{{ID: cid, Name: "bash", Arguments: args}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: cid, Name: "bash", Content: s.out})
	}
	t.Meta, _ = json.Marshal(map[string]any{"instance_id": inst, "exit_status": "Submitted", "submission": swePatch, "scaffold": "mini-swe-agent"})
	return t
}

func instanceSeq(ins ...*grounding.SWEInstance) iter.Seq2[*grounding.SWEInstance, error] {
	return func(yield func(*grounding.SWEInstance, error) bool) {
		for _, in := range ins {
			if !yield(in, nil) {
				return
			}
		}
	}
}

func resultSeq(rs ...grounding.SWEResult) iter.Seq2[grounding.SWEResult, error] {
	return func(yield func(grounding.SWEResult, error) bool) {
		for _, r := range rs {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func testSWEInstances(t *testing.T, db *store.DB) {
	a, b := SWEInstance("acme__calc-1", false), SWEInstance("acme__calc-2", true)
	n, err := db.ImportSWEInstances(ctx, "instances.jsonl", instanceSeq(a, b))
	if err != nil || n != 2 {
		t.Fatalf("ImportSWEInstances = %d, %v; want 2", n, err)
	}
	got, err := db.SWEInstance(ctx, "acme__calc-2")
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Errorf("SWEInstance(acme__calc-2) = %+v, %v\nwant %+v", got, err, b)
	}
	_, err = db.SWEInstance(ctx, "nope__nope-1")
	wantErr(t, "SWEInstance(unknown)", err, grounding.ErrNotFound)

	rows, next, err := db.SWEInstances(ctx, "", 1)
	if err != nil || len(rows) != 1 || rows[0].InstanceID != "acme__calc-1" || next != "acme__calc-1" {
		t.Fatalf("SWEInstances(first page) = %+v, %q, %v", rows, next, err)
	}
	ev := grounding.SWEEvidenceOf(a)
	if r := rows[0]; !reflect.DeepEqual(r.Files, []string{"pkg/calc.py"}) || r.LOCTokens != ev.LOCTokens || r.REPTokens != ev.REPTokens ||
		r.PATCHTokens != ev.PATCHTokens || r.SourceFile != "instances.jsonl" || r.ImportedAt.IsZero() {
		t.Errorf("SWEInstances row = %+v, want files, token sizes %+v, source and time", r, ev)
	}
	rows, next, err = db.SWEInstances(ctx, next, 1)
	if err != nil || len(rows) != 1 || rows[0].InstanceID != "acme__calc-2" || next != "" || !reflect.DeepEqual(rows[0].Files, []string{"pkg/calc.py", "pkg/util.py"}) {
		t.Errorf("SWEInstances(second page) = %+v, %q, %v", rows, next, err)
	}

	// A re-import replaces the instance.
	changed := SWEInstance("acme__calc-1", true)
	if n, err := db.ImportSWEInstances(ctx, "v2.json", instanceSeq(changed)); err != nil || n != 1 {
		t.Fatalf("re-import = %d, %v", n, err)
	}
	if got, err := db.SWEInstance(ctx, "acme__calc-1"); err != nil || !reflect.DeepEqual(got, changed) {
		t.Errorf("after re-import SWEInstance = %+v, %v", got, err)
	}
	if _, err := db.ImportSWEInstances(ctx, "bad.json", instanceSeq(&grounding.SWEInstance{})); !errors.Is(err, grounding.ErrInvalid) {
		t.Errorf("import of an instance without id = %v, want ErrInvalid", err)
	}
}

func testSWEInstancesAllOrNothing(t *testing.T, db *store.DB) {
	boom := errors.New("boom")
	seq := func(yield func(*grounding.SWEInstance, error) bool) {
		if !yield(SWEInstance("acme__calc-1", false), nil) {
			return
		}
		yield(nil, boom)
	}
	if _, err := db.ImportSWEInstances(ctx, "broken.jsonl", seq); !errors.Is(err, boom) {
		t.Fatalf("ImportSWEInstances(broken) = %v, want the reader's error", err)
	}
	_, err := db.SWEInstance(ctx, "acme__calc-1")
	wantErr(t, "SWEInstance after a failed import", err, grounding.ErrNotFound)
}

func testSWEResults(t *testing.T, db *store.DB) {
	_, err := db.ImportSWEResults(ctx, "nope", "report.json", resultSeq(grounding.SWEResult{InstanceID: "a__b-1", Resolved: true}))
	wantErr(t, "ImportSWEResults(unknown run)", err, grounding.ErrNotFound)

	mustImport(t, db, "swe-a", "a.jsonl", SWELike("t1", "acme__calc-1", true), SWELike("t2", "acme__calc-2", false))
	run := mustRun(t, db, "swe-a")
	n, err := db.ImportSWEResults(ctx, "swe-a", "report.json", resultSeq(
		grounding.SWEResult{InstanceID: "acme__calc-1", Resolved: true}, grounding.SWEResult{InstanceID: "acme__calc-2", Resolved: true}))
	if err != nil || n != 2 {
		t.Fatalf("ImportSWEResults = %d, %v", n, err)
	}
	// A later report replaces a verdict.
	if _, err := db.ImportSWEResults(ctx, "swe-a", "report2.json", resultSeq(grounding.SWEResult{InstanceID: "acme__calc-2"})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RefreshSWEDiagnostics(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	outs, _, err := db.SWEOutcomes(ctx, run.ID, "", 0)
	if err != nil || len(outs) != 2 || outs[0].Resolved == nil || !*outs[0].Resolved || outs[1].Resolved == nil || *outs[1].Resolved {
		t.Errorf("resolved flags = %+v, %v; want t1 resolved, t2 not", outs, err)
	}
	if _, err := db.ImportSWEResults(ctx, "swe-a", "bad.json", resultSeq(grounding.SWEResult{})); !errors.Is(err, grounding.ErrInvalid) {
		t.Errorf("result without an instance id = %v, want ErrInvalid", err)
	}
}

func testSWEDiagnostics(t *testing.T, db *store.DB) {
	// A run with two SWE trajectories and one that is not SWE.
	mustImport(t, db, "swe-a", "a.jsonl", SWELike("t2", "acme__calc-2", false), SWELike("t1", "acme__calc-1", true),
		Simple("other", "airline", true, "get_user"))
	mustImport(t, db, "tau", "tau.jsonl", Simple("x", "airline", true, "get_user"))
	run := mustRun(t, db, "swe-a")

	runs, err := db.SWERuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].Name != "swe-a" {
		t.Errorf("SWERuns = %+v, %v; want only swe-a", runs, err)
	}
	n, err := db.RefreshSWEDiagnostics(ctx, run.ID)
	if err != nil || n != 2 {
		t.Fatalf("RefreshSWEDiagnostics = %d, %v; want 2 (the SWE trajectories only)", n, err)
	}
	if n, err := db.RefreshSWEDiagnostics(ctx, run.ID); err != nil || n != 0 {
		t.Errorf("second RefreshSWEDiagnostics = %d, %v; want nothing left", n, err)
	}
	if n, err := db.RefreshSWEDiagnostics(ctx, 999999); err != nil || n != 0 {
		t.Errorf("RefreshSWEDiagnostics(unknown run) = %d, %v", n, err)
	}

	outs, next, err := db.SWEOutcomes(ctx, run.ID, "", 0)
	if err != nil || len(outs) != 2 || next != "" {
		t.Fatalf("SWEOutcomes = %d rows, %q, %v", len(outs), next, err)
	}
	yes, no := true, false
	want := grounding.SWEOutcome{ExtID: "t1", InstanceID: "acme__calc-1", Steps: 6, Stages: "LRRPrR",
		EditedFiles: []string{"pkg/calc.py"}, Reproduction: &yes, Verification: &yes, Completed: true}
	got := outs[0]
	got.TrajectoryID = 0
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SWEOutcomes[0] = %+v\nwant %+v", got, want)
	}
	if outs[0].TrajectoryID == 0 || outs[1].ExtID != "t2" || *outs[1].Verification != no {
		t.Errorf("SWEOutcomes[1] = %+v", outs[1])
	}

	// Metadata imported afterwards applies at once: localization is read-time.
	if _, err := db.ImportSWEInstances(ctx, "i.json", instanceSeq(SWEInstance("acme__calc-1", true))); err != nil {
		t.Fatal(err)
	}
	outs, _, err = db.SWEOutcomes(ctx, run.ID, "", 1)
	if err != nil || len(outs) != 1 || outs[0].Localization == nil || *outs[0].Localization != 0.5 {
		t.Errorf("localization after metadata = %+v, %v; want 0.5", outs, err)
	}
	page2, next2, err := db.SWEOutcomes(ctx, run.ID, "t1", 1)
	if err != nil || len(page2) != 1 || page2[0].ExtID != "t2" || next2 != "" || page2[0].Localization != nil {
		t.Errorf("SWEOutcomes(after t1) = %+v, %q, %v; want t2 without a reference", page2, next2, err)
	}
	if outs, _, err := db.SWEOutcomes(ctx, 999999, "", 0); err != nil || len(outs) != 0 {
		t.Errorf("SWEOutcomes(unknown run) = %+v, %v", outs, err)
	}
}

func testSWESubject(t *testing.T, db *store.DB) {
	tr := SWELike("t1", "acme__calc-1", true)
	mustImport(t, db, "swe-a", "a.jsonl", tr)
	run := mustRun(t, db, "swe-a")
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID})
	if err != nil || len(page.Rows) != 1 {
		t.Fatal(page, err)
	}
	id := page.Rows[0].ID
	s, err := db.SWESubject(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != id || s.RunID != run.ID || s.RunName != "swe-a" || s.Instance != nil || s.Resolved != nil {
		t.Errorf("SWESubject = %+v; want no instance and no result yet", s)
	}
	if s.Trajectory.ID != "t1" || len(s.Trajectory.Messages) != len(tr.Messages) || grounding.SWEMetaOf(s.Trajectory).InstanceID != "acme__calc-1" {
		t.Errorf("SWESubject trajectory = %+v", s.Trajectory)
	}
	if got, want := grounding.DiagnoseSWE(s.Trajectory, nil).StageString(), grounding.DiagnoseSWE(tr, nil).StageString(); got != want {
		t.Errorf("diagnosis of the stored trajectory = %q, of the original %q", got, want)
	}
	if _, err := db.ImportSWEInstances(ctx, "i.json", instanceSeq(SWEInstance("acme__calc-1", false))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ImportSWEResults(ctx, "swe-a", "r.json", resultSeq(grounding.SWEResult{InstanceID: "acme__calc-1", Resolved: true})); err != nil {
		t.Fatal(err)
	}
	s, err = db.SWESubject(ctx, id)
	if err != nil || s.Instance == nil || s.Instance.InstanceID != "acme__calc-1" || s.Resolved == nil || !*s.Resolved {
		t.Errorf("SWESubject with metadata = %+v, %v", s, err)
	}
	_, err = db.SWESubject(ctx, 999999)
	wantErr(t, "SWESubject(unknown)", err, grounding.ErrNotFound)
}

// SWEGenerated returns the i-th of a deterministic family of varied
// mini-swe-agent-shaped trajectories for benchmarks: 10 to 60 steps of
// exploration, a reproduction script that fails, source edits (sed -i and
// heredocs), re-runs, test-suite runs and a submission, with observations
// of a few hundred bytes to a few KB. Instance ids cycle over 500
// instances (gen__repo-0 … gen__repo-499), so runs share instances.
func SWEGenerated(i int) *grounding.Trajectory {
	inst := fmt.Sprintf("gen__repo-%d", i%500)
	r := uint32(i)*2654435761 + 12345
	rnd := func(n int) int {
		r ^= r << 13
		r ^= r >> 17
		r ^= r << 5
		return int(r % uint32(n))
	}
	file := fmt.Sprintf("pkg/mod%d/core.py", i%37)
	listing := strings.Repeat("pkg/mod/file.py\n", 20)
	source := strings.Repeat("    def method(self, value):\n        return self.helper(value) + 1\n", 15)
	trace := "Traceback (most recent call last):\n" + strings.Repeat("  File \"/testbed/pkg/core.py\", line 12, in method\n    return self.helper(value)\n", 8) + "ValueError: bad value"
	type step struct{ cmd, out string }
	var steps []step
	for range 2 + rnd(12) {
		switch rnd(4) {
		case 0:
			steps = append(steps, step{"ls -R pkg | head -40", listing})
		case 1:
			steps = append(steps, step{"grep -rn 'def method' pkg | head -20", listing})
		case 2:
			steps = append(steps, step{"nl -ba " + file + " | sed -n '1,60p'", source})
		default:
			steps = append(steps, step{"cat " + file, source + source})
		}
	}
	steps = append(steps,
		step{"cat <<'EOF' > reproduce_issue.py\nfrom pkg.core import Thing\nprint(Thing().method(3))\nEOF", ""},
		step{"python3 reproduce_issue.py", trace})
	for range rnd(8) {
		steps = append(steps, step{"sed -n '10,40p' " + file, source})
	}
	edits := 1 + rnd(3)
	for e := range edits {
		if e%2 == 0 {
			steps = append(steps, step{"sed -i 's/return self.helper(value)/return self.helper(value or 0)/' " + file, ""})
		} else {
			steps = append(steps, step{"cat <<'EOF' > " + file + "\n" + source + "EOF", ""})
		}
		out := "3"
		if e < edits-1 || i%5 == 0 {
			out = trace
		}
		steps = append(steps, step{"python3 reproduce_issue.py", out})
	}
	for range rnd(6) {
		steps = append(steps, step{"python3 -m pytest tests/test_core.py -q", strings.Repeat(".", 40) + "\n40 passed in 0.50s"})
	}
	if i%7 != 0 {
		steps = append(steps, step{"rm reproduce_issue.py", ""}, step{"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", swePatch})
	}
	t := &grounding.Trajectory{ID: fmt.Sprintf("gen-%06d", i), ParentID: inst, Domain: grounding.DomainSWE,
		Source: grounding.Source{Format: "mini-swe-agent", File: "gen.jsonl", Index: i}, Request: "fix the bug in " + file,
		Messages: []grounding.Message{{Role: grounding.RoleSystem, Content: "You are a helpful assistant."}, {Role: grounding.RoleUser, Content: "fix the bug in " + file}}}
	for k, s := range steps {
		cid := fmt.Sprintf("call_%d", k)
		args, _ := json.Marshal(map[string]string{"command": s.cmd})
		t.Messages = append(t.Messages,
			grounding.Message{Role: grounding.RoleAssistant, Content: "THOUGHT: next step.\n\n```bash\n" + s.cmd + "\n```", ToolCalls: []grounding.ToolCall{{ID: cid, Name: "bash", Arguments: args}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: cid, Name: "bash", Content: "<returncode>0</returncode>\n<output>\n" + s.out + "</output>"})
	}
	meta := map[string]any{"instance_id": inst, "exit_status": "Submitted", "submission": swePatch, "scaffold": "mini-swe-agent"}
	if i%7 == 0 {
		meta["exit_status"], meta["submission"] = "LimitsExceeded", ""
	}
	t.Meta, _ = json.Marshal(meta)
	return t
}

// SWEGeneratedSeq yields SWEGenerated(from) … SWEGenerated(from+n-1).
func SWEGeneratedSeq(from, n int) iter.Seq2[*grounding.Trajectory, error] {
	return func(yield func(*grounding.Trajectory, error) bool) {
		for i := from; i < from+n; i++ {
			if !yield(SWEGenerated(i), nil) {
				return
			}
		}
	}
}

func testSWEStamp(t *testing.T, db *store.DB) {
	mustImport(t, db, "swe-a", "a.jsonl", SWELike("t1", "acme__calc-1", true))
	run := mustRun(t, db, "swe-a")
	stamp := func() string {
		t.Helper()
		s, err := db.SWEStamp(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s0 := stamp()
	if _, err := db.RefreshSWEDiagnostics(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	if s := stamp(); s != s0 {
		t.Errorf("computing diagnostics changed the stamp %q → %q; the outcomes did not change", s0, s)
	}
	steps := []func(){
		func() { mustImport(t, db, "swe-a", "b.jsonl", SWELike("t2", "acme__calc-2", false)) },
		func() { db.ImportSWEInstances(ctx, "i.json", instanceSeq(SWEInstance("acme__calc-1", false))) },
		func() { db.ImportSWEInstances(ctx, "i2.json", instanceSeq(SWEInstance("acme__calc-1", true))) }, // a replacement
		func() {
			db.ImportSWEResults(ctx, "swe-a", "r.json", resultSeq(grounding.SWEResult{InstanceID: "acme__calc-1", Resolved: true}))
		},
	}
	prev := s0
	for i, step := range steps {
		time.Sleep(2 * time.Millisecond) // stored times have microseconds
		step()
		s := stamp()
		if s == prev {
			t.Errorf("step %d left the stamp at %q", i, s)
		}
		prev = s
	}
	if s, err := db.SWEStamp(ctx, 999999); err != nil || s == "" {
		t.Errorf("SWEStamp(unknown run) = %q, %v", s, err)
	}
}
