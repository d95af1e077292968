package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// The SWE part of the demo: six instances of a small made-up library
// (acme/tally), their reference fixes and tests, and two runs of a
// mini-swe-agent-style coding agent on them: SWEBaseRun, a model that
// patches what it first finds, and SWELadderRun, one that localizes,
// reproduces, patches and verifies. The SWE page compares the two on the
// six instances; every trajectory shows one behavior the diagnostics tell
// apart (a wrong file, a fix in one of two files, a patch never re-run, a
// step limit, a failed re-run, a second patch after it).
//
// Everything is built here, in code, so it reads as what each agent did;
// the files it produces are ordinary inputs of `groundwork import`.

// SWE run names and the file names their imports are recorded under.
const (
	SWEBaseRun        = "demo-swe-base"
	SWELadderRun      = "demo-swe-ladder"
	SWEInstancesFile  = "demo-swe-instances.jsonl"
	sweRunFileSuffix  = ".jsonl"
	sweResultsSuffix  = "-results.json"
	sweSystemPrompt   = "You are a helpful assistant that can interact with a computer shell to solve programming tasks. Run one bash command per turn; submit with `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff`."
	sweSubmitCommand  = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff"
	sweRepo           = "acme/tally"
	sweBaseCommit     = "3f9c2a1d7b6e4058a1c2d3e4f5a6b7c8d9e0f1a2"
	sweTracebackStart = "Traceback (most recent call last):\n"
)

// File is one demo input: its name and content, in import order.
type File struct {
	Name string
	Run  string // "" for instance metadata, which belongs to no run
	Data []byte
}

// SWEFiles returns the SWE demo in the order it must be imported: the
// instance metadata, then each run's trajectories and its evaluation
// results.
func SWEFiles() []File {
	files := []File{{Name: SWEInstancesFile, Data: jsonLines(sweInstances())}}
	for _, run := range []struct {
		name  string
		model string
		b     func(*sweInstance) sweTraj
	}{
		{SWEBaseRun, "demo-4b-base", baseAttempt},
		{SWELadderRun, "demo-4b-ladder", ladderAttempt},
	} {
		var trajs []any
		results := map[string]map[string]bool{}
		for _, in := range sweCatalog {
			tr := run.b(in)
			trajs = append(trajs, tr.canonical(run.name, run.model, in))
			results[in.id] = map[string]bool{"resolved": tr.resolved}
		}
		files = append(files,
			File{Name: run.name + sweRunFileSuffix, Run: run.name, Data: jsonLines(trajs)},
			File{Name: run.name + sweResultsSuffix, Run: run.name, Data: jsonValue(results)})
	}
	return files
}

// sweInstance is one issue of acme/tally with its reference fix.
type sweInstance struct {
	id      string
	issue   string // the problem statement the agent is given
	file    string // the file the fix changes (files[0])
	files   []string
	fn      string // the function the issue names
	code    string // what `sed -n` shows of the function before the fix
	fix     []sweHunk
	test    string // the test file the reference test patch adds to
	check   string // the body of the fail-to-pass test
	f2p     []string
	p2p     []string
	repro   string // the reproduction script's body
	failure string // what the script prints before the fix
	fixed   string // … and after
}

// sweHunk replaces one line of a file by others: the reference fix, and
// the agents' sed edits, are made of these.
type sweHunk struct {
	file string
	line int    // 1-based line of old in the file
	ctx  string // the line before old, unchanged
	old  string
	new  []string
}

