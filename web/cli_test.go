package web_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"groundwork/store"
	"groundwork/web"
)

// cli runs groundwork with args against the data directory dir.
func cli(t *testing.T, dir, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := func(k string) string {
		if k == "GROUNDWORK_DATA" {
			return dir
		}
		return ""
	}
	err = web.Run(context.Background(), append([]string{"groundwork"}, args...), env, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), err
}

func TestCLIImport(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("..", "grounding", "testdata", "import", "canonical.jsonl")

	out, _, err := cli(t, dir, "", "import", "--run", "airline", good)
	if err != nil || !strings.Contains(out, `into run "airline" as canonical`) {
		t.Fatalf("import good file = %v\n%s", err, out)
	}
	out, _, err = cli(t, dir, "", "import", good, "--run", "other")
	if err != nil || !strings.Contains(out, `already imported into run "airline"`) || !strings.Contains(out, "nothing added") {
		t.Fatalf("re-import = %v\n%s", err, out)
	}

	// A file whose third record is broken is refused whole, naming the
	// file, the record and the field; nothing of it lands.
	bad := filepath.Join(t.TempDir(), "broken.jsonl")
	lines := []string{
		`{"id":"ok-1","messages":[{"role":"user","content":"hi"}]}`,
		`{"id":"ok-2","messages":[{"role":"user","content":"hi"}]}`,
		`{"id":"bad-3","messages":[{"role":"robot","content":"hi"}]}`,
	}
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := cli(t, dir, "", "import", "--run", "airline", bad)
	if err == nil {
		t.Fatal("import of a broken file succeeded")
	}
	for _, want := range []string{"broken.jsonl", "record 2", "line 3", "messages[0].role", "nothing imported"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("error %q does not mention %q", stderr, want)
		}
	}
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.RunByName(context.Background(), "airline")
	if err != nil {
		t.Fatal(err)
	}
	if run.Imports != 1 {
		t.Errorf("run has %d imports after a refused file, want 1", run.Imports)
	}
	if _, err := db.RunByName(context.Background(), "broken"); err == nil {
		t.Error("the refused file created a run")
	}
}

func TestCLIUserAddAndMigrate(t *testing.T) {
	dir := t.TempDir()
	out, _, err := cli(t, dir, "s3cret-pass\n", "user", "add", "ana", "--role", "annotator")
	if err != nil || !strings.Contains(out, `created annotator "ana"`) {
		t.Fatalf("user add = %v %q", err, out)
	}
	if _, _, err := cli(t, dir, "s3cret-pass\n", "user", "add", "ana", "--role", "annotator"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second user add = %v, want 'already exists'", err)
	}
	if _, _, err := cli(t, dir, "s3cret-pass\n", "user", "add", "bob", "--role", "boss"); err == nil || !strings.Contains(err.Error(), "expected admin, researcher or annotator") {
		t.Errorf("bad role = %v", err)
	}
	if _, _, err := cli(t, dir, "short\n", "user", "add", "cid"); err == nil || !strings.Contains(err.Error(), "at least 8") {
		t.Errorf("short password = %v", err)
	}
	if _, _, err := cli(t, dir, strings.Repeat("p", 73)+"\n", "user", "add", "cid"); err == nil || !strings.Contains(err.Error(), "at most 72 bytes") {
		t.Errorf("long password = %v", err)
	}
	// passwd, disable, enable: each says what it did; the last admin stays.
	if _, _, err := cli(t, dir, "root-pass-1\n", "user", "add", "root", "--role", "admin"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string // in stdout, or in the error when it starts with "error: "
	}{
		{"n3w-pass-word\n", []string{"passwd", "ana"}, `new password set for "ana"; their sessions were ended`},
		{"short\n", []string{"passwd", "ana"}, "error: user passwd: the password needs at least 8 characters"},
		{"", []string{"disable", "ana"}, `disabled "ana": sessions ended, API tokens revoked`},
		{"", []string{"disable", "root"}, `error: user disable: "root" is the last enabled admin`},
		{"", []string{"disable", "nobody"}, `error: user disable: no user named "nobody"`},
		{"", []string{"enable", "ana"}, `enabled "ana"`},
		{"", []string{"remove", "ana"}, "error: usage:"},
	} {
		out, _, err := cli(t, dir, c.stdin, append([]string{"user"}, c.args...)...)
		if want, ok := strings.CutPrefix(c.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("user %v = %v, want an error with %q", c.args, err, want)
			}
		} else if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("user %v = %v %q, want %q", c.args, err, out, c.want)
		}
	}
	out, _, err = cli(t, dir, "", "migrate")
	if err != nil || !strings.Contains(out, "migration version") {
		t.Errorf("migrate = %v %q", err, out)
	}
	if _, _, err := cli(t, dir, "", "frobnicate"); err == nil {
		t.Error("unknown command accepted")
	}
}

func TestCLIRecheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("..", "grounding", "testdata", "import", "canonical.jsonl")
	if _, _, err := cli(t, dir, "", "import", "--run", "airline", good); err != nil {
		t.Fatal(err)
	}
	out, _, err := cli(t, dir, "", "recheck", "--run", "airline")
	if err != nil || !strings.Contains(out, "rechecked") || !strings.Contains(out, "0 automatic verdicts changed") {
		t.Errorf("recheck = %v %q, want the same verdicts again", err, out)
	}
	if strings.Contains(out, "\r") || !strings.HasPrefix(strings.Split(out, "\n")[len(strings.Split(out, "\n"))-2], "rechecked ") {
		t.Errorf("recheck into a pipe wrote %q; want one line per progress report and the summary on its own line", out)
	}
	if _, _, err := cli(t, dir, "", "recheck", "--run", "nope"); err == nil || !strings.Contains(err.Error(), `no run named "nope"`) {
		t.Errorf("recheck of an unknown run = %v", err)
	}
}

func TestCLIGen(t *testing.T) {
	dir := t.TempDir()
	out, _, err := cli(t, dir, "", "gen", "--trajectories", "25", "--seed", "9", "--kind", "mixed")
	if err != nil || strings.Count(out, "\n") != 25 {
		t.Fatalf("gen = %v, %d lines; want 25", err, strings.Count(out, "\n"))
	}
	again, _, _ := cli(t, dir, "", "gen", "--trajectories", "25", "--seed", "9", "--kind", "mixed")
	if again != out {
		t.Error("gen is not deterministic")
	}
	pool := filepath.Join(dir, "pool.jsonl")
	if err := os.WriteFile(pool, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, _, err := cli(t, dir, "", "import", pool); err != nil || !strings.Contains(res, "imported 25 trajectories") {
		t.Errorf("import of a generated pool = %v %q", err, res)
	}
	if _, _, err := cli(t, dir, "", "gen", "--kind", "poetry"); err == nil || !strings.Contains(err.Error(), "tau, swe, mixed") {
		t.Errorf("gen --kind poetry = %v", err)
	}
}

// TestCLIImportTooDeep: a log nested past 10,000 levels is refused whole,
// naming the file, record and field, nothing of it lands; `check` reports it
// and still checks the other files. Logs are untrusted: such nesting once
// overflowed the checker's stack and killed the process.
func TestCLIImportTooDeep(t *testing.T) {
	dir := t.TempDir()
	deep := filepath.Join(t.TempDir(), "deep.jsonl")
	lines := []string{
		`{"id":"ok-1","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
		`{"id":"deep-2","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f","arguments":{"a":` +
			strings.Repeat("[", 20000) + "1" + strings.Repeat("]", 20000) + `}}]}]}`,
	}
	if err := os.WriteFile(deep, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := cli(t, dir, "", "import", "--run", "deep", deep)
	if err == nil {
		t.Fatal("import of a too deep file succeeded")
	}
	for _, want := range []string{"deep.jsonl", "record 1", "line 2", "messages[1].tool_calls[0].arguments.a[0][0]…", "nested at most 10000 levels", "nothing imported"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("error %q does not mention %q", stderr, want)
		}
	}
	db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(dir, "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.RunByName(context.Background(), "deep"); err == nil {
		t.Error("the refused file created a run")
	}

	// A tool answer of 4 MB of "[" is checked (as text), next to the file
	// refused above.
	obs := filepath.Join(t.TempDir(), "brackets.jsonl")
	rec := `{"id":"b","domain":"airline","messages":[{"role":"user","content":"I am mia_li_3668"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"get_user_details","arguments":{"user_id":"mia_li_3668"}}]},` +
		`{"role":"tool","tool_call_id":"c1","name":"get_user_details","content":"` + strings.Repeat("[", 4_000_000) + `"},` +
		`{"role":"assistant","content":"Done, mia_li_3668."}]}`
	if err := os.WriteFile(obs, []byte(rec+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := cli(t, dir, "", "check", "--json", obs, deep)
	if err == nil || !strings.Contains(stderr, "nested at most 10000 levels") {
		t.Errorf("check = %v, stderr %q", err, stderr)
	}
	for _, want := range []string{`"trajectory":"b","source_index":0,"message":1,"call":0,"tool":"get_user_details","verdict":"pass"`, `"trajectory":"ok-1"`, `"failed_files":["` + deep + `"]`} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %s:\n%.2000s", want, out)
		}
	}
}
