package grounding

import (
	"encoding/json"
	"reflect"
	"strconv"
	"testing"
)

// act is one step of a hand-made trajectory: a bash command and what it
// printed; fail marks a non-zero exit.
type act struct {
	cmd, out string
	fail     bool
}

// sweTrajectory builds a canonical SWE trajectory from steps, in the shape
// the mini-swe-agent importer produces; meta is SWEMeta.
func sweTrajectory(id string, meta SWEMeta, steps ...act) *Trajectory {
	t := &Trajectory{ID: id, Domain: DomainSWE, Messages: []Message{{Role: RoleUser, Content: "fix it"}}}
	for i, s := range steps {
		cid := "c" + strconv.Itoa(i)
		if s.cmd == "" { // a turn without an action
			t.Messages = append(t.Messages, Message{Role: RoleAssistant, Content: "…"})
			continue
		}
		t.Messages = append(t.Messages,
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: cid, Name: "bash", Arguments: sweArgs("command", s.cmd)}}},
			Message{Role: RoleTool, ToolCallID: cid, Name: "bash", Content: s.out, Error: s.fail})
	}
	if meta.Scaffold == "" {
		meta.Scaffold = "mini-swe-agent"
	}
	t.Meta, _ = json.Marshal(meta)
	return t
}

const calcPatch = "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def div(a, b):\n-    return a / b\n+    return a / b if b else 0\n"

var calcInstance = &SWEInstance{InstanceID: "acme__calc-1", Patch: calcPatch + "diff --git a/pkg/util.py b/pkg/util.py\n--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -5 +5 @@\n-x\n+y\n",
	FailToPass: []string{"tests/test_calc.py::test_div_zero"}}

func ptr[T any](v T) *T { return &v }

