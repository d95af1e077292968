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
	benchCheckPool(b, pool, nil)
}
