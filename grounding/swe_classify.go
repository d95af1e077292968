package grounding

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// SWEStepClass is what one SWE step does, before the router turns it into a
// stage (SPEC §5): the router reads only the class and its own state.
type SWEStepClass string

// Step classes.
const (
	// SWEClassExplore: search, view and read-only commands (ls, grep, cat,
	// sed -n, git diff, find_file, str_replace_editor view, …).
	SWEClassExplore SWEStepClass = "explore"
	// SWEClassReproWrite: creating or editing a reproduction script (a file
	// whose name contains "repro"), a test file, or another scratch script
	// the agent writes to exercise the code.
	SWEClassReproWrite SWEStepClass = "repro-write"
	// SWEClassReproRun: running a reproduction or scratch script, a test file
	// or the test suite (pytest, tox, runtests.py, manage.py test, …).
	SWEClassReproRun SWEStepClass = "repro-run"
	// SWEClassEdit: editing a source file of the repository (sed -i,
	// heredoc or redirect over a source file, str_replace_editor
	// str_replace/insert/create, SWE-agent edit/insert, a script that
	// rewrites files).
	SWEClassEdit SWEStepClass = "edit"
	// SWEClassSubmit: submitting (submit, finish, mini-swe-agent's
	// COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT).
	SWEClassSubmit SWEStepClass = "submit"
	// SWEClassOther: anything else (rm, pip install, inline python -c,
	// thinking, a turn without an action); labelled by the router's state.
	SWEClassOther SWEStepClass = "other"
)

// SWEStep is one agent step of a SWE trajectory: one tool call, or one
// assistant turn without any (a format error, a text reply).
type SWEStep struct {
	Index   int    // 0-based step number
	Message int    // the assistant message's index in Trajectory.Messages
	Call    int    // the call's index in the message, -1 for a turn without a call
	Tool    string // the called tool, "" without a call
	// Action is the action as a person would read it: the shell command,
	// or the tool and its main arguments ("str_replace_editor view /x.py").
	Action string
	// Observation is the index of the message answering the call, -1 when
	// none does.
	Observation int

	Class SWEStepClass
	// Why explains the class in words ("runs reproduce_issue.py: its name
	// contains repro").
	Why string
	// Written are the repository-relative (when recognisable) paths the step
	// writes; Sources the subset that are source files of the repository
	// (what a PATCH edits); Ran the scripts and test targets it runs.
	Written []string
	Sources []string
	Ran     []string
	// Script is the script the agent created (or a reproduction script) that
	// the step runs, directly or through a test runner; "" when it runs
	// none. Reproduction and verification are about these runs.
	Script string
	// Modifies is set when the step changes a source file (what the last
	// edit of verification means); RunAfterEdit when, within the step, a
	// script or test run follows that change (sed -i … && python repro.py).
	Modifies     bool
	RunAfterEdit bool
	// Reverts is set when the step's change puts the agent's edited files
	// back to their committed state (git checkout FILE, git stash).
	Reverts bool
	// Failure is set when the observation of a script or test run shows a
	// failure signal (traceback, error, FAILED, non-zero exit, …); Signal
	// quotes it. Other steps are not judged.
	Failure bool
	Signal  string
	// FailedIn is the file of the innermost traceback frame of a failure
	// (repository-relative when recognisable), "" without a traceback.
	FailedIn string
}

// sweTracker is the state classification carries from step to step: files
// the agent created (its scratch scripts), what they contain, the file
// SWE-agent's editor has open and the shell's working directory.
type sweTracker struct {
	created  map[string]bool     // normalized path → created by the agent
	authored map[string]bool     // test files the agent wrote into (new tests in existing files)
	editors  map[string][]string // scratch scripts that rewrite files → the files they name
	edited   map[string]bool     // source files the agent changed (what a git checkout of them reverts)
	scratch  map[string]bool     // files in the package the agent wrote and ran as scripts
	openFile string              // SWE-agent's current file
	// cwd is the shell's working directory as written (absolute or
	// repository-relative); "" is the repository root. persistent is set
	// for scaffolds whose shell keeps it between steps (SWE-agent,
	// OpenHands); mini-swe-agent runs every command in a fresh shell.
	cwd        string
	persistent bool
}

func newSWETracker(persistent bool) *sweTracker {
	return &sweTracker{created: map[string]bool{}, authored: map[string]bool{}, editors: map[string][]string{},
		edited: map[string]bool{}, scratch: map[string]bool{}, persistent: persistent}
}

// SWESteps lists the steps of t in order with their classes: every tool
// call of a visible assistant message is a step, and so is a visible
// assistant turn without calls. It never fails: a command it cannot parse is
// SWEClassOther.
func SWESteps(t *Trajectory) []SWEStep {
	obs := sweObservationIndex(t)
	tr := newSWETracker(SWEMetaOf(t).Scaffold != "mini-swe-agent")
	var steps []SWEStep
	for i, m := range t.Messages {
		if m.Role != RoleAssistant || m.IsHidden() {
			continue
		}
		if len(m.ToolCalls) == 0 {
			s := SWEStep{Index: len(steps), Message: i, Call: -1, Observation: -1, Class: SWEClassOther,
				Why: "a turn without an action"}
			if i+1 < len(t.Messages) && t.Messages[i+1].Role == RoleUser && sweIsFormatError(t.Messages[i+1].Content) {
				s.Why = "a turn whose action could not be parsed (format error)"
			}
			steps = append(steps, s)
			continue
		}
		for k, c := range m.ToolCalls {
			s := SWEStep{Index: len(steps), Message: i, Call: k, Tool: c.Name, Observation: -1}
			if o, ok := obs[[2]int{i, k}]; ok {
				s.Observation = o
			}
			var out string
			var errFlag bool
			if s.Observation >= 0 {
				out = t.Messages[s.Observation].Content
				errFlag = t.Messages[s.Observation].Error
			}
			tr.classify(&s, c)
			// Only runs are judged: diagnostics read failure signals of
			// script and test runs, and scanning every file listing for
			// them would dominate the cost of diagnosis.
			if s.Observation >= 0 && (s.Script != "" || s.Class == SWEClassReproRun || len(s.Ran) > 0) {
				s.Failure, s.Signal = sweFailureSignal(out, errFlag)
				if s.Failure {
					s.FailedIn = sweInnermostFrame(out)
				}
				if s.Script != "" && sweNotRun(out, s.Script) {
					s.Why += " (but the script was not found, so it did not run)"
					s.Script, s.Failure, s.Signal = "", false, ""
				}
			}
			tr.observe(out)
			steps = append(steps, s)
		}
	}
	return steps
}

