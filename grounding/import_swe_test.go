package grounding

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sweFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "swe", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestDetectSWE(t *testing.T) {
	tests := []struct {
		file string
		want Format
	}{
		{"acme__calc-1.traj.json", FormatMiniSWE},
		{"acme__calc-1.traj", FormatSWEAgent},
		{"function_calling.traj", FormatSWEAgent},
		{"openhands_completion.json", FormatOpenHands},
		{"openhands_events.json", FormatOpenHands},
		{"openhands_output.jsonl", FormatOpenHands},
	}
	for _, tt := range tests {
		got, err := Detect(bufio.NewReader(sweFixture(t, tt.file)))
		if got != tt.want || err != nil {
			t.Errorf("Detect(%s) = %q, %v; want %q", tt.file, got, err, tt.want)
		}
		if f, ok := DetectSWEData(bufio.NewReader(sweFixture(t, tt.file))); ok {
			t.Errorf("DetectSWEData(%s) = %q, want no match for a trajectory", tt.file, f)
		}
	}
	data := []struct {
		file string
		want Format
	}{
		{"instances.jsonl", FormatSWEInstances},
		{"instances_array.json", FormatSWEInstances},
		{"instances_wrapped.json", FormatSWEInstances},
		{"report_keyed.json", FormatSWEResults},
		{"logs/acme__calc-1/report.json", FormatSWEResults},
		{"results_summary.json", FormatSWEResults},
		{"sbcli_report.json", FormatSWEResults},
		{"instance_acme__calc-2.log", FormatSWEResults},
		{"output.swebench_eval.md", FormatSWEResults},
	}
	for _, tt := range data {
		got, ok := DetectSWEData(bufio.NewReader(sweFixture(t, tt.file)))
		if got != tt.want || !ok {
			t.Errorf("DetectSWEData(%s) = %q, %v; want %q", tt.file, got, ok, tt.want)
		}
	}
	for _, s := range []string{`{"id": "a", "messages": []}`, `[{"traj": []}]`, `hello`, ``} {
		if f, ok := DetectSWEData(bufio.NewReader(strings.NewReader(s))); ok {
			t.Errorf("DetectSWEData(%q) = %q, want no match", s, f)
		}
	}
}

// sweShape summarizes a trajectory for comparison.
type sweShape struct {
	ID, Parent, Format string
	Roles              string // one letter per message: s u a t
	Calls              []string
	Meta               SWEMeta
	Request            string
}

func shapeOf(t *Trajectory) sweShape {
	s := sweShape{ID: t.ID, Parent: t.ParentID, Format: t.Source.Format, Meta: SWEMetaOf(t)}
	for _, m := range t.Messages {
		s.Roles += m.Role[:1]
		for _, c := range m.ToolCalls {
			s.Calls = append(s.Calls, c.Name+" "+string(c.Arguments))
		}
		if m.Role == RoleTool && m.Error {
			s.Roles = s.Roles[:len(s.Roles)-1] + "!"
		}
	}
	if len(t.Request) > 20 {
		s.Request = t.Request[:20]
	} else {
		s.Request = t.Request
	}
	s.Meta.Submission = nil
	return s
}

func TestReadSWEFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []sweShape
	}{
		{"acme__calc-1.traj.json", []sweShape{{
			ID: "acme__calc-1", Parent: "acme__calc-1", Format: "mini-swe-agent", Roles: "suatata!auatatatat",
			Calls: []string{
				`bash {"command":"ls -R pkg | head -20"}`,
				`bash {"command":"cat <<'EOF' > reproduce_issue.py\nfrom pkg.calc import div\nprint(div(1, 0))\nEOF"}`,
				`bash {"command":"python3 reproduce_issue.py"}`,
				`bash {"command":"grep -n 'def div' pkg/calc.py && sed -n '1,5p' pkg/calc.py"}`,
				`bash {"command":"sed -i 's/return a \\/ b/return a \\/ b if b else 0/' pkg/calc.py"}`,
				`bash {"command":"python3 reproduce_issue.py"}`,
				`bash {"command":"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"}`,
			},
			Meta:    SWEMeta{InstanceID: "acme__calc-1", ExitStatus: "Submitted", Model: "test/model", Scaffold: "mini-swe-agent"},
			Request: "<pr_description>\ndiv",
		}}},
		{"acme__calc-1.traj", []sweShape{{
			ID: "acme__calc-1", Parent: "acme__calc-1", Format: "swe-agent", Roles: "suuatatatatatatata",
			Calls: []string{
				`create {"filename":"reproduce.py"}`,
				`edit {"start_line":"1","end_line":"1","replacement":"from pkg.calc import div\nprint(div(1, 0))"}`,
				`bash {"command":"python reproduce.py"}`,
				`find_file {"file_name":"calc.py"}`,
				`open {"path":"pkg/calc.py","line_number":"1"}`,
				`edit {"start_line":"2","end_line":"2","replacement":"    return a / b if b else 0"}`,
				`bash {"command":"python reproduce.py"}`,
				`submit {}`,
			},
			Meta:    SWEMeta{InstanceID: "acme__calc-1", ExitStatus: "submitted", Scaffold: "swe-agent"},
			Request: "We're currently solv",
		}}},
		{"function_calling.traj", []sweShape{{
			ID: "function_calling", Parent: "function_calling", Format: "swe-agent", Roles: "suatatat",
			Calls: []string{`open {"path": "tests/missing_colon.py"}`, `edit {"search": "-> float", "replace": "-> float:"}`, `submit {}`},
			Meta:  SWEMeta{InstanceID: "function_calling", Scaffold: "swe-agent"}, Request: "ISSUE: missing colon",
		}}},
		{"openhands_completion.json", []sweShape{{
			ID: "openhands_completion", Format: "openhands", Roles: "suatata!atata",
			Calls: []string{
				`str_replace_editor {"command": "view", "path": "/workspace/acme__calc__1.0"}`,
				`str_replace_editor {"command": "create", "path": "/workspace/reproduce.py", "file_text": "from pkg.calc import div\nprint(div(1, 0))\n"}`,
				`execute_bash {"command": "cd /workspace/acme__calc__1.0 && python /workspace/reproduce.py"}`,
				`str_replace_editor {"command": "str_replace", "path": "/workspace/acme__calc__1.0/pkg/calc.py", "old_str": "return a / b", "new_str": "return a / b if b else 0"}`,
				`execute_bash {"command": "python /workspace/reproduce.py"}`,
				`finish {}`,
			},
			Meta: SWEMeta{ExitStatus: "finished", Model: "claude-test", Scaffold: "openhands"}, Request: "<uploaded_files>\n/wo",
		}}},
		{"openhands_events.json", []sweShape{{
			ID: "openhands_events", Format: "openhands", Roles: "ua!atata",
			Calls: []string{
				`execute_bash {"command":"python reproduce_bug.py"}`,
				`str_replace_editor {"command": "str_replace", "path": "/workspace/acme__calc__1.0/pkg/calc.py", "old_str": "a / b", "new_str": "a / b if b else 0"}`,
				`execute_bash {"command":"python reproduce_bug.py"}`,
				`finish {"final_thought":"Fixed."}`,
			},
			Meta: SWEMeta{ExitStatus: "finished", Scaffold: "openhands"}, Request: "Fix div(1, 0)",
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			ts, err := readAllTrajectories(sweFixture(t, tt.file), tt.file, FormatAuto)
			if err != nil {
				t.Fatalf("Read(%s): %v", tt.file, err)
			}
			var got []sweShape
			for _, tr := range ts {
				got = append(got, shapeOf(tr))
				if tr.Domain != DomainSWE {
					t.Errorf("Read(%s) domain = %q", tt.file, tr.Domain)
				}
				for i, m := range tr.Messages {
					if m.Index != i {
						t.Errorf("Read(%s) message %d has Index %d", tt.file, i, m.Index)
					}
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Read(%s) =\n%+v\nwant\n%+v", tt.file, got, tt.want)
			}
			// Decisions pair every call with its observation.
			for _, tr := range ts {
				for _, d := range Decisions(tr) {
					if !d.IsReply() && d.Observation < 0 && d.Tool != "finish" && d.Tool != "submit" {
						t.Errorf("Read(%s): decision %d (%s) has no observation", tt.file, d.Ordinal, d.Tool)
					}
				}
			}
		})
	}
}

func TestReadSWEMessagesOneToOne(t *testing.T) {
	// mini-swe-agent and SWE-agent keep the source's message list 1:1; the
	// OpenHands completion log adds its final response.
	for file, want := range map[string]int{"acme__calc-1.traj.json": 18, "acme__calc-1.traj": 18, "openhands_completion.json": 13} {
		ts, err := readAllTrajectories(sweFixture(t, file), file, FormatAuto)
		if err != nil || len(ts) != 1 || len(ts[0].Messages) != want {
			t.Errorf("Read(%s) = %d trajectories, err %v; want 1 with %d messages", file, len(ts), err, want)
		}
	}
	ts, _ := readAllTrajectories(sweFixture(t, "openhands_completion.json"), "openhands_completion.json", FormatAuto)
	if len(ts) == 1 && (len(ts[0].Tools) != 2 || ts[0].Tools[0].Name != "execute_bash") {
		t.Errorf("OpenHands tools = %+v, want the kwargs.tools schemas", ts[0].Tools)
	}
}

func TestReadOpenHandsOutput(t *testing.T) {
	ts, err := readAllTrajectories(sweFixture(t, "openhands_output.jsonl"), "runs/openhands_output.jsonl", FormatAuto)
	if err != nil || len(ts) != 2 {
		t.Fatalf("Read = %d trajectories, %v; want 2", len(ts), err)
	}
	a, b := SWEMetaOf(ts[0]), SWEMetaOf(ts[1])
	if a.InstanceID != "acme__calc-1" || a.Submission == nil || !strings.Contains(*a.Submission, "pkg/calc.py") || a.Model != "test-llm" || a.ExitStatus != "finished" {
		t.Errorf("record 0 meta = %+v", a)
	}
	if b.InstanceID != "acme__calc-2" || !strings.HasPrefix(b.ExitStatus, "RuntimeError") {
		t.Errorf("record 1 meta = %+v, want the run's error as exit status", b)
	}
	if ts[1].Source.Index != 1 || ts[1].Source.Line != 2 {
		t.Errorf("record 1 source = %+v, want index 1 line 2", ts[1].Source)
	}
	if len(ts[0].Hidden) != 1 || ts[0].Hidden[0].Kind != "swe_instance" {
		t.Errorf("record 0 hidden = %+v, want the instance as collector context", ts[0].Hidden)
	}
}

func TestReadSWEInstanceFromPath(t *testing.T) {
	// OpenHands completion logs name their instance only in the path.
	ts, err := readAllTrajectories(sweFixture(t, "openhands_completion.json"),
		"llm_completions/django__django-11133/litellm_proxy__claude-3-5-sonnet-20241022-1733344523.6562629.json", FormatAuto)
	if err != nil || len(ts) != 1 || ts[0].ID != "django__django-11133" || SWEMetaOf(ts[0]).InstanceID != "django__django-11133" {
		t.Fatalf("Read = %+v, %v; want the instance id from the directory", ts, err)
	}
}

func TestReadSWEErrors(t *testing.T) {
	tests := []struct {
		name, in string
		format   Format
		field    string
		msg      string
	}{
		{"mini messages not an array", `{"info": {"mini_version": "1"}, "messages": 3, "instance_id": "a__b-1"}`, FormatMiniSWE, "messages", "expected an array of chat messages"},
		{"mini bad role", `{"info": {"mini_version": "1"}, "messages": [{"role": "robot", "content": "x"}]}`, FormatMiniSWE, "messages[0].role", "expected one of system, user, assistant, tool"},
		{"mini content not text", `{"info": {"mini_version": "1"}, "messages": [{"role": "user", "content": 5}]}`, FormatMiniSWE, "messages[0].content", "a string, null or a list of text parts"},
		{"swe-agent nothing", `{"trajectory": [], "history": [], "info": {}}`, FormatSWEAgent, "", "a history or trajectory list"},
		{"swe-agent bad step", `{"trajectory": [3], "info": {}}`, FormatSWEAgent, "trajectory[0]", "expected a step"},
		{"swe-agent call without name", `{"history": [{"role": "assistant", "content": "x", "tool_calls": [{"id": "1", "function": {"arguments": "{}"}}]}]}`, FormatSWEAgent, "history[0].tool_calls[0].function.name", "a non-empty tool name"},
		{"openhands empty messages", `{"messages": [], "response": {}, "kwargs": {}}`, FormatOpenHands, "messages", "a non-empty array"},
		{"openhands event not an object", `[{"action": "run", "source": "agent"}, 7]`, FormatOpenHands, "[1]", "an event object"},
		{"openhands scalar", `"x"`, FormatOpenHands, "", "an OpenHands completion log"},
		{"truncated", `{"info": {"mini_version": "1"}, "messages": [`, FormatAuto, "", "truncated JSON"},
		{"instances are not trajectories", `[{"instance_id": "a__b-1", "patch": "", "test_patch": ""}]`, FormatSWEInstances, "", "got SWE-bench instance metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAllTrajectories(strings.NewReader(tt.in), "x.json", tt.format)
			var ie *ImportError
			if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Read(%s) error = %v, want an *ImportError", tt.name, err)
			}
			if ie.Field != tt.field || !strings.Contains(err.Error(), tt.msg) || !strings.HasPrefix(err.Error(), "x.json: ") {
				t.Errorf("Read(%s) = %q (field %q); want field %q and %q", tt.name, err, ie.Field, tt.field, tt.msg)
			}
		})
	}
}

