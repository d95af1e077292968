package grounding

import (
	"os"
	"testing"
)

// BenchmarkCheckRealAirline measures checking throughput on the real τ-bench
// airline log (parsing excluded), per core.
func BenchmarkCheckRealAirline(b *testing.B) {
	f, err := os.Open(tauAirline)
	if err != nil {
		b.Skipf("real τ-bench log not available (%v)", err)
	}
	defer f.Close()
	var pool []*Trajectory
	for tr, err := range Read(f, tauAirline, FormatAuto) {
		if err != nil {
			b.Fatal(err)
		}
		pool = append(pool, tr)
	}
	decisions := 0
	for _, t := range pool {
		decisions += len(Decisions(t))
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := 0; i < b.N; i++ {
		for _, t := range pool {
			Check(t, nil)
		}
	}
	reportDecisionRate(b, decisions*b.N, processCPU()-cpu0)
}