var sweFrameRe = regexp.MustCompile(`(?m)^\s*File "([^"]+)", line \d+`)

// sweInnermostFrame returns the file of the last frame of the last Python
// traceback in out, normalized; "" when out has none.
func sweInnermostFrame(out string) string {
	i := strings.LastIndex(out, "Traceback (most recent call last)")
	if i < 0 {
		return ""
	}
	m := sweFrameRe.FindAllStringSubmatch(out[i:], -1)
	if m == nil {
		return ""
	}
	return normalizeSWEPath(m[len(m)-1][1])
}

var sweNotFoundRe = regexp.MustCompile(`(?i)can't open file ['"]?([^'"\s:]+)|No such file or directory: ['"]?([^'"\s]+)|file or directory not found: ([^\s]+)|ERROR: file (?:or directory )?not found: ([^\s]+)`)

// sweNotRun reports whether an observation says the script could not be found
// (python: can't open file 'x.py'), so the run never happened.
func sweNotRun(out, script string) bool {
	if !strings.Contains(out, "No such file") && !strings.Contains(out, "can't open") && !strings.Contains(out, "not found") {
		return false
	}
	base := path.Base(script)
	for _, m := range sweNotFoundRe.FindAllStringSubmatch(out, -1) {
		for _, g := range m[1:] {
			if g != "" && path.Base(strings.TrimRight(g, "'\",.")) == base {
				return true
			}
		}
	}
	return false
}

// sweObservationIndex maps (assistant message, call) to the tool message
// answering it, matching ids oldest-first like Decisions.
func sweObservationIndex(t *Trajectory) map[[2]int]int {
	out := make(map[[2]int]int)
	pending := make(map[string][][2]int)
	for i, m := range t.Messages {
		switch m.Role {
		case RoleAssistant:
			for k, c := range m.ToolCalls {
				pending[c.ID] = append(pending[c.ID], [2]int{i, k})
			}
		case RoleTool:
			q := pending[m.ToolCallID]
			if len(q) == 0 {
				continue
			}
			out[q[0]] = i
			pending[m.ToolCallID] = q[1:]
		}
	}
	return out
}

var sweFormatErrorRe = regexp.MustCompile(`(?i)^\s*(please always provide exactly one action|your output was malformed|format error)`)

func sweIsFormatError(s string) bool { return sweFormatErrorRe.MatchString(s) }

// sweCallArgs decodes a call's arguments into a map of strings (numbers and
// booleans rendered as JSON); nil when they are not an object.
func sweCallArgs(c ToolCall) map[string]string {
	if jsonKind(c.Arguments) != '{' || !json.Valid(c.Arguments) {
		return nil
	}
	out := make(map[string]string, 4)
	jsonMembers(c.Arguments, func(key []byte, v json.RawMessage) {
		switch jsonKind(v) {
		case '"':
			out[string(key)] = unquoteJSON(v)
		default:
			out[string(key)] = strings.TrimSpace(string(v))
		}
	})
	return out
}

// classify sets the step's Action, Class, Why and effects from the call,
// updating the tracker.
func (tr *sweTracker) classify(s *SWEStep, c ToolCall) {
	args := sweCallArgs(c)
	name := strings.ToLower(c.Name)
	switch name {
	case "bash", "execute_bash", "shell", "run", "terminal", "run_command", "cmd":
		cmd := sweFirst(args["command"], args["cmd"], c.RawArguments)
		s.Action = cmd
		tr.classifyShell(s, cmd)
	case "str_replace_editor", "str_replace_based_edit_tool", "editor", "file_editor":
		tr.classifyEditor(s, args)
	case "open", "goto", "scroll_up", "scroll_down", "find_file", "search_dir", "search_file", "view", "read", "read_file",
		"filemap", "browser", "web_read", "fetch", "search", "grep", "find", "ls", "list_files":
		s.Action = strings.TrimSpace(name + " " + sweJoinArgs(args))
		s.Class, s.Why = SWEClassExplore, name+" only reads"
		if p := sweFirst(args["path"], args["file"], args["filename"]); name == "open" && p != "" {
			tr.openFile = tr.resolve(p)
			s.Why = "opens " + tr.openFile + " to read it"
		}
	case "create":
		p := sweFirst(args["filename"], args["path"], args["file"])
		s.Action = "create " + p
		if p == "" {
			s.Class, s.Why = SWEClassOther, "create without a file name"
			return
		}
		np := tr.resolve(p)
		tr.openFile = np
		tr.created[np] = true
		tr.remember(np, sweFirst(args["file_text"], args["content"]))
		tr.write(s, np, "creates")
	case "edit", "insert", "append", "replace", "edit_file", "write", "write_file":
		s.Action = strings.TrimSpace(name + " " + sweJoinArgs(args))
		p := sweFirst(args["path"], args["file"], args["filename"])
		np := tr.openFile
		if p != "" {
			np = tr.resolve(p)
		}
		if np == "" {
			s.Class, s.Why, s.Modifies = SWEClassEdit, name+" edits the open file (unknown)", true
			return
		}
		if name == "write" || name == "write_file" {
			tr.remember(np, sweFirst(args["content"], args["file_text"]))
		}
		tr.write(s, np, "edits")
	case "submit", "finish", "submit_patch", "done":
		s.Action = name
		s.Class, s.Why = SWEClassSubmit, "submits the work"
	case "think":
		s.Action = "think"
		s.Class, s.Why = SWEClassOther, "thinks; no command"
	case "execute_ipython_cell", "ipython", "python":
		code := sweFirst(args["code"], args["command"])
		s.Action = code
		tr.classifyInline(s, code, "runs inline Python")
	default:
		s.Action = strings.TrimSpace(c.Name + " " + sweJoinArgs(args))
		if cmd := args["command"]; cmd != "" && len(args) == 1 {
			s.Action = cmd
			tr.classifyShell(s, cmd)
			return
		}
		s.Class, s.Why = SWEClassOther, "unknown tool "+c.Name
	}
}

var swePromptCwdRe = regexp.MustCompile(`(?m)@[\w.\-]+:(/[^\s#$]*)\s*[#$]\s*(?:\n|$)`)

