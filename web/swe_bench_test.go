package web_test

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store/storetest"
)

// BenchmarkSWEPages imports two runs of 10,000 generated SWE trajectories
// each (sharing their 500 instances), with instance metadata and results,
// computes their diagnostics (reported once as refresh-s: the issue's
// "diagnostics for 10,000 trajectories" through the store, both runs), and
// measures the comparison page, a run's timelines and a trajectory page
// once computed. The issue asks the comparison to answer under 200 ms.
func BenchmarkSWEPages(b *testing.B) {
	const n = 10_000
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			var runs [2]int64
			for k := range runs {
				res, err := db.ImportTrajectories(ctx, fmt.Sprintf("gen-%d", k),
					grounding.ImportResult{File: fmt.Sprintf("gen-%d.jsonl", k), Format: "mini-swe-agent", SHA256: fmt.Sprintf("gen-%d", k)},
					storetest.SWEGeneratedSeq(k*n, n))
				if err != nil {
					b.Fatal(err)
				}
				runs[k] = res.RunID
			}
			if _, err := db.ImportSWEInstances(ctx, "gen-instances.jsonl", genInstances(500)); err != nil {
				b.Fatal(err)
			}
			if _, err := db.ImportSWEResults(ctx, "gen-0", "gen-report.json", genResults(500)); err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			total := 0
			for _, id := range runs {
				c, err := db.RefreshSWEDiagnostics(ctx, id)
				if err != nil {
					b.Fatal(err)
				}
				total += c
			}
			refresh := time.Since(start)
			if total != 2*n {
				b.Fatalf("refreshed %d trajectories, want %d", total, 2*n)
			}
			outs, _, err := db.SWEOutcomes(ctx, runs[0], "", 1)
			if err != nil || len(outs) != 1 {
				b.Fatal(outs, err)
			}
			get := benchServer(b, db)
			compare := fmt.Sprintf("/swe?run=%d&run=%d&baseline=%d", runs[0], runs[1], runs[0])
			b.Run("compare", func(b *testing.B) {
				latency(b, get, compare)
				b.ReportMetric(refresh.Seconds()/2, "refresh-s/10k")
			})
			b.Run("timelines", func(b *testing.B) { latency(b, get, fmt.Sprintf("/swe/runs/%d", runs[1])) })
			b.Run("trajectory", func(b *testing.B) { latency(b, get, fmt.Sprintf("/swe/trajectories/%d", outs[0].TrajectoryID)) })
		})
	}
}

func genInstances(n int) iter.Seq2[*grounding.SWEInstance, error] {
	return func(yield func(*grounding.SWEInstance, error) bool) {
		for i := range n {
			if !yield(storetest.SWEInstance(fmt.Sprintf("gen__repo-%d", i), i%2 == 0), nil) {
				return
			}
		}
	}
}

func genResults(n int) iter.Seq2[grounding.SWEResult, error] {
	return func(yield func(grounding.SWEResult, error) bool) {
		for i := range n {
			if !yield(grounding.SWEResult{InstanceID: fmt.Sprintf("gen__repo-%d", i), Resolved: i%3 != 0}, nil) {
				return
			}
		}
	}
}
