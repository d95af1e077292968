package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/store/storetest"
)

// benchAnnotators is how many annotators work at once in the adjudication
// benchmarks.
const benchAnnotators = 32

// benchWarmup is how many verdicts of each annotator are left out of the
// latency figures: the first ones open the connection and prepare the hot
// statements on it. They count in the rate.
const benchWarmup = 5

// benchPaceRate is the offered load of BenchmarkAdjudicationPaced: the
// issue's goal, 500 verdicts per second from 32 annotators together.
const benchPaceRate = 500

// adjudicationPool imports a fresh run of about 5,000 queued decisions and
// returns its filter.
func adjudicationPool(b *testing.B, db *store.DB, name string) grounding.QueueFilter {
	ctx := context.Background()
	var pool []*grounding.Trajectory
	for i := range 3000 {
		pool = append(pool, storetest.Ambiguous(name, i))
	}
	if _, err := db.ImportTrajectories(ctx, name, storetest.FileMeta(name+".jsonl"), storetest.Seq(pool...)); err != nil {
		b.Fatal(err)
	}
	run, err := db.RunByName(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	return grounding.QueueFilter{RunID: run.ID}
}

func benchUsers(b *testing.B, db *store.DB) []grounding.User {
	var users []grounding.User
	for i := range benchAnnotators {
		u, err := db.CreateUser(context.Background(), fmt.Sprintf("ann%02d", i), grounding.RoleAnnotator, []byte("x"))
		if err != nil {
			b.Fatal(err)
		}
		users = append(users, u)
	}
	return users
}

// adjudicate runs the 32 annotators over the pool of f until it is empty.
// Each loops verdict → next: SubmitNext records the verdict, settles the
// decision (mask, trajectory and run counters) and claims the following
// item in one transaction, the store work behind every key press on the
// review screen. With interval 0 each annotator goes as fast as it can
// (closed loop: the figure is capacity); otherwise each starts a verdict
// every interval and latency counts from the planned start, so time spent
// behind schedule is counted too. It returns the latencies, the verdicts and
// the elapsed time.
func adjudicate(b *testing.B, db *store.DB, users []grounding.User, f grounding.QueueFilter, interval time.Duration) ([]time.Duration, int, time.Duration) {
	ctx := context.Background()
	start := time.Now()
	lat := make([][]time.Duration, len(users))
	errs := make(chan error, len(users))
	var wg sync.WaitGroup
	for k, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Stagger the paced annotators evenly over one interval.
			planned := start.Add(time.Duration(k) * interval / time.Duration(len(users)))
			c, err := db.Next(ctx, u.ID, f, 0)
			n := 0
			for err == nil {
				if interval > 0 {
					time.Sleep(time.Until(planned))
				} else {
					planned = time.Now()
				}
				v := grounding.VerdictPass
				if c.Item.ID%4 == 0 {
					v = grounding.VerdictFail
				}
				var found bool
				if _, c, found, err = db.SubmitNext(ctx, u.ID, c.Item.ID, v, "", f, 0); err != nil {
					break
				}
				if n++; n > benchWarmup {
					lat[k] = append(lat[k], time.Since(planned))
				}
				planned = planned.Add(interval)
				if !found {
					err = grounding.ErrNotFound
				}
			}
			if !errors.Is(err, grounding.ErrNotFound) {
				errs <- err
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	var all []time.Duration
	verdicts := 0
	for k := range users {
		all = append(all, lat[k]...)
		verdicts += len(lat[k]) + min(benchWarmup, len(lat[k]))
	}
	if run, err := db.Run(ctx, f.RunID); err != nil || run.Queued != 0 {
		b.Fatalf("after the benchmark run %+v, %v; want nothing left queued", run, err)
	}
	return all, verdicts, elapsed
}

func report(b *testing.B, all []time.Duration, verdicts int, elapsed time.Duration) {
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / 1e6 }
	b.ReportMetric(float64(verdicts)/elapsed.Seconds(), "verdicts/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}

func benchmarkAdjudication(b *testing.B, db *store.DB, interval time.Duration) {
	users := benchUsers(b, db)
	var (
		all      []time.Duration
		verdicts int
		elapsed  time.Duration
	)
	i := 0
	for b.Loop() {
		b.StopTimer()
		f := adjudicationPool(b, db, fmt.Sprintf("bench-adj-%d", i))
		i++
		b.StartTimer()
		lat, n, d := adjudicate(b, db, users, f, interval)
		all, verdicts, elapsed = append(all, lat...), verdicts+n, elapsed+d
	}
	report(b, all, verdicts, elapsed)
}

// BenchmarkAdjudication measures capacity: 32 annotators as fast as they
// can go. Run with -benchtime 3x (each iteration is a pool of 5,000
// verdicts). With zero think time every annotator always waits, so the
// latency here is 32 / throughput; see BenchmarkAdjudicationPaced for the
// latency at the goal's load.
func BenchmarkAdjudication(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchmarkAdjudication(b, storetest.OpenSQLite(b), 0) })
	b.Run("postgres", func(b *testing.B) { benchmarkAdjudication(b, storetest.OpenPostgres(b), 0) })
}

// BenchmarkAdjudicationPaced offers a steady load spread over 32
// annotators (500 verdicts per second is the goal: one verdict each 64 ms
// per annotator) and reports the latency of each verdict → next from its
// planned start, and the rate sustained. 250 and 400 per second show the
// curve below the goal.
func BenchmarkAdjudicationPaced(b *testing.B) {
	for _, rate := range []int{250, 400, benchPaceRate} {
		interval := time.Duration(benchAnnotators) * time.Second / time.Duration(rate)
		b.Run(fmt.Sprintf("sqlite-%d", rate), func(b *testing.B) { benchmarkAdjudication(b, storetest.OpenSQLite(b), interval) })
		b.Run(fmt.Sprintf("postgres-%d", rate), func(b *testing.B) { benchmarkAdjudication(b, storetest.OpenPostgres(b), interval) })
	}
}