// observe picks up what an observation says about the session: SWE-agent
// prints "(Open file: /path)" and "(Current directory: /path)" after every
// command, OpenHands the shell prompt with its directory.
func (tr *sweTracker) observe(out string) {
	if !tr.persistent { // mini-swe-agent prints neither
		return
	}
	tail := out[max(0, len(out)-512):]
	if f := sweFooter(tail, "(Open file: "); f != "" && f != "n/a" {
		tr.openFile = tr.resolve(f)
	}
	if d := sweFooter(tail, "(Current directory: "); d != "" {
		tr.cwd = d
	} else if strings.Contains(tail, "@") {
		if m := swePromptCwdRe.FindAllStringSubmatch(tail, -1); m != nil {
			tr.cwd = m[len(m)-1][1]
		}
	}
}

func sweFooter(out, marker string) string {
	i := strings.LastIndex(out, marker)
	if i < 0 {
		return ""
	}
	rest := out[i+len(marker):]
	if j := strings.IndexByte(rest, ')'); j > 0 {
		return strings.TrimSpace(rest[:j])
	}
	return ""
}

func (tr *sweTracker) classifyEditor(s *SWEStep, args map[string]string) {
	cmd := args["command"]
	p := args["path"]
	s.Action = strings.TrimSpace("str_replace_editor " + cmd + " " + p)
	np := tr.resolve(p)
	switch cmd {
	case "view", "":
		s.Class, s.Why = SWEClassExplore, "views "+sweOr(np, "a file")+" (read-only)"
	case "create":
		tr.created[np] = true
		tr.remember(np, args["file_text"])
		tr.write(s, np, "creates")
	case "str_replace", "insert", "undo_edit", "append", "edit":
		tr.write(s, np, "edits")
	default:
		s.Class, s.Why = SWEClassOther, "editor command "+cmd
	}
}

func sweOr(s, what string) string {
	if s == "" {
		return what
	}
	return s
}