var sweCatalog = []*sweInstance{
	{
		id:    "acme__tally-101",
		check: "    parts = Money('10.00').split(3)\n    assert [p.cents for p in parts] == [334, 333, 333]",
		issue: "Money.split(n) loses cents: Money('10.00').split(3) returns three parts of 3.33 that add up to 9.99, not 10.00.",
		file:  "tally/money.py", fn: "split",
		code: "    def split(self, n):\n        share = (self.cents // n)\n        return [Money.from_cents(share) for _ in range(n)]\n",
		fix: []sweHunk{{file: "tally/money.py", line: 58, ctx: "        share = (self.cents // n)",
			old: "        return [Money.from_cents(share) for _ in range(n)]",
			new: []string{"        rest = self.cents - share * n", "        return [Money.from_cents(share + (1 if i < rest else 0)) for i in range(n)]"}}},
		test: "tests/test_money.py", f2p: []string{"tests/test_money.py::test_split_keeps_every_cent"},
		p2p:     []string{"tests/test_money.py::test_add", "tests/test_money.py::test_split_even"},
		repro:   "from tally.money import Money\nparts = Money('10.00').split(3)\nassert sum(p.cents for p in parts) == 1000, [str(p) for p in parts]\nprint('OK')",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 3, in <module>\n    assert sum(p.cents for p in parts) == 1000, [str(p) for p in parts]\nAssertionError: ['3.33', '3.33', '3.33']",
		fixed:   "OK",
	},
	{
		id:    "acme__tally-117",
		check: "    assert parse_period('2024-Q1') == Period(2024, 1, 3)\n    assert parse_period('2024-q4') == Period(2024, 10, 12)",
		issue: "parse_period('2024-Q1') raises ValueError: quarters are documented as valid periods but only months ('2024-01') parse.",
		file:  "tally/periods.py", fn: "parse_period",
		code: "def parse_period(text):\n    year, month = text.split('-')\n    return Period(int(year), int(month), int(month))\n",
		fix: []sweHunk{{file: "tally/periods.py", line: 23, ctx: "    year, month = text.split('-')",
			old: "    return Period(int(year), int(month), int(month))",
			new: []string{"    if month.upper().startswith('Q'):", "        q = int(month[1:])", "        return Period(int(year), 3 * q - 2, 3 * q)", "    return Period(int(year), int(month), int(month))"}}},
		test: "tests/test_periods.py", f2p: []string{"tests/test_periods.py::test_quarter"},
		p2p:     []string{"tests/test_periods.py::test_month"},
		repro:   "from tally.periods import parse_period\nprint(parse_period('2024-Q1'))",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 2, in <module>\n    print(parse_period('2024-Q1'))\n  File \"/repo/tally/periods.py\", line 23, in parse_period\n    return Period(int(year), int(month), int(month))\nValueError: invalid literal for int() with base 10: 'Q1'",
		fixed:   "Period(year=2024, first_month=1, last_month=3)",
	},
	{
		id:    "acme__tally-128",
		check: "    p = tmp_path / 'out.csv'\n    write_csv(p, [ROW])\n    write_csv(p, [ROW], append=True)\n    assert p.read_text().count('date,memo,amount') == 1",
		issue: "write_csv(path, rows, append=True) writes the header line again in the middle of the file every time it appends.",
		file:  "tally/csvio.py", fn: "write_csv",
		code: "def write_csv(path, rows, append=False):\n    with open(path, 'a' if append else 'w', newline='') as f:\n        w = csv.writer(f)\n        w.writerow(HEADER)\n        w.writerows(rows)\n",
		fix: []sweHunk{{file: "tally/csvio.py", line: 14, ctx: "        w = csv.writer(f)",
			old: "        w.writerow(HEADER)",
			new: []string{"        if not append or f.tell() == 0:", "            w.writerow(HEADER)"}}},
		test: "tests/test_csvio.py", f2p: []string{"tests/test_csvio.py::test_append_has_one_header"},
		p2p:     []string{"tests/test_csvio.py::test_write"},
		repro:   "import os, tempfile\nfrom tally.csvio import write_csv\np = os.path.join(tempfile.mkdtemp(), 'out.csv')\nwrite_csv(p, [['2024-01-02', 'rent', '-900.00']])\nwrite_csv(p, [['2024-01-03', 'salary', '2500.00']], append=True)\nlines = open(p).read().splitlines()\nassert lines.count('date,memo,amount') == 1, lines",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 7, in <module>\n    assert lines.count('date,memo,amount') == 1, lines\nAssertionError: ['date,memo,amount', '2024-01-02,rent,-900.00', 'date,memo,amount', '2024-01-03,salary,2500.00']",
		fixed:   "",
	},
	{
		id:    "acme__tally-140",
		check: "    fx.set_rate('EUR/USD', 1.10)\n    fx.convert(100, 'EUR/USD')\n    fx.set_rate('EUR/USD', 1.20)\n    assert fx.convert(100, 'EUR/USD') == pytest.approx(120)",
		issue: "convert() keeps using yesterday's exchange rate after set_rate(): the rate cache is never invalidated.",
		file:  "tally/fx.py", files: []string{"tally/fx.py", "tally/cache.py"}, fn: "set_rate",
		code: "def set_rate(pair, rate):\n    _RATES[pair] = rate\n",
		fix: []sweHunk{
			{file: "tally/fx.py", line: 31, ctx: "def set_rate(pair, rate):", old: "    _RATES[pair] = rate",
				new: []string{"    _RATES[pair] = rate", "    rate_cache.forget(pair)"}},
			{file: "tally/cache.py", line: 12, ctx: "class RateCache(dict):", old: "    pass",
				new: []string{"    def forget(self, pair):", "        self.pop(pair, None)"}},
		},
		test: "tests/test_fx.py", f2p: []string{"tests/test_fx.py::test_new_rate_is_used"},
		p2p:     []string{"tests/test_fx.py::test_convert"},
		repro:   "from tally import fx\nfx.set_rate('EUR/USD', 1.10)\nfx.convert(100, 'EUR/USD')\nfx.set_rate('EUR/USD', 1.20)\nassert fx.convert(100, 'EUR/USD') == 120.0, fx.convert(100, 'EUR/USD')",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 5, in <module>\n    assert fx.convert(100, 'EUR/USD') == 120.0, fx.convert(100, 'EUR/USD')\nAssertionError: 110.00000000000001",
		fixed:   "",
	},
	{
		id:    "acme__tally-152",
		check: "    assert summary(Ledger()) == {'entries': 0, 'total': 0, 'mean': 0}",
		issue: "summary() of an empty ledger raises ZeroDivisionError instead of reporting zero entries.",
		file:  "tally/report.py", fn: "summary",
		code: "def summary(ledger):\n    total = sum(e.amount for e in ledger)\n    return {'entries': len(ledger), 'total': total, 'mean': total / len(ledger)}\n",
		fix: []sweHunk{{file: "tally/report.py", line: 42, ctx: "    total = sum(e.amount for e in ledger)",
			old: "    return {'entries': len(ledger), 'total': total, 'mean': total / len(ledger)}",
			new: []string{"    mean = total / len(ledger) if ledger else 0", "    return {'entries': len(ledger), 'total': total, 'mean': mean}"}}},
		test: "tests/test_report.py", f2p: []string{"tests/test_report.py::test_empty_summary"},
		p2p:     []string{"tests/test_report.py::test_summary"},
		repro:   "from tally.ledger import Ledger\nfrom tally.report import summary\nprint(summary(Ledger()))",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 3, in <module>\n    print(summary(Ledger()))\n  File \"/repo/tally/report.py\", line 42, in summary\n    return {'entries': len(ledger), 'total': total, 'mean': total / len(ledger)}\nZeroDivisionError: division by zero",
		fixed:   "{'entries': 0, 'total': 0, 'mean': 0}",
	},
	{
		id:    "acme__tally-163",
		check: "    assert Ledger([Entry(50), Entry(50, reversal=True)]).balance() == 0",
		issue: "Ledger.balance() counts a reversed entry and its reversal both as positive, so reversing a payment doubles it.",
		file:  "tally/ledger.py", fn: "balance",
		code: "    def balance(self):\n        return sum(abs(e.amount) for e in self.entries)\n",
		fix: []sweHunk{{file: "tally/ledger.py", line: 77, ctx: "    def balance(self):",
			old: "        return sum(abs(e.amount) for e in self.entries)",
			new: []string{"        return sum(-e.amount if e.reversal else e.amount for e in self.entries)"}}},
		test: "tests/test_ledger.py", f2p: []string{"tests/test_ledger.py::test_reversal_cancels"},
		p2p:     []string{"tests/test_ledger.py::test_balance"},
		repro:   "from tally.ledger import Ledger, Entry\nl = Ledger([Entry(50), Entry(50, reversal=True)])\nassert l.balance() == 0, l.balance()\nprint('OK')",
		failure: sweTracebackStart + "  File \"reproduce_issue.py\", line 3, in <module>\n    assert l.balance() == 0, l.balance()\nAssertionError: 100",
		fixed:   "OK",
	},
}

