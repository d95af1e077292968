package grounding

import (
	"math"
	"testing"
)

func out(inst string, steps int, stages string, loc *float64, rep, ver *bool, done bool, resolved *bool) SWEOutcome {
	return SWEOutcome{ExtID: inst + "-t", InstanceID: inst, Steps: steps, Stages: stages, Localization: loc,
		Reproduction: rep, Verification: ver, Completed: done, Resolved: resolved}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestSummarizeSWE(t *testing.T) {
	y, n := ptr(true), ptr(false)
	outs := []SWEOutcome{
		out("a__b-1", 4, "LRPr", ptr(1.0), y, y, true, y),
		out("a__b-2", 2, "LP", nil, n, nil, false, nil), // no reference, no edit, unfinished, not evaluated
		out("a__b-3", 2, "LL", ptr(0.0), n, n, true, n),
		out("a__b-3", 4, "RRPP", ptr(1.0), y, y, true, y), // a second attempt of instance 3
		{ExtID: "loose", Steps: 0},                        // no instance id, no steps
	}
	s := SummarizeSWE(outs)
	if s.Trajectories != 5 || s.Instances != 4 {
		t.Fatalf("trajectories %d instances %d, want 5 and 4", s.Trajectories, s.Instances)
	}
	want := map[SWEMetric]SWEMean{
		SWELocalizationMetric: {(1 + 0.5) / 2, 2},
		SWEReproductionMetric: {(1 + 0 + 0.5) / 3, 3},
		SWEVerificationMetric: {(1 + 0.5) / 2, 2},
		SWECompletionMetric:   {(1 + 0 + 1 + 0) / 4.0, 4},
		SWEStepsMetric:        {(4 + 2 + 3 + 0) / 4.0, 4},
		SWEResolvedMetric:     {(1 + 0.5) / 2, 2},
	}
	for m, w := range want {
		if g := s.Mean(m); g.N != w.N || !near(g.Value, w.Value) {
			t.Errorf("%s = %+v, want %+v", SWEMetricNames[m], g, w)
		}
	}
	if s.StepsTotal != 12 || !near(s.Share[0], 4/12.0) || !near(s.Share[1], 4/12.0) || !near(s.Share[2], 4/12.0) {
		t.Errorf("share %v over %d", s.Share, s.StepsTotal)
	}
	if e := SummarizeSWE(nil); e.Instances != 0 || e.Means[SWEStepsMetric].N != 0 || e.StepsTotal != 0 {
		t.Errorf("empty summary = %+v", e)
	}
}

func TestCompareSWE(t *testing.T) {
	y, n := ptr(true), ptr(false)
	base := []SWEOutcome{
		out("a__b-1", 10, "", ptr(0.0), n, n, true, n),
		out("a__b-2", 20, "", ptr(1.0), y, y, true, y),
		out("a__b-3", 30, "", nil, y, nil, false, nil), // only the baseline attempted 3
		{ExtID: "no-instance", Steps: 5},
	}
	cand := []SWEOutcome{
		out("a__b-1", 6, "", ptr(1.0), y, y, true, y),
		out("a__b-2", 10, "", ptr(1.0), y, n, true, nil), // no result for 2
		out("a__b-4", 8, "", ptr(1.0), y, y, true, y),    // only the candidate attempted 4
		{ExtID: "no-instance", Steps: 1},                 // never pairs, even with the same ext id
	}
	cols := CompareSWE([][]SWEOutcome{base, cand}, 0)
	if cols[0].Paired != 3 || cols[1].Paired != 2 {
		t.Fatalf("paired = %d, %d; want 3 (baseline with itself) and 2", cols[0].Paired, cols[1].Paired)
	}
	want := map[SWEMetric]SWEDelta{
		SWELocalizationMetric: {(1 - 0 + 1 - 1) / 2.0, 2},
		SWEReproductionMetric: {(1 - 0 + 1 - 1) / 2.0, 2},
		SWEVerificationMetric: {(1 - 0 + 0 - 1) / 2.0, 2},
		SWECompletionMetric:   {0, 2},
		SWEStepsMetric:        {(6 - 10 + 10 - 20) / 2.0, 2},
		SWEResolvedMetric:     {1, 1},
	}
	for m, w := range want {
		if g := cols[1].Deltas[m]; g.N != w.N || !near(g.Delta, w.Delta) {
			t.Errorf("delta %s = %+v, want %+v", SWEMetricNames[m], g, w)
		}
		if g := cols[0].Deltas[m]; g.Delta != 0 {
			t.Errorf("baseline delta %s = %+v, want 0", SWEMetricNames[m], g)
		}
	}
	if cols[1].Summary.Instances != 4 || cols[1].Summary.Means[SWEResolvedMetric].N != 2 {
		t.Errorf("candidate summary = %+v", cols[1].Summary)
	}
	if got := CompareSWE([][]SWEOutcome{base}, 5); got[0].Paired != 0 {
		t.Errorf("an out-of-range baseline pairs nothing, got %+v", got[0])
	}
}

func TestSWELocalization(t *testing.T) {
	if SWELocalization([]string{"a.py"}, nil) != nil {
		t.Error("no reference gives a number")
	}
	if v := SWELocalization([]string{"django/http/response.py", "x.py"}, []string{"django/http/response.py", "django/utils/y.py"}); v == nil || *v != 0.5 {
		t.Errorf("recall = %v, want 0.5", fptr(v))
	}
	if v := SWELocalization([]string{"http/response.py"}, []string{"django/http/response.py"}); v == nil || *v != 1 {
		t.Errorf("a path relative to a subdirectory should match, got %v", fptr(v))
	}
}