func sweFirst(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func sweJoinArgs(args map[string]string) string {
	var parts []string
	for _, k := range []string{"path", "file", "filename", "file_name", "search_term", "dir", "line_number", "start_line", "end_line"} {
		if v := args[k]; v != "" {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

// sweFileKind says what a written file is, for the router.
type sweFileKind int

const (
	sweSource  sweFileKind = iota // a source file of the repository
	sweRepro                      // a reproduction script or folder: its path contains "repro"
	sweTest                       // a test file (test_*.py, *_test.py, tests/<pkg>/…)
	sweScratch                    // another script or note the agent created outside the package
	sweEditor                     // a scratch script that rewrites other files
	sweJunk                       // an output capture (/tmp/out.txt, *.log)
	sweBackup                     // a backup copy (calc.py.orig, calc.py.bak, calc.py~)
)

// sweRepoTopFiles are files at a repository's root that belong to it even
// when an agent rewrites them whole.
var sweRepoTopFiles = map[string]bool{
	"setup.py": true, "setup.cfg": true, "pyproject.toml": true, "tox.ini": true, "makefile": true,
	"manifest.in": true, "readme.md": true, "readme.rst": true, "changelog.md": true, "changes.rst": true,
	"conftest.py": true, "pytest.ini": true, ".gitignore": true,
}

// kindOf classifies a normalized path.
func (tr *sweTracker) kindOf(p string) sweFileKind {
	base := strings.ToLower(path.Base(p))
	lp := strings.ToLower(p)
	outside := strings.HasPrefix(p, "/") // outside the repository root
	top := !strings.Contains(p, "/")
	ext := path.Ext(base)
	switch {
	case sweIsBackupName(base):
		return sweBackup
	case strings.Contains(lp, "repro"):
		return sweRepro
	case tr.editors[p] != nil:
		return sweEditor
	case tr.scratch[p]:
		return sweScratch
	case sweIsTestPath(lp):
		return sweTest
	case (ext == ".log" || ext == ".out" || ext == ".txt" || ext == ".err") && (outside || top):
		return sweJunk
	case tr.created[p] && (outside || top && !sweRepoTopFiles[base] || sweScratchName(base)):
		return sweScratch
	case outside:
		return sweScratch // a file outside the repository is never part of the fix
	}
	return sweSource
}

// sweIsBackupName reports whether a (lowercased) base name is a backup copy
// of another file: calc.py.orig, calc.py.bak, calc.py.backup, calc.py.old,
// calc.py.save, calc.py~. Such a copy is never part of a fix, and neither
// is writing it.
func sweIsBackupName(base string) bool {
	if strings.HasSuffix(base, "~") {
		return true
	}
	switch path.Ext(base) {
	case ".orig", ".bak", ".backup", ".old", ".save", ".rej":
		return true
	}
	return false
}

var sweScratchNameRe = regexp.MustCompile(`^(debug|verify|check|demo|example|sample|scratch|tmp|temp|try|manual|inspect|show|print|run_|script)`)

func sweScratchName(base string) bool { return sweScratchNameRe.MatchString(base) }

// sweIsTestPath reports whether a (lowercased) path names a test file: a
// test-named file (test_*.py, *_test.py, tests.py, conftest.py), or a file
// at least two levels below a tests/ or testing/ folder
// (tests/model_fields/models.py; but not tests/missing_colon.py, which
// toy repositories use for the code under test).
func sweIsTestPath(lp string) bool {
	base := path.Base(lp)
	stem := strings.TrimSuffix(base, path.Ext(base))
	switch {
	case strings.HasPrefix(base, "test_"), strings.HasPrefix(base, "tests_"),
		strings.HasSuffix(stem, "_test"), strings.HasSuffix(stem, "_tests"),
		base == "tests.py", base == "test.py", base == "conftest.py":
		return true
	}
	segs := strings.Split(lp, "/")
	for i, seg := range segs {
		if (seg == "tests" || seg == "testing") && len(segs)-i-1 >= 2 {
			return true
		}
	}
	return false
}

// remember keeps what the agent wrote into a new file. A scratch script
// whose code writes files and names files of the repository (package paths
// such as "pylint/lint/pylinter.py") is an editor script: running it edits
// those files. A script that only writes its own data files is not.
func (tr *sweTracker) remember(p, content string) {
	delete(tr.editors, p)
	lp := strings.ToLower(p)
	if content == "" || strings.Contains(lp, "repro") || sweIsTestPath(lp) || !sweWritesFiles(content) ||
		strings.Contains(p, "/") && !strings.HasPrefix(p, "/") {
		return
	}
	var targets []string
	for _, m := range swePathLiteralRe.FindAllStringSubmatch(content, -1) {
		t := tr.resolve(m[1])
		if strings.Contains(t, "/") && !strings.HasPrefix(t, "/") && !tr.created[t] && !sweIsTestPath(strings.ToLower(t)) &&
			!strings.Contains(strings.ToLower(t), "repro") {
			targets = sweAppendUnique(targets, t)
		}
	}
	if len(targets) > 0 {
		tr.editors[p] = targets
	}
}

var swePathLiteralRe = regexp.MustCompile(`['"]((?:\.{0,2}/)?[\w.\-]+(?:/[\w.\-]+)+\.(?:py|pyx|pyi|c|h|cc|cpp|hpp|js|ts|go|rs|java|rb|php|txt|rst|md|cfg|toml|ini|json|yaml|yml|pony))['"]`)

// write records that the step writes p and sets its class from what p is.
func (tr *sweTracker) write(s *SWEStep, p, verb string) {
	s.Written = sweAppendUnique(s.Written, p)
	k := tr.kindOf(p)
	if k == sweTest {
		tr.authored[p] = true
	}
	switch k {
	case sweRepro, sweTest, sweScratch:
		s.Class, s.Why = SWEClassReproWrite, verb+" "+p+": "+sweDescribeKind(k)
	case sweEditor:
		s.Class, s.Why = SWEClassEdit, verb+" "+p+": "+sweDescribeKind(k)
	case sweJunk:
		s.Class, s.Why = SWEClassOther, "writes "+p+", an output capture"
	case sweBackup:
		s.Class, s.Why = SWEClassOther, verb+" "+p+": "+sweDescribeKind(k)
	default:
		tr.edited[p] = true
		s.Sources = sweAppendUnique(s.Sources, p)
		s.Class, s.Why, s.Modifies = SWEClassEdit, verb+" "+p+", a source file", true
	}
}

func sweAppendUnique(ss []string, s string) []string {
	for _, x := range ss {
		if x == s {
			return ss
		}
	}
	return append(ss, s)
}

var sweWritesFilesRe = regexp.MustCompile(`open\([^)]*['"][wa]\+?['"]|\.write_text\(|\.write_bytes\(|open\([^)]*mode\s*=\s*['"][wa]|shutil\.(copy|move)|os\.replace\(|fileinput\.input\([^)]*inplace`)

// sweWritesFiles reports whether Python code writes files.
func sweWritesFiles(code string) bool {
	if !strings.Contains(code, "open(") && !strings.Contains(code, ".write_") && !strings.Contains(code, "shutil.") &&
		!strings.Contains(code, "os.replace(") && !strings.Contains(code, "fileinput") {
		return false
	}
	return sweWritesFilesRe.MatchString(code)
}

var swePyOpenWriteRe = regexp.MustCompile(`open\(\s*(?:r|f)?['"]([^'"]+)['"]\s*,\s*['"][wa]`)

// sweInlineWrites returns the literal file paths Python code opens for writing.
func sweInlineWrites(code string) []string {
	var out []string
	for _, m := range swePyOpenWriteRe.FindAllStringSubmatch(code, -1) {
		out = sweAppendUnique(out, m[1])
	}
	return out
}

// classifyInline classifies inline code (an IPython cell): it edits when it
// writes files, else it is SWEClassOther.
func (tr *sweTracker) classifyInline(s *SWEStep, code, what string) {
	if !sweWritesFiles(code) {
		s.Class, s.Why = SWEClassOther, what+"; neither a search nor a script or test run"
		return
	}
	files := sweInlineWrites(code)
	if len(files) == 0 {
		s.Class, s.Why, s.Modifies = SWEClassEdit, what+" that writes files", true
		return
	}
	for _, f := range files {
		tr.write(s, tr.resolve(f), "rewrites")
	}
	s.Why = what + " that " + s.Why
}

// resolve makes p repository-relative against the working directory.
func (tr *sweTracker) resolve(p string) string { return sweResolveIn(tr.cwd, p) }

func sweResolveIn(cwd, p string) string {
	p = strings.Trim(strings.TrimSpace(p), `"'`)
	if p == "" {
		return ""
	}
	if !strings.HasPrefix(p, "/") && cwd != "" && cwd != "." {
		p = path.Join(cwd, p)
	}
	return normalizeSWEPath(p)
}

// normalizeSWEPath makes a path repository-relative where it can: it strips
// "./", the a/ b/ of diffs, and the usual checkout roots (/testbed,
// /workspace/<owner>__<repo>__<version>, /<owner>__<repo>, /repo). Paths
// outside the repository stay absolute.
func normalizeSWEPath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), `"'`)
	if p == "" {
		return ""
	}
	p = path.Clean(p)
	if strings.HasPrefix(p, "/") {
		parts := strings.SplitN(p[1:], "/", 3)
		switch {
		case parts[0] == "testbed" || parts[0] == "repo":
			p = strings.Join(parts[1:], "/")
		case parts[0] == "workspace" && len(parts) > 1 && strings.Contains(parts[1], "__"):
			p = strings.Join(parts[2:], "/")
		case strings.Count(parts[0], "__") == 1:
			p = strings.Join(parts[1:], "/")
		}
		if p == "" {
			return "."
		}
	}
	return p
}

// sweSetupCommands change the shell's state but neither read nor write the
// repository; they do not weigh on a step's class.
var sweSetupCommands = map[string]bool{
	"cd": true, "export": true, "source": true, ".": true, "set": true, "unset": true, "alias": true,
	"pushd": true, "popd": true, "ulimit": true, "true": true, ":": true, "clear": true, "wait": true,
	"trap": true, "shopt": true, "hash": true, "umask": true, "sleep": true,
}

// sweEffects accumulates what the simple commands of one step do.
type sweEffects struct {
	edits       []string // source files modified ("" for unknown targets)
	editWhy     string
	editorMade  bool // an editor script was written (edit class, no modification yet)
	reproWrites []string
	reproWhy    string
	runs        []string
	runWhy      string
	script      string
	runAfter    bool // a run came after an edit within the step
	explore     int
	other       int
	otherWhat   string
	junk        int
	backupWhy   string // a backup copy was written (calc.py.orig)
}

func (e *sweEffects) edit(p, why string) {
	e.edits = sweAppendUnique(e.edits, p)
	if e.editWhy == "" {
		e.editWhy = why
	}
}

func (e *sweEffects) run(target, why, script string) {
	e.runs = sweAppendUnique(e.runs, target)
	if e.runWhy == "" {
		e.runWhy = why
	}
	if e.script == "" {
		e.script = script
	}
	if len(e.edits) > 0 {
		e.runAfter = true
	}
}

func (e *sweEffects) misc(what string) {
	e.other++
	if e.otherWhat == "" {
		e.otherWhat = what
	}
}

// note records a write of p according to what p is.
func (tr *sweTracker) note(e *sweEffects, s *SWEStep, p, why string) {
	s.Written = sweAppendUnique(s.Written, p)
	k := tr.kindOf(p)
	if k == sweTest {
		tr.authored[p] = true
	}
	switch k {
	case sweSource:
		tr.edited[p] = true
		e.edit(p, why)
	case sweBackup:
		if e.backupWhy == "" {
			e.backupWhy = why + ": " + sweDescribeKind(k)
		}
	case sweEditor:
		e.editorMade = true
		if e.editWhy == "" {
			e.editWhy = why + ": " + sweDescribeKind(k)
		}
	case sweJunk:
		e.junk++
	default:
		e.reproWrites = sweAppendUnique(e.reproWrites, p)
		if e.reproWhy == "" {
			e.reproWhy = why + ": " + sweDescribeKind(k)
		}
	}
}

// classifyShell classifies a shell command line from its simple commands.
func (tr *sweTracker) classifyShell(s *SWEStep, cmd string) {
	cmds := sweParseShell(cmd)
	if len(cmds) == 0 {
		s.Class, s.Why = SWEClassOther, "an empty command"
		return
	}
	if sweIsMiniSubmit(cmd) {
		s.Class, s.Why = SWEClassSubmit, "submits the work (COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT)"
		return
	}
	start := tr.cwd
	if !tr.persistent {
		tr.cwd = ""
	}
	var e sweEffects
	for _, c := range cmds {
		tr.shellCommand(&e, s, c)
	}
	if !tr.persistent {
		tr.cwd = start
	}

	s.Ran, s.Script, s.RunAfterEdit = e.runs, e.script, e.runAfter
	for _, p := range e.edits {
		if p != "" {
			s.Sources = sweAppendUnique(s.Sources, p)
		}
	}
	switch {
	case len(e.edits) > 0 || e.editorMade:
		s.Class, s.Why, s.Modifies = SWEClassEdit, e.editWhy, len(e.edits) > 0
		if len(s.Sources) > 0 {
			s.Why += ", a source file"
		}
	case len(e.reproWrites) > 0 && len(e.runs) > 0:
		// cat > t.py <<EOF … EOF && python t.py: the write serves the run,
		// and the run is what reproduces (or, in PATCH, checks) the issue.
		s.Class, s.Why = SWEClassReproRun, e.reproWhy+", and "+e.runWhy
	case len(e.reproWrites) > 0:
		s.Class, s.Why = SWEClassReproWrite, e.reproWhy
	case len(e.runs) > 0:
		s.Class, s.Why = SWEClassReproRun, e.runWhy
	case e.backupWhy != "":
		s.Class, s.Why = SWEClassOther, e.backupWhy+"; not an edit"
	case e.explore > 0 && e.other == 0:
		s.Class, s.Why = SWEClassExplore, "search, view or read-only commands"
	case e.explore > 0:
		s.Class, s.Why = SWEClassExplore, "mostly read-only commands (and "+e.otherWhat+")"
	case e.other == 0 && e.junk > 0:
		s.Class, s.Why = SWEClassOther, "writes only an output capture"
	case e.other == 0:
		s.Class, s.Why = SWEClassOther, "only changes the shell's state (cd, export, …)"
	default:
		s.Class, s.Why = SWEClassOther, e.otherWhat+": neither a search nor an edit nor a script or test run"
	}
}

// shellCommand adds the effects of one simple command.
func (tr *sweTracker) shellCommand(e *sweEffects, s *SWEStep, c sweCommand) {
	name := c.name()
	// Writes by redirection: > file, >> file.
	for k, r := range c.Redirects {
		np := tr.resolve(r)
		if !c.Appends[k] && (c.HasHeredoc || name == "echo" || name == "printf" || name == "cat") {
			tr.created[np] = true
			content := c.Heredoc
			if name == "echo" || name == "printf" {
				content = strings.Join(c.Args[1:], " ")
			}
			tr.remember(np, content)
		}
		tr.note(e, s, np, "writes "+np)
	}
	switch {
	case name == "":
	case name == "cd":
		if len(c.Args) > 1 && c.Args[1] != "-" && !strings.HasPrefix(c.Args[1], "~") {
			if strings.HasPrefix(c.Args[1], "/") {
				tr.cwd = c.Args[1]
			} else {
				tr.cwd = path.Join(tr.cwd, c.Args[1])
			}
		} else {
			tr.cwd = ""
		}
	case sweSetupCommands[name]:
	case sweAsksHelp(c):
		e.explore++ // reads the program's usage; runs nothing
	case name == "tee":
		for _, a := range c.Args[1:] {
			if !strings.HasPrefix(a, "-") && a != "/dev/null" {
				np := tr.resolve(a)
				if c.HasHeredoc {
					tr.created[np] = true
					tr.remember(np, c.Heredoc)
				}
				tr.note(e, s, np, "writes "+np+" (tee)")
			}
		}
	case name == "sed" && sweHasInPlace(c.Args, "-i", "--in-place"),
		name == "perl" && sweHasPerlInPlace(c.Args),
		(name == "awk" || name == "gawk") && sweHasInPlace(c.Args, "-i"):
		for _, f := range sweSedFiles(c.Args) {
			np := tr.resolve(f)
			tr.note(e, s, np, "edits "+np+" in place ("+name+" -i)")
		}
	case name == "patch" || name == "git" && len(c.Args) > 1 && c.Args[1] == "apply":
		files := sweDiffFiles(c.Heredoc)
		if len(files) == 0 {
			e.edit("", "applies a patch")
		}
		for _, f := range files {
			tr.note(e, s, f, "applies a patch to "+f)
		}
	case name == "cp" || name == "mv" || name == "mkdir" || name == "touch" || name == "ln":
		ops := swePositional(c.Args[1:])
		if len(ops) == 0 {
			e.misc(name)
			return
		}
		dst := tr.resolve(ops[len(ops)-1])
		switch {
		case name == "mkdir" || name == "touch":
			if k := tr.kindOf(dst); k == sweRepro || k == sweTest && name == "touch" {
				if name == "touch" {
					tr.created[dst] = true
				}
				tr.note(e, s, dst, name+" "+dst)
				return
			}
			e.misc(name)
		case name == "mv":
			tr.move(e, s, ops)
		case name == "cp" && len(ops) == 2 && tr.kindOf(dst) == sweBackup:
			tr.note(e, s, dst, "copies "+tr.resolve(ops[0])+" to "+dst)
		case tr.kindOf(dst) == sweSource && name == "cp":
			tr.note(e, s, dst, "copies over "+dst)
		default:
			e.misc(name)
		}
	case sweIsPython(name):
		tr.pythonCommand(e, s, c)
	case sweIsTestRunner(c):
		e.run(strings.Join(c.Args, " "), "runs the test suite ("+name+")", tr.scriptArg(c.Args[1:]))
	case name == "sh" || name == "bash" || name == "zsh" || strings.HasPrefix(c.Args[0], "./"):
		target := c.Args[0]
		if name == "sh" || name == "bash" || name == "zsh" {
			ops := swePositional(c.Args[1:])
			if len(ops) == 0 {
				e.misc(name)
				return
			}
			target = ops[0]
		}
		np := tr.resolve(target)
		if k := tr.kindOf(np); k == sweRepro || k == sweTest || k == sweScratch {
			e.run(np, "runs "+np+": "+sweDescribeKind(k), tr.scriptFor(np))
			return
		}
		tr.otherCommand(e, c)
	case name == "git" && sweGitRestores(c) != nil:
		tr.revert(e, s, c)
	case sweReadOnly(c):
		e.explore++
	default:
		tr.otherCommand(e, c)
	}
}

// sweAsksHelp reports whether c only asks a program for its usage
// (runtests.py --help, python x.py -h, pytest -h): that reads, it runs no
// test. File and package commands are left alone (their -h may mean
// something else, and they run nothing either way).
func sweAsksHelp(c sweCommand) bool {
	if sweFileCommands[c.name()] {
		return false
	}
	for _, a := range c.Args[1:] {
		switch a {
		case "--help", "-h", "-help", "--usage":
			return true
		case "-c":
			if sweIsPython(c.name()) {
				return false // the rest is inline code and its arguments
			}
		}
	}
	return false
}

// sweGitRestores returns the paths a git command puts back to their
// committed (or stashed) state: git checkout [REV] [--] PATH…, git restore
// PATH…, and "." for git reset --hard, git stash (push) and git stash
// pop/apply; nil for any other git command. Operands of git checkout may
// be branches or commits: revert keeps only those naming files the agent
// edited.
func sweGitRestores(c sweCommand) []string {
	var sub string
	var rest []string
	for i, a := range c.Args[1:] {
		if a == "-C" || a == "-c" {
			return nil // another repository or config: not worth guessing
		}
		if !strings.HasPrefix(a, "-") {
			sub, rest = a, c.Args[i+2:]
			break
		}
	}
	switch sub {
	case "checkout", "restore":
		var paths []string
		for _, a := range rest {
			if a == "--" || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--source") {
				continue
			}
			paths = append(paths, a)
		}
		return paths
	case "reset":
		if sweHasArg(rest, "--hard") {
			return []string{"."}
		}
	case "stash":
		if len(rest) == 0 || rest[0] == "push" || rest[0] == "save" || rest[0] == "pop" || rest[0] == "apply" || strings.HasPrefix(rest[0], "-") {
			return []string{"."}
		}
	}
	return nil
}

