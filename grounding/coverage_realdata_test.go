package grounding

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"testing"
)

// TestCoverageRealTauBench computes the canonical paths of the real τ-bench
// airline log and compares the 8B report with a golden file: the keys are
// the same on every machine. The pool audit agrees with Audit over the same
// check results.
func TestCoverageRealTauBench(t *testing.T) {
	f, err := os.Open(realAirline)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("real τ-bench log not found at %s: ../shared/realdata is not checked out", realAirline)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	audit := NewAudit()
	var ts []PoolTrajectory
	for tr, err := range Read(f, "gpt-4o-airline.json", FormatAuto) {
		if err != nil {
			t.Fatal(err)
		}
		r := CheckDefault(tr)
		audit.Add(r)
		steps := PathSteps(tr, r.Decisions)
		masks := make([]int, len(r.Decisions))
		supervised := 0
		for i, d := range r.Decisions {
			masks[i] = d.Mask
			supervised += d.Mask
		}
		path := CanonicalPath(steps, masks, r.R == 1 && r.Workflow)
		ts = append(ts, PoolTrajectory{ID: int64(len(ts) + 1), Run: 1, ExtID: tr.ID, Parent: tr.Parent(), Domain: tr.Domain,
			Path: path, Supervised: supervised, Tokens: CertifiedTokens(steps, masks)})
	}
	p := NewPool(ts)
	r := Analyze(p, Scale{"8B", 3})
	a := r.Audit
	if a.Trajectories != audit.Trajectories || a.Certified != audit.Certified || a.Supervised != audit.Supervised ||
		a.AtMostTwoSupervised != audit.AtMostTwoSupervised || a.CertifiedAfterError != audit.CertifiedAfterError {
		t.Errorf("pool audit %+v disagrees with Audit %+v", a, *audit)
	}
	covGolden(t, "coverage/tau_airline_8B.golden", covReportText(p, r))

	// Structured selection beats the random mean at half the certified
	// parents, on paths and on capped support.
	b := p.CertifiedParents() / 2
	sel, err := p.SelectStructured(b, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	rnd, err := p.Random(b, 3, DefaultSeeds())
	if err != nil {
		t.Fatal(err)
	}
	if float64(sel.Metrics.Paths) < rnd.Paths.Mean || float64(sel.Metrics.Capped) < rnd.Capped.Mean {
		t.Errorf("structured %+v does not beat random %+v at B=%d", sel.Metrics, rnd, b)
	}
	t.Logf("B=%d of %d: structured %+v; random paths %.1f±%.1f capped %.1f±%.1f atoms %.1f recovery %.1f",
		b, p.CertifiedParents(), sel.Metrics, rnd.Paths.Mean, rnd.Paths.SD, rnd.Capped.Mean, rnd.Capped.SD, rnd.Atoms.Mean, rnd.RecoveryPaths.Mean)
	if !slices.Contains(SelectionStages, sel.Stages[0]) {
		t.Errorf("stage %q unknown", sel.Stages[0])
	}
}