func TestDiagnoseSWE(t *testing.T) {
	writeRepro := act{cmd: "cat <<'EOF' > reproduce.py\nfrom pkg.calc import div\nprint(div(1, 0))\nEOF"}
	runFail := act{cmd: "python reproduce.py", out: "Traceback (most recent call last):\nZeroDivisionError: division by zero", fail: true}
	runPass := act{cmd: "python reproduce.py", out: "0"}
	edit := act{cmd: "sed -i 's/a \\/ b/a \\/ b if b else 0/' pkg/calc.py"}
	submitted := SWEMeta{ExitStatus: "Submitted", Submission: ptr(calcPatch)}
	tests := []struct {
		name  string
		meta  SWEMeta
		inst  *SWEInstance
		steps []act
		// want
		stages       string
		localization *float64
		reproduction *bool
		verification *bool
		completed    bool
		repSteps     []int
		verSteps     []int
		locSteps     []int
		regSteps     []int
	}{
		{name: "reproduce, fix, verify", meta: submitted, inst: calcInstance,
			steps:  []act{{cmd: "ls"}, writeRepro, runFail, edit, runPass, {cmd: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff --cached", out: calcPatch}},
			stages: "LRRPrR", localization: ptr(0.5), reproduction: ptr(true), verification: ptr(true), completed: true,
			repSteps: []int{1, 2}, verSteps: []int{4}, locSteps: []int{3}},
		{name: "no reference: localization is nil", meta: submitted, inst: nil,
			steps:  []act{writeRepro, runFail, edit, runPass},
			stages: "RRPr", localization: nil, reproduction: ptr(true), verification: ptr(true), completed: true,
			repSteps: []int{0, 1}, verSteps: []int{3}},
		{name: "instance without a patch: no reference", meta: submitted, inst: &SWEInstance{InstanceID: "x"},
			steps:  []act{edit},
			stages: "P", localization: nil, reproduction: ptr(false), verification: ptr(false), completed: true},
		{name: "repro never fails: reproduction false, verification still true", meta: submitted, inst: calcInstance,
			steps:  []act{writeRepro, runPass, edit, runPass},
			stages: "RRPr", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(true), completed: true,
			verSteps: []int{3}, locSteps: []int{2}},
		{name: "not re-run after the last edit: verification false", meta: submitted, inst: calcInstance,
			steps:  []act{writeRepro, runFail, edit, runPass, {cmd: "sed -i 's/0/None/' pkg/util.py"}},
			stages: "RRPrP", localization: ptr(1.0), reproduction: ptr(true), verification: ptr(false), completed: true,
			repSteps: []int{0, 1}, locSteps: []int{2, 4}},
		{name: "re-run still fails: verification false", meta: submitted, inst: calcInstance,
			steps:  []act{writeRepro, runFail, edit, runFail},
			stages: "RRPr", localization: ptr(0.5), reproduction: ptr(true), verification: ptr(false), completed: true,
			repSteps: []int{0, 1}, verSteps: []int{3}, locSteps: []int{2}},
		{name: "a script first written after the edit does not verify", meta: submitted, inst: calcInstance,
			steps:  []act{edit, writeRepro, runPass},
			stages: "PPr", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: true,
			locSteps: []int{0}},
		{name: "a failure seen only after the last edit is not a reproduction", meta: submitted, inst: calcInstance,
			steps:  []act{edit, writeRepro, runFail},
			stages: "PPr", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: true,
			locSteps: []int{0}},
		{name: "without edits a failure anywhere reproduces", meta: SWEMeta{ExitStatus: "LimitsExceeded"}, inst: nil,
			steps:  []act{writeRepro, {cmd: "ls"}, runFail},
			stages: "RRR", reproduction: ptr(true), verification: nil, completed: false, repSteps: []int{0, 2}},
		{name: "edit and re-run in one step verifies", meta: submitted, inst: calcInstance,
			steps:  []act{writeRepro, runFail, {cmd: edit.cmd + " && python reproduce.py", out: "0"}},
			stages: "RRP", localization: ptr(0.5), reproduction: ptr(true), verification: ptr(true), completed: true,
			repSteps: []int{0, 1}, verSteps: []int{2}, locSteps: []int{2}},
		{name: "script not found is not a run", meta: submitted, inst: nil,
			steps:  []act{writeRepro, {cmd: "python ../reproduce.py", out: "python: can't open file '../reproduce.py': [Errno 2] No such file or directory", fail: true}},
			stages: "RR", reproduction: ptr(false), verification: nil, completed: true},
		{name: "no edit: verification nil, empty patch not completed", meta: SWEMeta{ExitStatus: "Submitted", Submission: ptr("")}, inst: calcInstance,
			steps:  []act{{cmd: "ls"}, writeRepro, runFail},
			stages: "LRR", localization: ptr(0.0), reproduction: ptr(true), verification: nil, completed: false,
			repSteps: []int{1, 2}},
		{name: "no steps: reproduction and verification nil", meta: SWEMeta{}, inst: calcInstance,
			stages: "", localization: ptr(0.0), reproduction: nil, verification: nil, completed: false},
		{name: "limits exceeded with a diff: not completed", meta: SWEMeta{ExitStatus: "LimitsExceeded", Submission: ptr(calcPatch)}, inst: calcInstance,
			steps:  []act{edit},
			stages: "P", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: false, locSteps: []int{0}},
		{name: "no submission field: a finish after an edit completes", meta: SWEMeta{Scaffold: "openhands"}, inst: calcInstance,
			steps:  []act{edit, {cmd: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}},
			stages: "PP", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: true, locSteps: []int{0}},
		{name: "no submission field and no finish: unfinished", meta: SWEMeta{Scaffold: "openhands", ExitStatus: "unfinished"}, inst: calcInstance,
			steps:  []act{edit, {cmd: "ls"}},
			stages: "PP", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: false, locSteps: []int{0}},
		{name: "files only in the submitted patch count as edited", meta: SWEMeta{ExitStatus: "submitted", Submission: ptr(calcInstance.Patch)}, inst: calcInstance,
			steps:  []act{{cmd: "python3 my_fixer.py"}},
			stages: "L", localization: ptr(1.0), reproduction: ptr(false), verification: nil, completed: true},
		// A failure the agent caused is not a reproduction of the issue.
		{name: "a crash in the agent's own edit after the script passed is a regression", meta: submitted, inst: calcInstance,
			steps: []act{writeRepro, {cmd: "python reproduce.py", out: "inf"}, edit,
				{cmd: "python reproduce.py", out: "Traceback (most recent call last):\n  File \"reproduce.py\", line 2, in <module>\n  File \"/testbed/pkg/calc.py\", line 3, in div\nTypeError: can only concatenate tuple", fail: true},
				{cmd: "sed -i 's/x/y/' pkg/calc.py"}, runPass},
			stages: "RRPrPr", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(true), completed: true,
			verSteps: []int{5}, locSteps: []int{2, 4}, regSteps: []int{3}},
		{name: "a new script failing inside the agent's edited file is a regression", meta: submitted, inst: calcInstance,
			steps: []act{edit, writeRepro,
				{cmd: "python reproduce.py", out: "Traceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 2\n  File \"/testbed/pkg/calc.py\", line 3, in div\nNameError: name 'b2' is not defined", fail: true},
				{cmd: "sed -i 's/b2/b/' pkg/calc.py"}, runPass},
			stages: "PPrPr", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(true), completed: true,
			verSteps: []int{4}, locSteps: []int{0, 3}, regSteps: []int{2}},
		{name: "a new script failing outside the edited files after a debug edit reproduces", meta: submitted, inst: calcInstance,
			steps: []act{{cmd: "sed -i '1a print(1)' pkg/util.py"}, writeRepro,
				{cmd: "python reproduce.py", out: "Traceback (most recent call last):\n  File \"/testbed/reproduce.py\", line 2\n  File \"/testbed/pkg/calc.py\", line 2, in div\nZeroDivisionError: division by zero", fail: true},
				edit, runPass},
			stages: "PPrPr", localization: ptr(1.0), reproduction: ptr(true), verification: ptr(true), completed: true,
			repSteps: []int{1, 2}, verSteps: []int{4}, locSteps: []int{0, 3}},
		{name: "a rewritten script failing after an edit reproduces", meta: submitted, inst: calcInstance,
			steps: []act{writeRepro, runPass, {cmd: "sed -i '1a print(1)' pkg/util.py"},
				{cmd: "cat <<'EOF' > reproduce.py\nassert div(1, 0) == 0\nEOF\npython reproduce.py", out: "AssertionError", fail: true},
				edit, runPass},
			stages: "RRPrPr", localization: ptr(1.0), reproduction: ptr(true), verification: ptr(true), completed: true,
			repSteps: []int{0, 3}, verSteps: []int{5}, locSteps: []int{2, 4}},

		// Verification needs an edit before it.
		{name: "a backup copy and test runs before any edit verify nothing", meta: SWEMeta{ExitStatus: "Submitted", Submission: ptr("")}, inst: calcInstance,
			steps:  []act{{cmd: "cp pkg/calc.py pkg/calc.py.orig"}, writeRepro, runPass, {cmd: "pytest tests", out: "===== 3 passed in 0.1s ====="}},
			stages: "LRRR", localization: ptr(0.0), reproduction: ptr(false), verification: nil, completed: false},
		{name: "tests run only before the edit: verification false", meta: submitted, inst: calcInstance,
			steps:  []act{{cmd: "pytest tests", out: "===== 3 passed in 0.1s ====="}, writeRepro, runPass, edit},
			stages: "RRRP", localization: ptr(0.5), reproduction: ptr(false), verification: ptr(false), completed: true, locSteps: []int{3}},
		{name: "a revert is the last edit: the run after it is the check", meta: submitted, inst: calcInstance,
			steps:  []act{writeRepro, runFail, edit, runPass, {cmd: "git checkout pkg/calc.py"}, runFail},
			stages: "RRPrPr", localization: ptr(0.5), reproduction: ptr(true), verification: ptr(false), completed: true,
			repSteps: []int{0, 1}, verSteps: []int{5}, locSteps: []int{2, 4}},
		{name: "unknown commands and format errors are labelled by state", meta: submitted, inst: nil,
			steps:  []act{{cmd: "frobnicate"}, writeRepro, {}, {cmd: "pip install -e ."}, edit, {}},
			stages: "LRRRPP", reproduction: ptr(false), verification: ptr(false), completed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := sweTrajectory("acme__calc-1", tt.meta, tt.steps...)
			d := DiagnoseSWE(tr, tt.inst)
			if got := d.StageString(); got != tt.stages {
				t.Errorf("stages = %q, want %q", got, tt.stages)
			}
			if !reflect.DeepEqual(d.Localization, tt.localization) {
				t.Errorf("localization = %v, want %v", fptr(d.Localization), fptr(tt.localization))
			}
			if !reflect.DeepEqual(d.Reproduction, tt.reproduction) || !reflect.DeepEqual(d.Verification, tt.verification) || d.Completed != tt.completed {
				t.Errorf("reproduction, verification, completed = %v, %v, %v (%s); want %v, %v, %v",
					bptr(d.Reproduction), bptr(d.Verification), d.Completed, d.CompletionWhy, bptr(tt.reproduction), bptr(tt.verification), tt.completed)
			}
			if !sameInts(d.ReproductionSteps, tt.repSteps) || !sameInts(d.VerificationSteps, tt.verSteps) || !sameInts(d.LocalizationSteps, tt.locSteps) {
				t.Errorf("justifying steps rep %v ver %v loc %v; want %v %v %v", d.ReproductionSteps, d.VerificationSteps, d.LocalizationSteps, tt.repSteps, tt.verSteps, tt.locSteps)
			}
			if !sameInts(d.RegressionSteps, tt.regSteps) {
				t.Errorf("regression steps %v, want %v", d.RegressionSteps, tt.regSteps)
			}
			if d.HasReference != (tt.localization != nil) {
				t.Errorf("HasReference = %v", d.HasReference)
			}
		})
	}
}

func sameInts(a, b []int) bool { return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b) }