// revert records a git command that puts files back: for each source file
// the agent edited that it covers, an edit (it undoes, or with git stash pop
// redoes, the agent's change); a restore of files the agent never edited
// (a build artefact the tests touched) is not.
func (tr *sweTracker) revert(e *sweEffects, s *SWEStep, c sweCommand) {
	verb := "git " + strings.Join(c.Args[1:min(len(c.Args), 3)], " ")
	what := "reverts %s (%s), undoing the agent's edit"
	if sweHasArg(c.Args, "stash") && (sweHasArg(c.Args, "pop") || sweHasArg(c.Args, "apply")) {
		what = "re-applies the agent's stashed edit of %s (%s)"
	} else {
		s.Reverts = true
	}
	var hit []string
	for _, p := range sweGitRestores(c) {
		rp := tr.resolve(p)
		for f := range tr.edited {
			if rp == "." || f == rp || strings.HasPrefix(f, rp+"/") {
				hit = sweAppendUnique(hit, f)
			}
		}
	}
	if len(hit) == 0 {
		e.misc(verb + " of files the agent did not edit")
		return
	}
	slices.Sort(hit)
	for _, f := range hit {
		tr.note(e, s, f, fmt.Sprintf(what, f, verb))
	}
}

// move classifies mv SRC… DST: moving a source file away (a rename, or
// mv calc.py calc.py.bak) removes it from the repository, and moving a file
// onto a source path (mv calc.py.orig calc.py) replaces it; both are edits.
// Moving the agent's own scripts or backups around is not.
func (tr *sweTracker) move(e *sweEffects, s *SWEStep, ops []string) {
	if len(ops) < 2 {
		e.misc("mv")
		return
	}
	dst := tr.resolve(ops[len(ops)-1])
	edits := len(e.edits)
	for _, o := range ops[:len(ops)-1] {
		src := tr.resolve(o)
		if tr.kindOf(src) == sweSource && !strings.HasPrefix(src, "/") {
			tr.note(e, s, src, "moves "+src+" to "+dst)
		}
		to := dst
		if path.Ext(dst) == "" && path.Ext(src) != "" || len(ops) > 2 {
			to = path.Join(dst, path.Base(src)) // into a folder
		}
		if k := tr.kindOf(to); k == sweSource && !strings.HasPrefix(to, "/") || k == sweBackup {
			tr.note(e, s, to, "moves "+src+" onto "+to)
		}
	}
	if len(e.edits) == edits {
		e.misc("mv")
	}
}

