package grounding

import (
	"os"
	"strconv"
	"sync"
	"testing"
)

var (
	covBenchOnce sync.Once
	covBenchRows []PoolTrajectory
)

// covBenchPool is the pool of the coverage benchmarks: Generate's τ-like
// trajectories (seed 1), checked and turned into PoolTrajectories the way
// the store does at import. 35,000 by default; COVERAGE_BENCH_N changes it.
func covBenchPool(b *testing.B) []PoolTrajectory {
	covBenchOnce.Do(func() {
		n := 35_000
		if v, err := strconv.Atoi(os.Getenv("COVERAGE_BENCH_N")); err == nil && v > 0 {
			n = v
		}
		i := int64(0)
		for t := range Generate(GenOptions{Trajectories: n, Seed: 1, Kind: "tau"}) {
			i++
			r := CheckDefault(t)
			steps := PathSteps(t, r.Decisions)
			masks := make([]int, len(r.Decisions))
			sup := 0
			for k, d := range r.Decisions {
				masks[k] = d.Mask
				sup += d.Mask
			}
			covBenchRows = append(covBenchRows, PoolTrajectory{ID: i, Run: 1, ExtID: t.ID, Parent: t.Parent(), Domain: t.Domain,
				Path: CanonicalPath(steps, masks, t.Succeeded() && r.Workflow), Supervised: sup, Tokens: CertifiedTokens(steps, masks)})
		}
	})
	return covBenchRows
}

// BenchmarkCoverage measures the pure steps of a cold coverage page on the
// generated pool: preparing the pool (distinct paths, parents, heatmaps) and
// analyzing it at a scale; then structured and random selection at half the
// certified parents.
func BenchmarkCoverage(b *testing.B) {
	rows := covBenchPool(b)
	var p *Pool
	b.Run("NewPool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p = NewPool(rows)
		}
		b.ReportMetric(float64(len(p.Paths)), "paths")
		b.ReportMetric(float64(len(rows)), "trajectories")
	})
	b.Run("Analyze8B", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Analyze(p, Scale{"8B", 3})
		}
	})
	budget := p.CertifiedParents() / 2
	b.Run("SelectStructured", func(b *testing.B) {
		var sel Selection
		for b.Loop() {
			sel, _ = p.SelectStructured(budget, 3, nil)
		}
		b.ReportMetric(float64(sel.Metrics.Paths), "paths")
		b.ReportMetric(float64(sel.Metrics.Capped), "capped")
	})
	b.Run("Random10Seeds", func(b *testing.B) {
		var r RandomBaseline
		for b.Loop() {
			r, _ = p.Random(budget, 3, DefaultSeeds())
		}
		b.ReportMetric(r.Paths.Mean, "paths")
		b.ReportMetric(r.Capped.Mean, "capped")
	})
}
