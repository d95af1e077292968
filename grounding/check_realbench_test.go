package grounding

import (
	"os"
	"testing"
)

// BenchmarkCheckRealAirline measures checking throughput on the real τ-bench
// airline log (parsing excluded), per core.
func BenchmarkCheckRealAirline(b *testing.B) { benchRealLog(b, tauAirline) }

// BenchmarkCheckRealRetail is BenchmarkCheckRealAirline on the real τ-bench
// retail log (grok-3, 115 trajectories: longer replies, more failed calls).
func BenchmarkCheckRealRetail(b *testing.B) {
	benchRealLog(b, "../../shared/realdata/tau-bench-retail/tau_bench/tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json")
}

// BenchmarkCheckRealTau2SFT is BenchmarkCheckRealAirline on τ²-bench's
// OpenAI fine-tuning file (24 conversations in three domains, with schemas).
func BenchmarkCheckRealTau2SFT(b *testing.B) {
	benchRealLog(b, "../../shared/realdata/tau2-bench/data/tau2/sft-v1-small/sft-v1-small-openai/test_sft-v1-small.jsonl")
}

// benchRealLog reads a shared real log once and measures checking it.
func benchRealLog(b *testing.B, path string) {
	f, err := os.Open(path)
	if err != nil {
		b.Skipf("real log not available (%v)", err)
	}
	defer f.Close()
	var pool []*Trajectory
	for tr, err := range Read(f, path, FormatAuto) {
		if err != nil {
			b.Fatal(err)
		}
		pool = append(pool, tr)
	}
	benchCheckPool(b, pool, nil)
}