// otherCommand handles a program run the classifier has no rule for: it
// is a reproduction run when it works on the agent's reproduction files
// (ponyc repro.pony, node repro.js, pylint reproduce_issue/src).
func (tr *sweTracker) otherCommand(e *sweEffects, c sweCommand) {
	if sweFileCommands[c.name()] {
		e.misc(c.name())
		return
	}
	if sc := tr.scriptArg(c.Args[1:]); sc != "" {
		e.run(sc, "runs "+c.name()+" on "+sc+": "+sweDescribeKind(tr.kindOf(sc)), sc)
		return
	}
	if tr.cwdIsRepro() {
		sc := sweReproRoot(tr.resolve("."))
		e.run(sc, "runs "+c.name()+" inside "+sc+": "+sweDescribeKind(sweRepro), sc)
		return
	}
	e.misc(c.name())
}

// sweFileCommands manage files or packages; they never run the code they name.
var sweFileCommands = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "chmod": true, "chown": true, "git": true, "pip": true,
	"pip3": true, "conda": true, "apt": true, "apt-get": true, "mv": true, "cp": true, "mkdir": true,
	"touch": true, "ln": true, "kill": true, "pkill": true, "wget": true, "curl": true, "tar": true,
	"unzip": true, "zip": true, "gzip": true, "gunzip": true, "install": true, "yes": true, "npm": true,
}