func TestReadSWEInstances(t *testing.T) {
	for _, file := range []string{"instances.jsonl", "instances_array.json", "instances_wrapped.json"} {
		var got []string
		for in, err := range ReadSWEInstances(sweFixture(t, file), file) {
			if err != nil {
				t.Fatalf("ReadSWEInstances(%s): %v", file, err)
			}
			got = append(got, in.InstanceID+" "+strings.Join(in.PatchFiles(), ",")+" "+strings.Join(in.FailToPass, ","))
		}
		want := map[string][]string{
			"instances.jsonl":        {"acme__calc-1 pkg/calc.py tests/test_calc.py::test_div_zero", "acme__calc-2 pkg/other.py tests/test_calc.py::test_div_zero"},
			"instances_array.json":   {"acme__calc-1 pkg/calc.py tests/test_calc.py::test_div_zero"}, // the identical repeat is yielded once
			"instances_wrapped.json": {"acme__calc-2 pkg/other.py tests/test_calc.py::test_div_zero"},
		}[file]
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ReadSWEInstances(%s) = %q, want %q", file, got, want)
		}
	}
	bad := []struct {
		name, in, field, msg string
	}{
		{"no id", `{"patch": "x", "FAIL_TO_PASS": []}`, "instance_id", "a non-empty instance id"},
		{"no patch", `{"instance_id": "a__b-1"}`, "patch", "the reference patch"},
		{"bad test list", `{"instance_id": "a__b-1", "patch": "", "FAIL_TO_PASS": "not json"}`, "FAIL_TO_PASS", "a list of test names"},
		{"test list of numbers", `[{"instance_id": "a__b-1", "patch": "", "PASS_TO_PASS": [1]}]`, "[0].PASS_TO_PASS[0]", "a test name"},
		{"repeat with other content", `{"instance_id": "a__b-1", "patch": "x"}` + "\n" + `{"instance_id": "a__b-1", "patch": "y"}`, "instance_id", "repeated with different content"},
		{"scalar", `3`, "", "an instance object"},
		{"empty", ``, "", "file is empty"},
	}
	for _, tt := range bad {
		var err error
		for _, e := range ReadSWEInstances(strings.NewReader(tt.in), "i.json") {
			if e != nil {
				err = e
			}
		}
		var ie *ImportError
		if !errors.As(err, &ie) || ie.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ReadSWEInstances(%s) error = %v (field %q); want field %q and %q", tt.name, err, fieldOf(ie), tt.field, tt.msg)
		}
	}
}

