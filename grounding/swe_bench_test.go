package grounding_test

import (
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store/storetest"
)

// BenchmarkDiagnoseSWE10k diagnoses 10,000 generated SWE trajectories
// (storetest.SWEGenerated: 10–60 steps each) per iteration: classification,
// routing and every diagnostic, against reference metadata. The issue asks
// for under 10 s on the project machine.
func BenchmarkDiagnoseSWE10k(b *testing.B) {
	n := 10_000
	if testing.Short() {
		n = 500
	}
	ts := make([]*grounding.Trajectory, n)
	steps := 0
	for i := range ts {
		ts[i] = storetest.SWEGenerated(i)
		steps += len(ts[i].Messages) / 2
	}
	inst := storetest.SWEInstance("gen__repo-0", true)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	iters := 0
	for b.Loop() {
		for _, t := range ts {
			grounding.DiagnoseSWE(t, inst)
		}
		iters++
	}
	b.ReportMetric(time.Since(start).Seconds()/float64(iters), "s/10k")
	b.ReportMetric(float64(steps)/float64(n), "steps/trajectory")
}