func (tr *sweTracker) cwdIsRepro() bool {
	return strings.Contains(strings.ToLower(tr.resolve(".")), "repro")
}

// scriptArg returns the first argument that names the agent's own
// reproduction material: a path containing "repro" (its repro folder or
// script), or a scratch or test file the agent created.
func (tr *sweTracker) scriptArg(args []string) string {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v
			} else {
				continue
			}
		}
		f, _, _ := strings.Cut(a, "::")
		np := tr.resolve(f)
		if np == "" || np == "." {
			continue
		}
		if sc := tr.scriptFor(np); sc != "" {
			return sc
		}
	}
	if tr.cwdIsRepro() && len(args) > 0 {
		return sweReproRoot(tr.resolve("."))
	}
	return ""
}

// scriptFor names the reproduction material np belongs to: its repro root
// when the path contains "repro", the file itself when the agent created it
// or wrote tests into it, else "". A test label (django's runtests.py
// auth_tests.test_validators, a directory) names the authored test file it
// covers.
func (tr *sweTracker) scriptFor(np string) string {
	if strings.Contains(strings.ToLower(np), "repro") {
		return sweReproRoot(np)
	}
	if tr.created[np] || tr.authored[np] {
		return np
	}
	for _, cand := range []string{np, strings.ReplaceAll(np, ".", "/"), "tests/" + strings.ReplaceAll(np, ".", "/")} {
		for f := range tr.authored {
			if strings.HasPrefix(f, cand+"/") || strings.HasPrefix(f, cand+".") {
				return f
			}
		}
	}
	return ""
}

// sweReproRoot cuts a path after its first segment containing "repro":
// reproduce_issue/src/gen → reproduce_issue.
func sweReproRoot(p string) string {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		if strings.Contains(strings.ToLower(seg), "repro") {
			return strings.Join(segs[:i+1], "/")
		}
	}
	return p
}

func sweDescribeKind(k sweFileKind) string {
	switch k {
	case sweRepro:
		return "a reproduction script (its name contains repro)"
	case sweTest:
		return "a test file"
	case sweScratch:
		return "a scratch script the agent wrote"
	case sweEditor:
		return "a script that rewrites source files"
	case sweJunk:
		return "an output capture"
	case sweBackup:
		return "a backup copy, not part of the repository's code"
	}
	return "a source file"
}

func sweIsMiniSubmit(cmd string) bool {
	return strings.Contains(cmd, "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT") || strings.Contains(cmd, "MINI_SWE_AGENT_FINAL_OUTPUT")
}

func sweHasInPlace(args []string, flags ...string) bool {
	for _, a := range args[1:] {
		for _, f := range flags {
			if a == f || strings.HasPrefix(a, f) && len(f) == 2 && !strings.HasPrefix(a, "--") || strings.HasPrefix(a, f+"=") {
				return true
			}
		}
		if a == "inplace" { // awk -i inplace
			return true
		}
	}
	return false
}

func sweHasPerlInPlace(args []string) bool {
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "i") {
			return true
		}
	}
	return false
}

// sweSedFiles returns the file operands of sed/perl/awk: the arguments after
// the script that are not options.
func sweSedFiles(args []string) []string {
	var files []string
	scriptSeen := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" || a == "-f" || a == "--expression":
			scriptSeen = true
			i++
		case a == "inplace":
		case strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.Contains(a, "e") && !strings.HasPrefix(a, "--") && !strings.HasPrefix(a, "-i") {
				// perl -pe SCRIPT
				scriptSeen = true
				i++
			}
		case !scriptSeen:
			scriptSeen = true
		default:
			files = append(files, a)
		}
	}
	return files
}