func fieldOf(ie *ImportError) string {
	if ie == nil {
		return "<none>"
	}
	return ie.Field
}

func TestReadSWEResults(t *testing.T) {
	tests := []struct {
		file string
		path string
		want []SWEResult
	}{
		{"report_keyed.json", "report_keyed.json", []SWEResult{{"acme__calc-1", true}, {"acme__calc-2", false}}},
		{"logs/acme__calc-1/report.json", "logs/acme__calc-1/report.json", []SWEResult{{"acme__calc-1", true}}},
		{"results_summary.json", "results_summary.json", []SWEResult{{"acme__calc-1", true}, {"acme__calc-2", false}}},
		{"sbcli_report.json", "sbcli_report.json", []SWEResult{{"acme__calc-1", true}, {"acme__calc-2", false}, {"acme__calc-3", false}}},
		{"instance_acme__calc-2.log", "instance_acme__calc-2.log", []SWEResult{{"acme__calc-2", false}}},
		// OpenHands' markdown summary: resolved and unresolved sections, an
		// error instance counts as unresolved, calc-4 (unresolved and empty
		// patch) once, the incomplete calc-6 not at all.
		{"output.swebench_eval.md", "output.swebench_eval.md", []SWEResult{{"acme__calc-1", true}, {"acme__calc-2", false}, {"acme__calc-4", false}, {"acme__calc-5", false}}},
	}
	for _, tt := range tests {
		var got []SWEResult
		for r, err := range ReadSWEResults(sweFixture(t, tt.file), tt.path) {
			if err != nil {
				t.Fatalf("ReadSWEResults(%s): %v", tt.file, err)
			}
			got = append(got, r)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ReadSWEResults(%s) = %+v, want %+v", tt.file, got, tt.want)
		}
	}
	// A bare report.json uploaded without its directory names no instance.
	var err error
	for _, e := range ReadSWEResults(sweFixture(t, "logs/acme__calc-1/report.json"), "report.json") {
		err = e
	}
	if err == nil || !strings.Contains(err.Error(), "without an instance id") {
		t.Errorf("ReadSWEResults(report.json without a path) error = %v", err)
	}
	for _, in := range []string{`{"a": 1}`, `[{"instance_id": "x"}]`, "just text"} {
		var err error
		for _, e := range ReadSWEResults(strings.NewReader(in), "r.json") {
			err = e
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("ReadSWEResults(%q) error = %v, want ErrInvalid", in, err)
		}
	}
}
