package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// coverageBenchSize is the generated pool of the coverage benchmark: 35,000
// trajectories by default (the paper's pool had 34,772 certified
// candidates); COVERAGE_BENCH_N changes it.
func coverageBenchSize() int {
	if n, err := strconv.Atoi(os.Getenv("COVERAGE_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 35_000
}

// swapHandler serves whatever handler it holds, so a benchmark can start
// from an empty coverage cache while keeping its logged-in session.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

func (s *swapHandler) fresh(b *testing.B, db *store.DB) {
	h, err := web.NewHandler(web.Config{UploadDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, web.Importer{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	s.h.Store(&h)
}

// BenchmarkCoveragePage measures the coverage page of a generated pool of
// 35,000 τ-like trajectories (grounding.Generate, seed 1): warm (the pool
// cached, the version unchanged: p50/p99 over the iterations) and cold
// (every iteration a new handler, so an empty cache: the pool read from the
// store, prepared, analyzed and rendered), after a human verdict (the cached
// pool patched), plus the selection simulator at half the certified
// parents.
func BenchmarkCoveragePage(b *testing.B) {
	n := coverageBenchSize()
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			start := time.Now()
			seq := func(yield func(*grounding.Trajectory, error) bool) {
				for t := range grounding.Generate(grounding.GenOptions{Trajectories: n, Seed: 1, Kind: "tau"}) {
					if !yield(t, nil) {
						return
					}
				}
			}
			res, err := db.ImportTrajectories(ctx, "gen", grounding.ImportResult{File: "gen.jsonl", Format: "canonical", SHA256: "gen"}, seq)
			if err != nil {
				b.Fatal(err)
			}
			b.Logf("%s: imported %d trajectories in %s", name, res.Trajectories, time.Since(start).Round(time.Second))

			hash, _ := bcrypt.GenerateFromPassword([]byte("password-rita"), bcrypt.MinCost)
			if _, err := db.CreateUser(ctx, "rita", grounding.RoleResearcher, hash); err != nil {
				b.Fatal(err)
			}
			sw := &swapHandler{}
			sw.fresh(b, db)
			srv := httptest.NewServer(sw)
			b.Cleanup(srv.Close)
			jar, _ := cookiejar.New(nil)
			c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			form := url.Values{"name": {"rita"}, "password": {"password-rita"}}
			req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", srv.URL)
			resp, err := c.Do(req)
			if err != nil || resp.StatusCode != http.StatusSeeOther {
				b.Fatalf("login: %v %v", err, resp)
			}
			resp.Body.Close()
			get := func(path string) (int, int) {
				resp, err := c.Get(srv.URL + path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp.StatusCode, int(n)
			}
			page := fmt.Sprintf("/coverage?run=%d&scale=8B", res.RunID)

			b.Run("warm", func(b *testing.B) { latency(b, get, page) })
			b.Run("warm-deficits-filtered", func(b *testing.B) {
				latency(b, get, fmt.Sprintf("/coverage/deficits?run=%d&scale=8B&atom=recover&atom=error:write", res.RunID))
			})
			b.Run("cold", func(b *testing.B) {
				var d []time.Duration
				for b.Loop() {
					sw.fresh(b, db)
					t0 := time.Now()
					if status, _ := get(page); status != 200 {
						b.Fatalf("GET %s = %d", page, status)
					}
					d = append(d, time.Since(t0))
				}
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
				b.ReportMetric(float64(d[len(d)-1])/1e6, "max-ms")
			})
			// A verdict per iteration (a claimed queue item passed), then the
			// page: the cached pool is patched with the changed trajectory.
			b.Run("after-verdict", func(b *testing.B) {
				rita, err := db.UserByName(ctx, "rita")
				if err != nil {
					b.Fatal(err)
				}
				var d []time.Duration
				for b.Loop() {
					claim, err := db.Next(ctx, rita.ID, grounding.QueueFilter{RunID: res.RunID}, time.Minute)
					if err != nil {
						b.Skipf("no queue item left: %v", err)
					}
					if _, err := db.Submit(ctx, rita.ID, claim.Item.ID, grounding.VerdictPass, "", time.Minute); err != nil {
						b.Fatal(err)
					}
					t0 := time.Now()
					if status, _ := get(page); status != 200 {
						b.Fatalf("GET %s = %d", page, status)
					}
					d = append(d, time.Since(t0))
				}
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
				b.ReportMetric(float64(d[len(d)*99/100])/1e6, "p99-ms")
			})
			pool, _, err := db.CoveragePool(ctx, []int64{res.RunID})
			if err != nil {
				b.Fatal(err)
			}
			budget := grounding.NewPool(pool).CertifiedParents() / 2
			sel := fmt.Sprintf("/coverage/selection?run=%d&scale=8B&budget=%d", res.RunID, budget)
			b.Run("selection-first", func(b *testing.B) {
				var d []time.Duration
				for b.Loop() {
					sw.fresh(b, db)
					get(page) // the pool is cached; the selection is not
					t0 := time.Now()
					if status, _ := get(sel); status != 200 {
						b.Fatalf("GET %s = %d", sel, status)
					}
					d = append(d, time.Since(t0))
				}
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
				b.ReportMetric(float64(d[len(d)-1])/1e6, "max-ms")
			})
			b.Run("selection-warm", func(b *testing.B) { latency(b, get, sel) })
		})
	}
}