func swePositional(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

var swePythonNameRe = regexp.MustCompile(`^(python|python\d(\.\d+)?|pypy3?|ipython3?|coverage)$`)

func sweIsPython(name string) bool { return swePythonNameRe.MatchString(name) }

// sweTestModules are python -m modules that run tests.
var sweTestModules = map[string]bool{"pytest": true, "unittest": true, "tox": true, "nose": true, "nose2": true, "py.test": true}

// pythonCommand classifies a python invocation: a script, -m module, -c
// code or code on stdin.
func (tr *sweTracker) pythonCommand(e *sweEffects, s *SWEStep, c sweCommand) {
	args := c.Args[1:]
	if c.name() == "coverage" {
		if len(args) == 0 || args[0] != "run" {
			e.explore++
			return
		}
		args = args[1:]
	}
	inline := func(code string) {
		if !sweWritesFiles(code) {
			e.misc("inline Python")
			return
		}
		files := sweInlineWrites(code)
		if len(files) == 0 {
			e.edit("", "inline Python that writes files")
		}
		for _, f := range files {
			np := tr.resolve(f)
			tr.note(e, s, np, "rewrites "+np+" from inline Python")
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c":
			code := ""
			if i+1 < len(args) {
				code = args[i+1]
			}
			inline(code)
			return
		case a == "-m":
			if i+1 >= len(args) {
				e.misc("python -m")
				return
			}
			mod, rest := args[i+1], args[i+2:]
			switch {
			case sweTestModules[mod]:
				e.run(mod+" "+strings.Join(rest, " "), "runs the tests (python -m "+mod+")", tr.scriptArg(rest))
			case mod == "django" && sweHasArg(rest, "test"):
				e.run("django test", "runs the tests (python -m django test)", tr.scriptArg(rest))
			case mod == "py_compile" || mod == "compileall" || mod == "pydoc" || mod == "json.tool" || mod == "dis" || mod == "tokenize":
				e.explore++
			case mod == "pip" || mod == "venv" || mod == "ensurepip":
				e.misc("python -m " + mod)
			default:
				if sc := tr.scriptArg(rest); sc != "" || tr.cwdIsRepro() {
					if sc == "" {
						sc = sweReproRoot(tr.resolve("."))
					}
					e.run(sc, "runs python -m "+mod+" on "+sc+": "+sweDescribeKind(tr.kindOf(sc)), sc)
					return
				}
				e.misc("python -m " + mod)
			}
			return
		case a == "-" || a == "/dev/stdin":
			inline(c.Heredoc)
			return
		case a == "--version" || a == "-V" || a == "--help" || a == "-h":
			e.explore++
			return
		case a == "-W" || a == "-X" || a == "-Q":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			np := tr.resolve(a)
			base := path.Base(np)
			if strings.Contains(base, "runtests") || base == "manage.py" && sweHasArg(args[i+1:], "test") ||
				base == "setup.py" && sweHasArg(args[i+1:], "test") || base == "test" && strings.Contains(np, "bin/") {
				e.run(np, "runs the test suite ("+base+")", tr.scriptArg(args[i+1:]))
				return
			}
			switch k := tr.kindOf(np); k {
			case sweRepro, sweTest, sweScratch:
				e.run(np, "runs "+np+": "+sweDescribeKind(k), tr.scriptFor(np))
			case sweEditor:
				targets := tr.editors[np]
				if len(targets) == 0 {
					e.edit("", "runs "+np+", "+sweDescribeKind(k))
				}
				for _, t := range targets {
					tr.note(e, s, tr.resolve(t), "runs "+np+", "+sweDescribeKind(k)+" ("+t+")")
				}
			case sweSource:
				if tr.created[np] && slices.Contains(e.edits, np) && !sweRepoTopFiles[base] {
					// cat > pkg/try_it.py <<EOF … EOF && python pkg/try_it.py:
					// a script written to be run, wherever it was put.
					tr.scratch[np] = true
					delete(tr.edited, np)
					e.edits = slices.DeleteFunc(e.edits, func(x string) bool { return x == np })
					if len(e.edits) == 0 {
						e.editWhy, e.runAfter = "", false
					}
					e.reproWrites = sweAppendUnique(e.reproWrites, np)
					if e.reproWhy == "" {
						e.reproWhy = "writes " + np + ": " + sweDescribeKind(sweScratch)
					}
					e.run(np, "runs "+np+": "+sweDescribeKind(sweScratch), np)
					return
				}
				e.misc("runs " + np)
			default:
				e.misc("runs " + np)
			}
			return
		}
	}
	if c.HasHeredoc || c.PipedIn {
		inline(c.Heredoc)
		return
	}
	e.misc("python")
}

func sweHasArg(args []string, want string) bool {
	for _, a := range args {
		if a == want {
			return true
		}
	}
	return false
}

// sweIsTestRunner recognises test-suite commands other than python itself.
func sweIsTestRunner(c sweCommand) bool {
	name := c.name()
	switch name {
	case "pytest", "py.test", "tox", "nox", "nosetests", "trial", "unittest":
		return true
	case "runtests.py", "runtests", "test":
		return strings.Contains(c.Args[0], "/") || name != "test"
	case "make":
		for _, a := range c.Args[1:] {
			if a == "test" || a == "check" || strings.HasPrefix(a, "test-") || a == "tests" {
				return true
			}
		}
	case "go", "cargo", "npm", "yarn", "pnpm", "mvn", "gradle", "ctest":
		return sweHasArg(c.Args[1:], "test") || name == "ctest"
	case "django-admin", "manage.py":
		return sweHasArg(c.Args[1:], "test")
	}
	return false
}

// sweReadOnlyCommands only read files or print state.
var sweReadOnlyCommands = map[string]bool{
	"ls": true, "ll": true, "dir": true, "find": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"ag": true, "ack": true, "cat": true, "head": true, "tail": true, "less": true, "more": true, "nl": true,
	"wc": true, "sort": true, "uniq": true, "cut": true, "awk": true, "gawk": true, "sed": true, "tree": true,
	"pwd": true, "cd": true, "echo": true, "printf": true, "which": true, "whereis": true, "type": true,
	"file": true, "stat": true, "du": true, "df": true, "diff": true, "cmp": true, "git": true, "true": true,
	"date": true, "env": true, "printenv": true, "whoami": true, "id": true, "uname": true, "hostname": true,
	"locate": true, "readlink": true, "realpath": true, "basename": true, "dirname": true, "xxd": true,
	"od": true, "hexdump": true, "strings": true, "jq": true, "column": true, "tr": true, "fold": true,
	"test": true, "[": true, "pip": true, "pip3": true, "conda": true, "view": true, "bat": true, "ctags": true,
	"fd": true, "sleep": true, "clear": true, "history": true, "man": true, "info": true, "apropos": true,
	"python-config": true, "pydoc": true, "pydoc3": true, "open": true, "goto": true, "scroll_up": true,
	"scroll_down": true, "find_file": true, "search_dir": true, "search_file": true, "filemap": true,
	"diff3": true, "colordiff": true, "tac": true, "rev": true, "comm": true, "join": true, "paste": true,
	"expand": true, "zcat": true, "zgrep": true, "base64": true, "md5sum": true, "sha256sum": true, "cksum": true,
}

// sweGitReadOnly are git subcommands that change nothing.
var sweGitReadOnly = map[string]bool{
	"log": true, "show": true, "diff": true, "status": true, "blame": true, "grep": true, "ls-files": true,
	"rev-parse": true, "branch": true, "describe": true, "shortlog": true, "ls-tree": true, "cat-file": true,
	"remote": true, "tag": true, "config": false, "reflog": true, "whatchanged": true,
}

// sweReadOnly reports whether c only reads.
func sweReadOnly(c sweCommand) bool {
	name := c.name()
	if !sweReadOnlyCommands[name] {
		return false
	}
	switch name {
	case "git":
		sub := ""
		for _, a := range c.Args[1:] {
			if !strings.HasPrefix(a, "-") {
				sub = a
				break
			}
		}
		return sweGitReadOnly[sub]
	case "pip", "pip3", "conda":
		return len(c.Args) > 1 && (c.Args[1] == "show" || c.Args[1] == "list" || c.Args[1] == "freeze" || c.Args[1] == "search")
	case "find":
		for _, a := range c.Args[1:] {
			if a == "-delete" || a == "-exec" && sweHasArg(c.Args, "rm") {
				return false
			}
		}
	}
	return true
}

// sweDiffFiles returns the b/ side files of a unified diff.
func sweDiffFiles(diff string) []string {
	var out []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "+++ ") {
			f := strings.TrimSpace(strings.TrimPrefix(line, "+++ "))
			if i := strings.IndexAny(f, "\t"); i >= 0 {
				f = f[:i]
			}
			if f == "/dev/null" {
				continue
			}
			f = strings.TrimPrefix(f, "b/")
			out = sweAppendUnique(out, normalizeSWEPath(f))
		}
	}
	return out
}
