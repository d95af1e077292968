package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/store/storetest"
)

// benchPoolSize is the number of trajectories of one benchmarked file.
const benchPoolSize = 1000

// benchPool generates a τ-bench-like pool and its approximate size as
// canonical JSON Lines.
func benchPool(b *testing.B) (pool []*grounding.Trajectory, bytes int64, messages int) {
	b.Helper()
	for i := range benchPoolSize {
		t := storetest.TauLike("bench", i)
		line, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		bytes += int64(len(line)) + 1
		messages += len(t.Messages)
		pool = append(pool, t)
	}
	return pool, bytes, messages
}

// benchmarkImport imports the pool as a new file into a new run per
// iteration, so the tables grow as they would over many imports.
func benchmarkImport(b *testing.B, db *store.DB) {
	pool, size, messages := benchPool(b)
	b.SetBytes(size)
	b.ReportAllocs()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("bench-%d", i)
		res, err := db.ImportTrajectories(ctx, name, storetest.FileMeta(name+".json"), storetest.Seq(pool...))
		if err != nil {
			b.Fatal(err)
		}
		if res.Trajectories != len(pool) {
			b.Fatalf("imported %d trajectories, want %d", res.Trajectories, len(pool))
		}
		i++
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(len(pool)*b.N)/secs, "trajectories/s")
	b.ReportMetric(float64(messages*b.N)/secs, "messages/s")
}

func BenchmarkImport(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkImport(b, storetest.OpenSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { benchmarkImport(b, storetest.OpenPostgres(b)) })
}
