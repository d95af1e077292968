package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"groundwork/store"
)

func sweFixture(name string) string { return filepath.Join("..", "grounding", "testdata", "swe", name) }

// TestCLISWEJSON checks the shape of `groundwork swe --json`: one object per
// trajectory with exactly the documented keys, then the summary.
func TestCLISWEJSON(t *testing.T) {
	out, stderr, err := cli(t, t.TempDir(), "", "swe", "--json",
		"--instances", sweFixture("instances.jsonl"),
		sweFixture("acme__calc-1.traj.json"), sweFixture("openhands_events.json"), sweFixture("report_keyed.json"))
	if err != nil {
		t.Fatalf("swe --json = %v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("swe --json printed %d lines, want 2 trajectories and a summary:\n%s", len(lines), out)
	}
	wantKeys := []string{"completed", "instance_id", "localization", "reproduction", "stages", "steps", "trajectory", "verification"}
	var first map[string]any
	for i, l := range lines[:2] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v", i, err)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if !reflect.DeepEqual(keys, wantKeys) {
			t.Errorf("line %d keys = %v, want %v", i, keys, wantKeys)
		}
		if i == 0 {
			first = m
		}
	}
	want := map[string]any{
		"trajectory": "acme__calc-1", "instance_id": "acme__calc-1", "steps": 8.0,
		"stages":       []any{"LOC", "REP", "REP", "REP", "REP", "PATCH", "REP", "REP"},
		"localization": 1.0, "reproduction": true, "verification": true, "completed": true,
	}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first trajectory = %v\nwant %v", first, want)
	}
	var events map[string]any
	json.Unmarshal([]byte(lines[1]), &events)
	if events["localization"] != nil || events["instance_id"] != "" {
		t.Errorf("a trajectory without instance metadata: localization %v (want null), instance %q", events["localization"], events["instance_id"])
	}
	var sum struct {
		Summary map[string]any `json:"summary"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &sum); err != nil || sum.Summary == nil {
		t.Fatalf("last line = %s, want {\"summary\": …}", lines[2])
	}
	s := sum.Summary
	if s["trajectories"] != 2.0 || s["localization_n"] != 1.0 || s["localization_mean"] != 1.0 ||
		s["reproduction_rate"] != 1.0 || s["completion_n"] != 2.0 || s["resolved_rate"] != 1.0 || s["resolved_n"] != 1.0 {
		t.Errorf("summary = %v", s)
	}
	share, _ := s["stage_share"].(map[string]any)
	if len(share) != 3 || share["LOC"] == nil || share["REP"] == nil || share["PATCH"] == nil {
		t.Errorf("stage_share = %v", s["stage_share"])
	}
}

func TestCLISWEText(t *testing.T) {
	out, _, err := cli(t, t.TempDir(), "", "swe", sweFixture("acme__calc-1.traj"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"acme__calc-1", "no reference", "RRRRRPrR", "summary: 1 trajectories", "localization  —  (no reference metadata)"} {
		if !strings.Contains(out, want) {
			t.Errorf("swe output lacks %q:\n%s", want, out)
		}
	}
}

func TestCLISWERefusesBadFiles(t *testing.T) {
	out, stderr, err := cli(t, t.TempDir(), "", "swe", "--json", sweFixture("acme__calc-1.traj"), sweFixture("report_keyed.json"), filepath.Join("..", "go.mod"))
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files refused") || !strings.Contains(stderr, "go.mod: refused") {
		t.Fatalf("swe with a bad file = %v, stderr %q", err, stderr)
	}
	if !strings.Contains(out, `"trajectory":"acme__calc-1"`) {
		t.Errorf("the good file was not reported:\n%s", out)
	}
	if _, _, err := cli(t, t.TempDir(), "", "swe"); err == nil {
		t.Error("swe without files succeeded")
	}
}

// TestCLISWERealData runs the command on every real SWE trajectory with its
// metadata, as the held-out comparison will.
func TestCLISWERealData(t *testing.T) {
	real := filepath.Join("..", "..", "shared", "realdata")
	index := filepath.Join(real, "SWE_INSTANCE_INDEX.json")
	var idx struct {
		Entries []struct {
			Trajectory string `json:"trajectory"`
		} `json:"entries"`
	}
	b, err := readFileIfExists(index)
	if b == nil {
		t.Skipf("real SWE logs not found at %s: ../shared/realdata is not checked out", real)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	args := []string{"swe", "--json", "--instances", filepath.Join(real, "swe-instances", "instances.jsonl")}
	for _, e := range idx.Entries {
		args = append(args, filepath.Join(real, e.Trajectory))
	}
	out, stderr, err := cli(t, t.TempDir(), "", args...)
	if err != nil {
		t.Fatalf("swe on the real logs = %v\n%s", err, stderr)
	}
	if n := strings.Count(out, "\n"); n != len(idx.Entries)+1 {
		t.Errorf("swe printed %d lines for %d trajectories", n, len(idx.Entries))
	}
}

func readFileIfExists(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// TestCLIImportSWE imports SWE trajectories, instance metadata and
// evaluation results with `groundwork import`, told apart by content, and
// finds the diagnostics computed at import.
func TestCLIImportSWE(t *testing.T) {
	dir := t.TempDir()
	out, stderr, err := cli(t, dir, "", "import", "--run", "calc", sweFixture("acme__calc-1.traj.json"), sweFixture("openhands_events.json"))
	if err != nil {
		t.Fatalf("import trajectories = %v\n%s", err, stderr)
	}
	out, stderr, err = cli(t, dir, "", "import", sweFixture("instances.jsonl"))
	if err != nil || !strings.Contains(out, "imported 2 instances of SWE-bench metadata") {
		t.Fatalf("import instances = %v\n%s%s", err, out, stderr)
	}
	out, stderr, err = cli(t, dir, "", "import", "--run", "calc", sweFixture("report_keyed.json"))
	if err != nil || !strings.Contains(out, `imported 2 results of evaluation into run "calc"`) {
		t.Fatalf("import results = %v\n%s%s", err, out, stderr)
	}
	_, stderr, err = cli(t, dir, "", "import", "--run", "nope", sweFixture("results_summary.json"))
	if err == nil || !strings.Contains(stderr, `"nope", which does not exist`) {
		t.Errorf("results for an unknown run = %v, %s", err, stderr)
	}
	_, stderr, err = cli(t, dir, "", "import", sweFixture("sbcli_report.json"))
	if err == nil || !strings.Contains(stderr, "no run name") {
		t.Errorf("results without a run = %v, %s", err, stderr)
	}

	db, err := store.Open(context.Background(), filepath.Join(dir, "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.RunByName(context.Background(), "calc")
	if err != nil {
		t.Fatal(err)
	}
	outs, _, err := db.SWEOutcomes(context.Background(), run.ID, "", 0)
	if err != nil || len(outs) != 2 {
		t.Fatalf("SWEOutcomes = %+v, %v; want the two trajectories diagnosed at import", outs, err)
	}
	a := outs[0]
	if a.ExtID != "acme__calc-1" || a.Localization == nil || *a.Localization != 1 || a.Resolved == nil || !*a.Resolved || a.Stages != "LRRRRPrR" {
		t.Errorf("acme__calc-1 outcome = %+v", a)
	}
}