func fptr(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func bptr(p *bool) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func TestSWEMetaOf(t *testing.T) {
	m := SWEMetaOf(&Trajectory{ID: "django__django-11133"})
	if m.InstanceID != "django__django-11133" {
		t.Errorf("instance id from the trajectory id = %q", m.InstanceID)
	}
	m = SWEMetaOf(&Trajectory{ID: "x", Meta: json.RawMessage(`{"instance_id":"a__b-1","exit_status":"Submitted","submission":""}`)})
	if m.InstanceID != "a__b-1" || m.ExitStatus != "Submitted" || m.Submission == nil || *m.Submission != "" {
		t.Errorf("SWEMetaOf = %+v", m)
	}
	m = SWEMetaOf(&Trajectory{ID: "x", Meta: json.RawMessage(`[1,2]`)})
	if m.InstanceID != "" {
		t.Errorf("foreign meta gave %+v", m)
	}
	for s, want := range map[string]bool{"django__django-11133": true, "pylint-dev__astroid-1268": true, "6e44b9__sweagenttestrepo-1c2844": false,
		"gpt4__swe-bench__default__t-0.00__install-1": false, "networking_1": false} {
		if LooksLikeInstanceID(s) != want {
			t.Errorf("LooksLikeInstanceID(%q) != %v", s, want)
		}
	}
}

func TestDiffHunks(t *testing.T) {
	diff := "diff --git a/a.py b/a.py\nindex 1..2 100644\n--- a/a.py\n+++ b/a.py\n@@ -10,3 +10,4 @@ def f():\n x\n-y\n+y2\n+y3\n z\n@@ -40 +41 @@\n-q\n+r\n" +
		"diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n" +
		"--- plain.txt\t2020-01-01\n+++ plain.txt\t2020-01-02\n@@ -1 +1 @@\n-a\n+b\n"
	hs := DiffHunks(diff)
	var got []string
	for _, h := range hs {
		got = append(got, h.File+":"+strconv.Itoa(h.OldStart)+","+strconv.Itoa(h.OldLines)+":"+strconv.Itoa(len(h.Lines)))
	}
	want := []string{"a.py:10,3:5", "a.py:40,1:2", "old.py:1,2:2", "plain.txt:1,1:2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DiffHunks = %q, want %q", got, want)
	}
	if files := DiffFiles(diff); !reflect.DeepEqual(files, []string{"a.py", "old.py", "plain.txt"}) {
		t.Errorf("DiffFiles = %q", files)
	}
	if DiffFiles("") != nil {
		t.Error("DiffFiles of nothing")
	}
}
