package grounding

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// realSWE is the folder of real agent logs (../shared/realdata, see its
// MANIFEST), kept outside the repository.
var realSWE = filepath.Join("..", "..", "shared", "realdata")

func skipWithoutRealSWE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(realSWE, "SWE_INSTANCE_INDEX.json")); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("real SWE logs not found at %s: ../shared/realdata is not checked out", realSWE)
	}
}

// reading is my own hand labelling of one real trajectory
// (testdata/swe/readings.json).
type reading struct {
	Trajectory   string   `json:"trajectory"`
	Instances    string   `json:"instances"`
	Stages       string   `json:"stages"`
	Localization *float64 `json:"localization"`
	Reproduction *bool    `json:"reproduction"`
	Verification *bool    `json:"verification"`
	Completed    bool     `json:"completed"`
}

func loadReadings(t *testing.T) []reading {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "swe", "readings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Readings []reading }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Readings
}

// realInstance finds an instance in a real metadata file.
func realInstance(t *testing.T, file, id string) *SWEInstance {
	t.Helper()
	if file == "" {
		return nil
	}
	f, err := os.Open(filepath.Join(realSWE, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for in, err := range ReadSWEInstances(f, file) {
		if err != nil {
			t.Fatalf("ReadSWEInstances(%s): %v", file, err)
		}
		if in.InstanceID == id {
			return in
		}
	}
	t.Fatalf("%s has no instance %s", file, id)
	return nil
}

func readRealTrajectory(t *testing.T, rel string) *Trajectory {
	t.Helper()
	f, err := os.Open(filepath.Join(realSWE, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := readAllTrajectories(f, rel, FormatAuto)
	if err != nil || len(ts) != 1 {
		t.Fatalf("Read(%s) = %d trajectories, %v", rel, len(ts), err)
	}
	return ts[0]
}

// TestRealSWEReadings diagnoses real trajectories of the three scaffolds and
// compares each with my reading of it: the stage of every step and every
// metric.
func TestRealSWEReadings(t *testing.T) {
	skipWithoutRealSWE(t)
	steps, same, metrics, sameMetrics := 0, 0, 0, 0
	for _, r := range loadReadings(t) {
		t.Run(filepath.Base(r.Trajectory), func(t *testing.T) {
			tr := readRealTrajectory(t, r.Trajectory)
			inst := realInstance(t, r.Instances, SWEMetaOf(tr).InstanceID)
			d := DiagnoseSWE(tr, inst)
			got := d.StageString()
			if got != r.Stages {
				t.Errorf("stages\n got %s\nread %s", got, r.Stages)
				for i := range d.Steps {
					if i >= len(r.Stages) || got[i] != r.Stages[i] {
						t.Logf("step %d: %.80q → %s (%s; %s)", i, d.Steps[i].Action, d.Routes[i].Stage, d.Steps[i].Why, d.Routes[i].Why)
					}
				}
			}
			steps += max(len(got), len(r.Stages))
			for i := 0; i < min(len(got), len(r.Stages)); i++ {
				if got[i]|0x20 == r.Stages[i]|0x20 { // the stage; fall-back marks are checked above
					same++
				}
			}
			for _, m := range []struct {
				name      string
				got, want any
			}{
				{"localization", d.Localization, r.Localization},
				{"reproduction", d.Reproduction, r.Reproduction},
				{"verification", d.Verification, r.Verification},
				{"completed", d.Completed, r.Completed},
			} {
				metrics++
				if reflect.DeepEqual(m.got, m.want) {
					sameMetrics++
				} else {
					t.Errorf("%s = %v, read %v", m.name, deref(m.got), deref(m.want))
				}
			}
		})
	}
	t.Logf("agreement with my readings: stages %d/%d steps, metrics %d/%d", same, steps, sameMetrics, metrics)

	// Single steps read one by one (testdata/swe/step_readings.json): the
	// class each should get, chosen where classes are easy to get wrong
	// (reverts, --help, write-and-run, regressions) and among ordinary steps.
	t.Run("steps", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("testdata", "swe", "step_readings.json"))
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Steps []struct {
				Trajectory string       `json:"trajectory"`
				Step       int          `json:"step"`
				Class      SWEStepClass `json:"class"`
				Reading    string       `json:"reading"`
			}
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		cache := map[string][]SWEStep{}
		agree := 0
		for _, r := range f.Steps {
			steps, ok := cache[r.Trajectory]
			if !ok {
				steps = SWESteps(readRealTrajectory(t, r.Trajectory))
				cache[r.Trajectory] = steps
			}
			if r.Step >= len(steps) {
				t.Errorf("%s: no step %d (%d steps)", filepath.Base(r.Trajectory), r.Step, len(steps))
				continue
			}
			s := steps[r.Step]
			if s.Class == r.Class {
				agree++
				continue
			}
			t.Errorf("%s step %d: class %s (%s), read %s (%s)", filepath.Base(r.Trajectory), r.Step, s.Class, s.Why, r.Class, r.Reading)
		}
		t.Logf("agreement with my step readings: %d/%d steps", agree, len(f.Steps))
	})
}

func deref(v any) any {
	switch p := v.(type) {
	case *float64:
		return fptr(p)
	case *bool:
		return bptr(p)
	}
	return v
}

// TestRealSWEImport imports every real SWE trajectory the index lists and
// checks what the MANIFEST says of them: the scaffold, the instance id and a
// message list 1:1 with the source's.
func TestRealSWEImport(t *testing.T) {
	skipWithoutRealSWE(t)
	b, err := os.ReadFile(filepath.Join(realSWE, "SWE_INSTANCE_INDEX.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Entries []struct {
			Trajectory string `json:"trajectory"`
			InstanceID string `json:"instance_id"`
		}
	}
	if err := json.Unmarshal(b, &index); err != nil {
		t.Fatal(err)
	}
	formats := map[string]int{}
	for _, e := range index.Entries {
		tr := readRealTrajectory(t, e.Trajectory)
		formats[tr.Source.Format]++
		if got := SWEMetaOf(tr).InstanceID; got != e.InstanceID {
			t.Errorf("%s: instance id %q, the index says %q", e.Trajectory, got, e.InstanceID)
		}
		var src struct {
			Messages []json.RawMessage `json:"messages"`
			History  []json.RawMessage `json:"history"`
		}
		raw, _ := os.ReadFile(filepath.Join(realSWE, e.Trajectory))
		_ = json.Unmarshal(raw, &src)
		want := len(src.Messages) + len(src.History)
		if tr.Source.Format == string(FormatOpenHands) {
			want++ // the completion log's final response
		}
		if len(tr.Messages) != want {
			t.Errorf("%s: %d messages, the source has %d", e.Trajectory, len(tr.Messages), want)
		}
		d := DiagnoseSWE(tr, nil)
		if len(d.Steps) == 0 {
			t.Errorf("%s: no steps", e.Trajectory)
		}
	}
	if want := map[string]int{"swe-agent": 8, "mini-swe-agent": 24, "openhands": 9}; !reflect.DeepEqual(formats, want) {
		t.Errorf("formats = %v, want %v", formats, want)
	}
}

// TestRealSWEMetadata reads every real metadata and results file.
func TestRealSWEMetadata(t *testing.T) {
	skipWithoutRealSWE(t)
	count := func(file string) int {
		f, err := os.Open(filepath.Join(realSWE, file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		n := 0
		for _, err := range ReadSWEInstances(f, file) {
			if err != nil {
				t.Fatalf("ReadSWEInstances(%s): %v", file, err)
			}
			n++
		}
		return n
	}
	for file, want := range map[string]int{
		"swe-instances/instances.jsonl":                                   78,
		"swe-instances/derived_instances.json":                            20, // the MANIFEST says 21; the file holds 20 records
		"swe-agent/tests/test_data/data_sources/swe-bench-dev-easy.json":  4,  // astroid-1268 twice, identical
		"swe-agent/tests/test_data/data_sources/swe-bench-lite-test.json": 5,
	} {
		if got := count(file); got != want {
			t.Errorf("%s: %d instances, want %d", file, got, want)
		}
	}
	const run = "mini-swe-agent-gemini3pro/swebench_results/20251118_gemini-3-pro-74pct/"
	for file, want := range map[string][2]int{
		run + "results_summary.json":                  {500, 371},
		run + "logs/django__django-11133/report.json": {1, 1},
		"openhands-swebench-verified/evaluation/evaluation_outputs/outputs/princeton-nlp__SWE-bench_Verified-test/CodeActAgent/claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-no-hint-no-condensation-run_1/output.swebench_eval.logs/instance_astropy__astropy-14365.log": {1, 0},
		// The MANIFEST: 26 resolved, 24 unresolved, 1 empty patch (django-11265, also listed unresolved).
		"openhands-swebench-verified/evaluation/evaluation_outputs/outputs/princeton-nlp__SWE-bench_Verified-test/CodeActAgent/claude-3-5-sonnet-20241022_maxiter_50_N_v0.15.0-no-hint-no-condensation-run_1/output.swebench_eval.md": {50, 26},
	} {
		f, err := os.Open(filepath.Join(realSWE, file))
		if err != nil {
			t.Fatal(err)
		}
		n, resolved := 0, 0
		for r, err := range ReadSWEResults(f, file) {
			if err != nil {
				t.Fatalf("ReadSWEResults(%s): %v", file, err)
			}
			n++
			if r.Resolved {
				resolved++
			}
		}
		f.Close()
		if [2]int{n, resolved} != want {
			t.Errorf("%s: %d results, %d resolved; want %v", file, n, resolved, want)
		}
	}
}