func init() {
	for _, in := range sweCatalog {
		if in.files == nil {
			in.files = []string{in.file}
		}
	}
}

// diff renders hunks as a unified diff, one file after the other in the
// order of their first hunk.
func diff(hunks []sweHunk) string {
	var b strings.Builder
	var order []string
	byFile := map[string][]sweHunk{}
	for _, h := range hunks {
		if _, ok := byFile[h.file]; !ok {
			order = append(order, h.file)
		}
		byFile[h.file] = append(byFile[h.file], h)
	}
	for _, f := range order {
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n", f, f, f, f)
		for _, h := range byFile[f] {
			fmt.Fprintf(&b, "@@ -%d,2 +%d,%d @@\n %s\n-%s\n", h.line-1, h.line-1, 1+len(h.new), h.ctx, h.old)
			for _, n := range h.new {
				b.WriteString("+" + n + "\n")
			}
		}
	}
	return b.String()
}

// sedCommand is the agent's `sed -i` for a hunk: it replaces the old line,
// which the agent has seen, by pattern rather than by a line number it has
// not.
func sedCommand(h sweHunk) string {
	esc := func(s string) string {
		r := strings.NewReplacer(`\`, `\\`, `/`, `\/`, `[`, `\[`, `]`, `\]`, `*`, `\*`, `.`, `\.`, `'`, `'"'"'`)
		return r.Replace(s)
	}
	repl := strings.NewReplacer(`\`, `\\`, `/`, `\/`, `&`, `\&`, `'`, `'"'"'`)
	var news []string
	for _, n := range h.new {
		news = append(news, repl.Replace(n))
	}
	return fmt.Sprintf("sed -i 's/^%s$/%s/' %s", esc(h.old), strings.Join(news, `\n`), h.file)
}

// testPatch adds the fail-to-pass test at the end of its test file.
func (in *sweInstance) testPatch() string {
	name := in.f2p[0][strings.LastIndex(in.f2p[0], "::")+2:]
	arg := ""
	if strings.Contains(in.check, "tmp_path") {
		arg = "tmp_path"
	}
	lines := strings.Split(in.check, "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n@@ -30,2 +30,%d @@\n \n     assert True\n+\n+\n+def %s(%s):\n", in.test, in.test, in.test, in.test, 5+len(lines), name, arg)
	for _, l := range lines {
		b.WriteString("+" + l + "\n")
	}
	return b.String()
}

func sweInstances() []any {
	var out []any
	for _, in := range sweCatalog {
		out = append(out, map[string]any{
			"instance_id": in.id, "repo": sweRepo, "base_commit": sweBaseCommit, "version": "1.4",
			"problem_statement": in.issue, "patch": diff(in.fix), "test_patch": in.testPatch(),
			"FAIL_TO_PASS": in.f2p, "PASS_TO_PASS": in.p2p,
		})
	}
	return out
}

// sweTraj is one attempt being written: bash steps and how it ended.
type sweTraj struct {
	steps     []sweStep
	submitted []sweHunk // the patch in the submission, nil when none
	limit     bool      // stopped by the step limit, without a submission
	resolved  bool      // the evaluation harness's verdict
}

type sweStep struct {
	thought, cmd, out string
	fails             bool
}

func (t *sweTraj) run(thought, cmd, out string, fails bool) {
	t.steps = append(t.steps, sweStep{thought, cmd, out, fails})
}

// defLine is the line of in.code's first line (the def) in its file.
func (in *sweInstance) defLine() int {
	for i, l := range strings.Split(in.code, "\n") {
		if l == in.fix[0].old {
			return in.fix[0].line - i
		}
	}
	panic("demo: " + in.id + ": the fix's old line is not in the code shown")
}

func (t *sweTraj) find(in *sweInstance) {
	t.run("Find where the function the issue names is defined.",
		fmt.Sprintf("grep -rn \"def %s\" tally", in.fn),
		fmt.Sprintf("%s:%d:%s", in.file, in.defLine(), strings.TrimSpace(strings.SplitN(in.code, "\n", 2)[0])), false)
}

func (t *sweTraj) read(in *sweInstance) {
	first := in.defLine()
	t.run("Read the function.", fmt.Sprintf("sed -n '%d,%dp' %s", first, first+strings.Count(in.code, "\n")-1, in.file), in.code, false)
}

func (t *sweTraj) writeRepro(in *sweInstance) {
	t.run("Write a script that shows the bug.", "cat <<'EOF' > reproduce_issue.py\n"+in.repro+"\nEOF", "", false)
}

func (t *sweTraj) runRepro(out string, fails bool) {
	t.run("Run it.", "python reproduce_issue.py", out, fails)
}

func (t *sweTraj) edit(hs ...sweHunk) {
	for _, h := range hs {
		t.run("Fix "+h.file+".", sedCommand(h), "", false)
	}
}

func (t *sweTraj) tests(in *sweInstance, out string, fails bool) {
	t.run("Run the module's tests.", "python -m pytest "+in.test+" -q", out, fails)
}

func (t *sweTraj) submit(hs ...sweHunk) {
	t.submitted = hs
	t.run("Submit.", sweSubmitCommand, diff(hs), false)
}

// baseAttempt is what the base model did on each instance: it patches
// what it finds first and rarely checks.
func baseAttempt(in *sweInstance) sweTraj {
	var t sweTraj
	switch in.id {
	case "acme__tally-101": // right file, no reproduction: resolved by luck
		t.find(in)
		t.read(in)
		t.edit(in.fix...)
		t.submit(in.fix...)
		t.resolved = true
	case "acme__tally-117": // patches the wrong file
		wrong := sweHunk{file: "tally/dates.py", line: 9, ctx: "def parse_date(text):", old: "    return date.fromisoformat(text)",
			new: []string{"    return date.fromisoformat(text.replace('Q1', '01'))"}}
		t.run("Find where periods are parsed.", "grep -rn \"fromisoformat\" tally", "tally/dates.py:9:    return date.fromisoformat(text)", false)
		t.edit(wrong)
		t.tests(in, "FAILED tests/test_periods.py::test_quarter - ValueError: invalid literal for int() with base 10: 'Q1'\n==== 1 failed, 1 passed in 0.08s ====", true)
		t.submit(wrong)
	case "acme__tally-128": // reproduces, patches, never re-runs
		t.find(in)
		t.writeRepro(in)
		t.runRepro(in.failure, true)
		t.edit(in.fix...)
		t.submit(in.fix...)
		t.resolved = true
	case "acme__tally-140": // fixes one of the two files
		t.find(in)
		t.read(in)
		t.edit(in.fix[0])
		t.tests(in, "==== 2 passed in 0.05s ====", false)
		t.submit(in.fix[0])
	case "acme__tally-152": // explores until the step limit
		t.find(in)
		t.read(in)
		t.run("Look at the ledger type.", "grep -rn \"class Ledger\" tally", "tally/ledger.py:12:class Ledger:", false)
		t.run("Read it.", "sed -n '12,40p' tally/ledger.py", "class Ledger:\n    def __init__(self, entries=()):\n        self.entries = list(entries)\n\n    def __len__(self):\n        return len(self.entries)\n", false)
		t.run("Look for other callers of summary.", "grep -rn \"summary(\" tally tests", "tally/report.py:40:def summary(ledger):\ntests/test_report.py:9:    s = summary(Ledger([Entry(5)]))", false)
		t.run("Read the tests.", "cat tests/test_report.py", "from tally.ledger import Ledger, Entry\nfrom tally.report import summary\n\n\ndef test_summary():\n    s = summary(Ledger([Entry(5)]))\n    assert s['mean'] == 5\n", false)
		t.limit = true
	case "acme__tally-163": // re-runs, sees the failure, submits anyway
		t.find(in)
		t.writeRepro(in)
		t.runRepro(in.failure, true)
		half := sweHunk{file: in.file, line: in.fix[0].line, ctx: in.fix[0].ctx, old: in.fix[0].old,
			new: []string{"        return sum(e.amount for e in self.entries)"}}
		t.edit(half)
		t.runRepro(sweTracebackStart+"  File \"reproduce_issue.py\", line 3, in <module>\n    assert l.balance() == 0, l.balance()\nAssertionError: 100", true)
		t.submit(half)
	}
	return t
}

// ladderAttempt is what the stage-trained model did: localize, reproduce,
// patch, verify. It is not perfect: on tally-128 its script never
// triggers the bug, and on tally-117 its own checks pass while the
// harness's quarter test, which also parses "2024-q1", does not.
func ladderAttempt(in *sweInstance) sweTraj {
	var t sweTraj
	t.find(in)
	t.read(in)
	if len(in.files) > 1 {
		t.run("The cache lives in its own module; read it too.", "sed -n '1,20p' "+in.files[1], "class RateCache(dict):\n    pass\n\n\nrate_cache = RateCache()\n", false)
	}
	fix, after := in.fix, in.fixed
	switch in.id {
	case "acme__tally-128": // a script that never appends shows no bug
		t.run("Write a script that shows the bug.", "cat <<'EOF' > reproduce_issue.py\nimport os, tempfile\nfrom tally.csvio import write_csv\np = os.path.join(tempfile.mkdtemp(), 'out.csv')\nwrite_csv(p, [['2024-01-02', 'rent', '-900.00']])\nprint(open(p).read())\nEOF", "", false)
		after = "date,memo,amount\n2024-01-02,rent,-900.00\n"
		t.runRepro(after, false)
	case "acme__tally-117": // handles "Q1" but not the "q1" the hidden test also parses
		fix = []sweHunk{fix[0]}
		fix[0].new = []string{"    if month.startswith('Q'):", "        q = int(month[1:])", "        return Period(int(year), 3 * q - 2, 3 * q)", "    return Period(int(year), int(month), int(month))"}
		fallthrough
	default:
		t.writeRepro(in)
		t.runRepro(in.failure, true)
	}
	if in.id == "acme__tally-163" { // a first patch that the re-run refutes, then the fix
		half := sweHunk{file: in.file, line: in.fix[0].line, ctx: in.fix[0].ctx, old: in.fix[0].old,
			new: []string{"        return sum(e.amount for e in self.entries)"}}
		t.edit(half)
		t.runRepro(sweTracebackStart+"  File \"reproduce_issue.py\", line 3, in <module>\n    assert l.balance() == 0, l.balance()\nAssertionError: 100", true)
		t.run("Reversals must subtract.", "sed -i 's/return sum(e\\.amount for e in self\\.entries)/return sum(-e.amount if e.reversal else e.amount for e in self.entries)/' "+in.file, "", false)
	} else {
		t.edit(fix...)
	}
	t.runRepro(after, false)
	t.tests(in, fmt.Sprintf("==== %d passed in 0.07s ====", len(in.p2p)), false)
	t.submit(fix...)
	t.resolved = in.id != "acme__tally-117"
	return t
}

// canonical renders the attempt in groundwork's canonical format, as a
// mini-swe-agent run converted by an importer would look.
func (t *sweTraj) canonical(run, model string, in *sweInstance) map[string]any {
	msgs := []map[string]any{
		{"role": "system", "content": sweSystemPrompt},
		{"role": "user", "content": "<pr_description>\n" + in.issue + "\n</pr_description>\nThe repository " + sweRepo + " is checked out in the current directory; its package is tally/."},
	}
	for i, s := range t.steps {
		id := fmt.Sprintf("call_%d", i+1)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": s.thought,
				"tool_calls": []map[string]any{{"id": id, "name": "bash", "arguments": map[string]string{"command": s.cmd}}}},
			map[string]any{"role": "tool", "tool_call_id": id, "name": "bash", "content": s.out, "error": s.fails})
	}
	meta := map[string]any{"instance_id": in.id, "scaffold": "mini-swe-agent", "model": model, "exit_status": "Submitted"}
	if t.limit {
		meta["exit_status"] = "LimitsExceeded"
	} else {
		meta["submission"] = diff(t.submitted)
	}
	return map[string]any{
		"id": run + "-" + in.id, "parent_id": in.id, "domain": "swe",
		"success": t.resolved, "messages": msgs, "meta": meta,
	}
}

func jsonLines(vs []any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			panic(err) // maps of strings, slices and bools always encode
		}
	}
	return b.Bytes()
}

func jsonValue(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
