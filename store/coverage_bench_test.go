package store_test

import (
	"context"
	"os"
	"strconv"
	"testing"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/store/storetest"
)

// benchmarkCoveragePool reads the coverage pool of a run of generated
// trajectories (35,000 by default; COVERAGE_BENCH_N changes it): what a
// cold coverage page asks of the store.
func benchmarkCoveragePool(b *testing.B, db *store.DB) {
	n := 35_000
	if v, err := strconv.Atoi(os.Getenv("COVERAGE_BENCH_N")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	seq := func(yield func(*grounding.Trajectory, error) bool) {
		for t := range grounding.Generate(grounding.GenOptions{Trajectories: n, Seed: 1, Kind: "tau"}) {
			if !yield(t, nil) {
				return
			}
		}
	}
	res, err := db.ImportTrajectories(ctx, "gen", storetest.FileMeta("gen.jsonl"), seq)
	if err != nil {
		b.Fatal(err)
	}
	runs := []int64{res.RunID}
	b.Run("version", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.CoverageVersion(ctx, runs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			pool, _, err := db.CoveragePool(ctx, runs)
			if err != nil || len(pool) != n {
				b.Fatalf("CoveragePool = %d, %v", len(pool), err)
			}
		}
	})
}

func BenchmarkCoveragePool(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkCoveragePool(b, storetest.OpenSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { benchmarkCoveragePool(b, storetest.OpenPostgres(b)) })
}
