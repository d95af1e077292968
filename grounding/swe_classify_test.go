package grounding

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// bash is a "bash" call with a command.
func bash(cmd string) ToolCall {
	return ToolCall{Name: "bash", Arguments: sweArgs("command", cmd)}
}

// call is a call of tool with JSON arguments.
func call(tool string, args map[string]any) ToolCall {
	b, _ := json.Marshal(args)
	return ToolCall{Name: tool, Arguments: b}
}

// classifySeq classifies calls in order with one tracker (earlier calls
// set up created files, the open file and the working directory) and
// returns the last step.
func classifySeq(persistent bool, calls ...ToolCall) SWEStep {
	tr := newSWETracker(persistent)
	var s SWEStep
	for _, c := range calls {
		s = SWEStep{}
		tr.classify(&s, c)
	}
	return s
}

func TestClassifyCommands(t *testing.T) {
	createRepro := bash("cat <<'EOF' > reproduce_issue.py\nprint(1)\nEOF")
	createScratch := bash("cat <<'EOF' > check_fix.py\nprint(1)\nEOF")
	editor := bash("cat <<'EOF' > fix_calc.py\nsrc = open('pkg/calc.py').read()\nwith open('pkg/calc.py', 'w') as f:\n    f.write(src)\nEOF")
	tests := []struct {
		name       string
		persistent bool
		calls      []ToolCall
		class      SWEStepClass
		sources    []string // want s.Sources (nil: none)
		script     string   // want s.Script
	}{
		// Search, view and read-only commands.
		{"ls", false, []ToolCall{bash("ls -la")}, SWEClassExplore, nil, ""},
		{"grep pipe head", false, []ToolCall{bash("grep -rn 'def div' pkg | head -5")}, SWEClassExplore, nil, ""},
		{"nl pipe sed -n", false, []ToolCall{bash("nl -ba pkg/calc.py | sed -n '1,20p'")}, SWEClassExplore, nil, ""},
		{"cat and find with &&", false, []ToolCall{bash("cd /testbed && find . -name '*.py' && cat setup.py")}, SWEClassExplore, nil, ""},
		{"git diff", false, []ToolCall{bash("git diff HEAD -- pkg")}, SWEClassExplore, nil, ""},
		{"python --version", false, []ToolCall{bash("python3 --version")}, SWEClassExplore, nil, ""},
		{"for loop of greps", false, []ToolCall{bash("for f in a.py b.py; do grep -n x $f; done")}, SWEClassExplore, nil, ""},
		{"str_replace_editor view", false, []ToolCall{call("str_replace_editor", map[string]any{"command": "view", "path": "/testbed/pkg/calc.py"})}, SWEClassExplore, nil, ""},
		{"swe-agent open", false, []ToolCall{call("open", map[string]any{"path": "pkg/calc.py", "line_number": "3"})}, SWEClassExplore, nil, ""},
		{"swe-agent search_dir", false, []ToolCall{call("search_dir", map[string]any{"search_term": "div"})}, SWEClassExplore, nil, ""},

		// Reproduction scripts, test files and test runs.
		{"heredoc repro script", false, []ToolCall{createRepro}, SWEClassReproWrite, nil, ""},
		{"run repro script", false, []ToolCall{createRepro, bash("python3 reproduce_issue.py")}, SWEClassReproRun, nil, "reproduce_issue.py"},
		{"run repro never seen created", false, []ToolCall{bash("python repro.py")}, SWEClassReproRun, nil, "repro.py"},
		// Writing a script and running it in one command is a run (write + run).
		{"write and run in one step", false, []ToolCall{bash("cat > reproduce.py <<EOF\nx\nEOF\npython reproduce.py")}, SWEClassReproRun, nil, "reproduce.py"},
		{"write a test and pytest it with &&", false, []ToolCall{bash("cat > test_loc.py <<'EOF' && pytest test_loc.py\ndef test_a(): assert 0\nEOF")}, SWEClassReproRun, nil, "test_loc.py"},
		{"write to /tmp and run", true, []ToolCall{bash("cat > /tmp/t.py << 'EOF'\nimport pkg\nEOF\npython /tmp/t.py")}, SWEClassReproRun, nil, "/tmp/t.py"},
		{"write a script into the package and run it", false, []ToolCall{bash("cat > pkg/try_div.py <<'EOF'\nfrom pkg.calc import div\nprint(div(1, 0))\nEOF\npython pkg/try_div.py")}, SWEClassReproRun, nil, "pkg/try_div.py"},
		{"rerun a script written into the package", false, []ToolCall{bash("cat > pkg/t.py <<'EOF'\nprint(1)\nEOF\npython pkg/t.py"), bash("python pkg/t.py")}, SWEClassReproRun, nil, "pkg/t.py"},
		{"write into the package without running: an edit", false, []ToolCall{bash("cat > pkg/t.py <<'EOF'\nprint(1)\nEOF")}, SWEClassEdit, []string{"pkg/t.py"}, ""},
		{"append to repro and rerun", false, []ToolCall{createRepro, bash("echo 'print(2)' >> reproduce_issue.py && python reproduce_issue.py")}, SWEClassReproRun, nil, "reproduce_issue.py"},
		{"echo into test file", false, []ToolCall{bash("echo 'def test_x(): assert 0' > test_x.py")}, SWEClassReproWrite, nil, ""},
		{"scratch script created and run", false, []ToolCall{createScratch, bash("python check_fix.py")}, SWEClassReproRun, nil, "check_fix.py"},
		{"python -m pytest", false, []ToolCall{bash("python -m pytest tests/test_calc.py -x -q")}, SWEClassReproRun, nil, ""},
		{"pytest on the agent's test", false, []ToolCall{bash("echo 'def test_x(): pass' > test_div.py"), bash("pytest test_div.py::test_x")}, SWEClassReproRun, nil, "test_div.py"},
		{"tox", false, []ToolCall{bash("tox -e py39")}, SWEClassReproRun, nil, ""},
		{"django runtests", false, []ToolCall{bash("./tests/runtests.py auth_tests --parallel 1")}, SWEClassReproRun, nil, ""},
		{"python tests/runtests.py", false, []ToolCall{bash("python3 tests/runtests.py sitemaps_tests")}, SWEClassReproRun, nil, ""},
		{"sympy bin/test", false, []ToolCall{bash("bin/test sympy/core")}, SWEClassReproRun, nil, ""},
		{"manage.py test", false, []ToolCall{bash("python manage.py test app")}, SWEClassReproRun, nil, ""},
		{"appended test in repo then runtests label", false, []ToolCall{
			bash("cat >> tests/auth_tests/test_validators.py <<'EOF'\ndef test_newline(): pass\nEOF"),
			bash("python tests/runtests.py auth_tests.test_validators")}, SWEClassReproRun, nil, "tests/auth_tests/test_validators.py"},
		{"str_replace_editor create repro", false, []ToolCall{call("str_replace_editor", map[string]any{"command": "create", "path": "/workspace/reproduce.py", "file_text": "print(1)"})}, SWEClassReproWrite, nil, ""},
		{"swe-agent create then edit repro", false, []ToolCall{call("create", map[string]any{"filename": "reproduce.py"}), call("edit", map[string]any{"start_line": "1", "end_line": "1", "replacement": "x"})}, SWEClassReproWrite, nil, ""},
		{"tool run in a repro folder", false, []ToolCall{bash("mkdir -p reproduce_issue/src"), bash("cd reproduce_issue && python3 -m pylint --recursive=y src/")}, SWEClassReproRun, nil, "reproduce_issue"},
		{"mkdir repro folder", false, []ToolCall{bash("mkdir reproduce_issue")}, SWEClassReproWrite, nil, ""},
		{"cwd persists for a persistent shell", true, []ToolCall{call("str_replace_editor", map[string]any{"command": "create", "path": "/workspace/t.py", "file_text": "print(1)"}), bash("cd /workspace"), bash("python t.py")}, SWEClassReproRun, nil, "/workspace/t.py"},
		{"relative path against cd", false, []ToolCall{call("str_replace_editor", map[string]any{"command": "create", "path": "/workspace/check.py", "file_text": "print(1)"}), bash("cd /workspace/acme__calc__1.0 && python ../check.py")}, SWEClassReproRun, nil, "/workspace/check.py"},

		// Source edits.
		{"sed -i", false, []ToolCall{bash("sed -i 's/a \\/ b/a \\/ b if b else 0/' pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"sed -i then view", false, []ToolCall{bash("sed -i '3d' /testbed/pkg/calc.py && sed -n '1,5p' pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"perl -pi", false, []ToolCall{bash("perl -pi -e 's/x/y/' pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"heredoc over a source file", false, []ToolCall{bash("cat <<'EOF' > pkg/calc.py\ndef div(a, b): ...\nEOF")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"append to a source file", false, []ToolCall{bash("echo 'X = 1' >> pkg/__init__.py")}, SWEClassEdit, []string{"pkg/__init__.py"}, ""},
		{"str_replace_editor str_replace", false, []ToolCall{call("str_replace_editor", map[string]any{"command": "str_replace", "path": "/workspace/acme__calc__1.0/pkg/calc.py", "old_str": "a", "new_str": "b"})}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"str_replace_editor insert", false, []ToolCall{call("str_replace_editor", map[string]any{"command": "insert", "path": "/testbed/pkg/calc.py", "insert_line": 2, "new_str": "x"})}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"swe-agent edit of the open file", false, []ToolCall{call("open", map[string]any{"path": "pkg/calc.py"}), call("edit", map[string]any{"start_line": "2", "end_line": "2", "replacement": "x"})}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"swe-agent insert", false, []ToolCall{call("open", map[string]any{"path": "/acme__calc/pkg/calc.py"}), call("insert", map[string]any{"line_number": "1", "text": "x"})}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git apply heredoc", false, []ToolCall{bash("git apply <<'EOF'\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1 +1 @@\n-a\n+b\nEOF")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"python -c writing a file", false, []ToolCall{bash(`python -c "s=open('pkg/calc.py').read(); open('pkg/calc.py','w').write(s)"`)}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"editor script written", false, []ToolCall{editor}, SWEClassEdit, nil, ""},
		{"editor script run", false, []ToolCall{editor, bash("python3 fix_calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"edit then rerun repro", false, []ToolCall{createRepro, bash("sed -i 's/x/y/' pkg/calc.py && python reproduce_issue.py")}, SWEClassEdit, []string{"pkg/calc.py"}, "reproduce_issue.py"},

		// Submission and everything else.
		{"mini submit", false, []ToolCall{bash("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached")}, SWEClassSubmit, nil, ""},
		{"swe-agent submit", false, []ToolCall{call("submit", map[string]any{})}, SWEClassSubmit, nil, ""},
		{"openhands finish", false, []ToolCall{call("finish", map[string]any{})}, SWEClassSubmit, nil, ""},
		{"rm of the repro script", false, []ToolCall{createRepro, bash("rm reproduce_issue.py")}, SWEClassOther, nil, ""},
		{"pip install", false, []ToolCall{bash("pip install -e .")}, SWEClassOther, nil, ""},
		{"python -c experiment", false, []ToolCall{bash(`python3 -c "print(1/3)"`)}, SWEClassOther, nil, ""},
		// --help and -h read a program's usage: exploration, not a test run.
		{"runtests --help", false, []ToolCall{bash("./tests/runtests.py --help")}, SWEClassExplore, nil, ""},
		{"python script -h", false, []ToolCall{createRepro, bash("python reproduce_issue.py -h")}, SWEClassExplore, nil, ""},
		{"pytest -h piped", false, []ToolCall{bash("cd /testbed && pytest -h | grep runxfail")}, SWEClassExplore, nil, ""},
		{"python -m pylint --help", false, []ToolCall{bash("python -m pylint --help")}, SWEClassExplore, nil, ""},
		{"python -c with -h in its code args", false, []ToolCall{bash(`python -c "import sys; print(sys.argv)" -h`)}, SWEClassOther, nil, ""},

		// Putting back a file the agent edited reverts its patch: an edit.
		{"git checkout of an unedited file", false, []ToolCall{bash("git checkout pkg/calc.py")}, SWEClassOther, nil, ""},
		{"git checkout of an edited file", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git checkout pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git checkout -- edited file", true, []ToolCall{call("str_replace_editor", map[string]any{"command": "str_replace", "path": "/testbed/pkg/calc.py", "old_str": "a", "new_str": "b"}), bash("cd /testbed && git checkout -- pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git restore of an edited file", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git restore pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git checkout . after edits", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git checkout .")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git stash of edits", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git stash")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"git checkout of a file the build touched", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git checkout pyproject.toml")}, SWEClassOther, nil, ""},
		{"git checkout a branch", false, []ToolCall{bash("sed -i 's/a/b/' pkg/calc.py"), bash("git checkout main")}, SWEClassOther, nil, ""},
		{"revert then rerun", false, []ToolCall{createRepro, bash("sed -i 's/a/b/' pkg/calc.py"), bash("git checkout pkg/calc.py && python reproduce_issue.py")}, SWEClassEdit, []string{"pkg/calc.py"}, "reproduce_issue.py"},

		// Backup copies are not edits; moving a source file is.
		{"cp to .orig", false, []ToolCall{bash("cp pkg/calc.py pkg/calc.py.orig")}, SWEClassOther, nil, ""},
		{"cp to .bak then edit", false, []ToolCall{bash("cp pkg/calc.py /tmp/calc.py.bak && sed -i 's/a/b/' pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"restore from backup", false, []ToolCall{bash("cp pkg/calc.py.orig pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"mv a source file", false, []ToolCall{bash("mv pkg/calc.py pkg/arith.py")}, SWEClassEdit, []string{"pkg/calc.py", "pkg/arith.py"}, ""},
		{"mv a source file to a backup", false, []ToolCall{bash("mv pkg/calc.py pkg/calc.py.bak")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"mv the backup back", false, []ToolCall{bash("mv pkg/calc.py.orig pkg/calc.py")}, SWEClassEdit, []string{"pkg/calc.py"}, ""},
		{"mv a repro script away", false, []ToolCall{createRepro, bash("mv reproduce_issue.py /tmp/")}, SWEClassOther, nil, ""},
		{"heredoc into a .orig file", false, []ToolCall{bash("cat > pkg/calc.py.orig <<'EOF'\nx\nEOF")}, SWEClassOther, nil, ""},
		{"only cd and export", false, []ToolCall{bash("cd /testbed && export X=1")}, SWEClassOther, nil, ""},
		{"unknown program", false, []ToolCall{bash("frobnicate --all")}, SWEClassOther, nil, ""},
		{"read-only command into an output capture", false, []ToolCall{bash("grep -rn div pkg > /tmp/out.txt")}, SWEClassExplore, nil, ""},
		{"only an output capture", false, []ToolCall{bash("> /tmp/out.log")}, SWEClassOther, nil, ""},
		{"think", false, []ToolCall{call("think", map[string]any{"thought": "hmm"})}, SWEClassOther, nil, ""},
		{"unknown tool", false, []ToolCall{call("teleport", map[string]any{"to": "mars"})}, SWEClassOther, nil, ""},
		{"undecodable arguments", false, []ToolCall{{Name: "bash", RawArguments: "{not json"}}, SWEClassOther, nil, ""},
		{"empty command", false, []ToolCall{bash("")}, SWEClassOther, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := classifySeq(tt.persistent, tt.calls...)
			if s.Class != tt.class || !reflect.DeepEqual(s.Sources, tt.sources) || s.Script != tt.script {
				t.Errorf("classify(%s) = class %s, sources %q, script %q (%s); want %s, %q, %q",
					tt.name, s.Class, s.Sources, s.Script, s.Why, tt.class, tt.sources, tt.script)
			}
			if s.Why == "" {
				t.Errorf("classify(%s) gave no reason", tt.name)
			}
		})
	}
}

func TestClassifyRunAfterEdit(t *testing.T) {
	s := classifySeq(false, bash("cat > reproduce.py <<EOF\nx\nEOF"), bash("sed -i 's/a/b/' pkg/calc.py && python reproduce.py"))
	if !s.Modifies || !s.RunAfterEdit {
		t.Errorf("edit && rerun: Modifies %v RunAfterEdit %v, want both", s.Modifies, s.RunAfterEdit)
	}
	s = classifySeq(false, bash("python reproduce.py; sed -i 's/a/b/' pkg/calc.py"))
	if s.RunAfterEdit {
		t.Errorf("run before the edit: RunAfterEdit true, want false")
	}
}

func TestNormalizeSWEPath(t *testing.T) {
	tests := map[string]string{
		"./pkg/calc.py":                                "pkg/calc.py",
		"/testbed/django/http/response.py":             "django/http/response.py",
		"/workspace/django__django__3.0/django/x.py":   "django/x.py",
		"/pydicom__pydicom/pydicom/dataset.py":         "pydicom/dataset.py",
		"/repo/src/a.py":                               "src/a.py",
		"/workspace/reproduce.py":                      "/workspace/reproduce.py",
		"/tmp/out.txt":                                 "/tmp/out.txt",
		"pkg/../pkg/calc.py":                           "pkg/calc.py",
		"/testbed":                                     ".",
		`"quoted/path.py"`:                             "quoted/path.py",
		"/gpt4__x__default__t-0.00__install-1/file.py": "/gpt4__x__default__t-0.00__install-1/file.py",
	}
	for in, want := range tests {
		if got := normalizeSWEPath(in); got != want {
			t.Errorf("normalizeSWEPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSWEIsTestPath(t *testing.T) {
	for p, want := range map[string]bool{
		"tests/test_calc.py": true, "test_issue.py": true, "pkg/calc_test.py": true, "tests/auth/tests.py": true,
		"conftest.py": true, "tests/model_fields/models.py": true, "tests/missing_colon.py": false,
		"pkg/calc.py": false, "testing/test_skipping.py": true, "pkg/contest.py": false,
	} {
		if got := sweIsTestPath(p); got != want {
			t.Errorf("sweIsTestPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestSWEFailureSignal(t *testing.T) {
	tests := []struct {
		out     string
		errFlag bool
		want    bool
	}{
		{"Traceback (most recent call last):\n  File \"x.py\"\nZeroDivisionError: division by zero", false, true},
		{"AssertionError: 1 != 2", false, true},
		{"FAILED tests/test_x.py::test_a - assert 0", false, true},
		{"FAILURE: memoryview not handled correctly", false, true},
		{"Caught expected ValueError: max() arg is an empty sequence", false, true},
		{"Error: bad input", false, true},
		{"Bug reproduced!", false, true},
		{"ok\n[Command finished with exit code 1]", false, true},
		{"<returncode>2</returncode>", false, true},
		{"output", true, true},
		{"Script completed successfully, no errors. Result: True", false, false},
		{"Ran 4 tests in 0.01s\n\nOK", false, false},
		{"===== 5 passed in 0.12s =====", false, false},
		{"errors=0 failures=0", false, false},
		{"345", false, false},
		{"0 failed, 3 passed", false, false},
		{"Success! Lastmod: None\n[Command finished with exit code 0]", false, false},
		{"Exception ignored in: <function X.__del__>\nTraceback (most recent call last):\n  File \"t.py\"\nFileNotFoundError: [Errno 2] gone\nresult: 0o644", false, false},
	}
	for _, tt := range tests {
		if got, _ := sweFailureSignal(tt.out, tt.errFlag); got != tt.want {
			t.Errorf("sweFailureSignal(%q, %v) = %v, want %v", tt.out, tt.errFlag, got, tt.want)
		}
	}
}

func TestSWEStepsTurnsWithoutCalls(t *testing.T) {
	tr := &Trajectory{ID: "x", Messages: []Message{
		{Role: RoleUser, Content: "task"},
		{Role: RoleAssistant, Content: "two blocks"},
		{Role: RoleUser, Content: "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
		{Role: RoleAssistant, Content: "text only"},
		{Role: RoleAssistant, Content: "hidden", Visibility: Hidden, ToolCalls: []ToolCall{bash("ls")}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "a", Name: "bash", Arguments: sweArgs("command", "ls")}, {ID: "b", Name: "bash", Arguments: sweArgs("command", "pwd")}}},
		{Role: RoleTool, ToolCallID: "a", Content: "x"},
		{Role: RoleTool, ToolCallID: "b", Content: "y"},
	}}
	steps := SWESteps(tr)
	var got []string
	for _, s := range steps {
		got = append(got, fmt.Sprintf("%d/%d obs %d %s", s.Message, s.Call, s.Observation, s.Class))
	}
	want := []string{"1/-1 obs -1 other", "3/-1 obs -1 other", "5/0 obs 6 explore", "5/1 obs 7 explore"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SWESteps = %q, want %q", got, want)
	}
	if !strings.Contains(steps[0].Why, "format error") {
		t.Errorf("format-error turn Why = %q", steps[0].Why)
	}
}
