package web_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// benchStores opens an empty store per dialect: SQLite always, Postgres in a
// throw-away database when TEST_DATABASE_URL is set.
func benchStores(b *testing.B) map[string]func(b *testing.B) *store.DB {
	out := map[string]func(b *testing.B) *store.DB{
		"sqlite": func(b *testing.B) *store.DB {
			db, err := store.Open(context.Background(), "sqlite://"+filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return db
		},
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return out
	}
	out["postgres"] = func(b *testing.B) *store.DB {
		admin, err := sql.Open("postgres", base)
		if err != nil {
			b.Fatal(err)
		}
		defer admin.Close()
		name := fmt.Sprintf("gw_bench_%d", time.Now().UnixNano())
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse(base)
		u.Path = "/" + name
		db, err := store.Open(context.Background(), u.String())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			db.Close()
			if a, err := sql.Open("postgres", base); err == nil {
				a.Exec("DROP DATABASE " + name)
				a.Close()
			}
		})
		return db
	}
	return out
}

// benchServer serves db with a logged-in researcher and returns a GET func.
func benchServer(b *testing.B, db *store.DB) func(path string) (int, int) {
	ctx := context.Background()
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-rita"), bcrypt.MinCost)
	if _, err := db.CreateUser(ctx, "rita", grounding.RoleResearcher, hash); err != nil {
		b.Fatal(err)
	}
	h, err := web.NewHandler(web.Config{UploadDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, web.Importer{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
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
	return func(path string) (int, int) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, int(n)
	}
}

// latency runs get(path) b.N times and reports p50/p99 in milliseconds.
func latency(b *testing.B, get func(string) (int, int), path string) {
	for range 5 { // warm caches
		get(path)
	}
	var d []time.Duration
	size := 0
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		status, n := get(path)
		d = append(d, time.Since(start))
		if status != 200 {
			b.Fatalf("GET %s = %d", path, status)
		}
		size = n
	}
	slices.Sort(d)
	pct := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / 1e6 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(size)/1024, "page-KiB")
}

// BenchmarkTrajectoryPageRealTau measures the trajectory page of the largest
// trajectory of the real τ-bench airline log.
func BenchmarkTrajectoryPageRealTau(b *testing.B) {
	needRealTau(b)
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			res, err := web.Importer{DB: db}.ImportFile(ctx, "", realTauAirline, "gpt-4o-airline.json", grounding.FormatAuto)
			if err != nil {
				b.Fatal(err)
			}
			page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: res.RunID, Limit: 500})
			if err != nil {
				b.Fatal(err)
			}
			largest := page.Rows[0]
			for _, r := range page.Rows {
				if r.Messages > largest.Messages {
					largest = r
				}
			}
			get := benchServer(b, db)
			latency(b, get, fmt.Sprintf("/trajectories/%d", largest.ID))
		})
	}
}

// BenchmarkTrajectoryPageHuge measures the first page and a late decision
// page of one generated trajectory of 5,000 messages.
func BenchmarkTrajectoryPageHuge(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			t := genTrajectory(0, 2500)
			res, err := db.ImportTrajectories(ctx, "huge", grounding.ImportResult{File: "huge.jsonl", Format: "canonical", SHA256: "huge"},
				func(yield func(*grounding.Trajectory, error) bool) { yield(t, nil) })
			if err != nil {
				b.Fatal(err)
			}
			page, _ := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: res.RunID})
			get := benchServer(b, db)
			id := page.Rows[0].ID
			b.Run("first", func(b *testing.B) { latency(b, get, fmt.Sprintf("/trajectories/%d", id)) })
			b.Run("late-decisions", func(b *testing.B) { latency(b, get, fmt.Sprintf("/trajectories/%d/decisions?from=2400", id)) })
		})
	}
}

// BenchmarkRunPageDeep measures a run page deep in its keyset pagination, and
// a filtered one, on a generated pool of 50,000 trajectories.
func BenchmarkRunPageDeep(b *testing.B) {
	const n = 50_000
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			res, err := db.ImportTrajectories(ctx, "pool", grounding.ImportResult{File: "pool.jsonl", Format: "canonical", SHA256: "pool"}, genPool(n))
			if err != nil {
				b.Fatal(err)
			}
			get := benchServer(b, db)
			after := url.QueryEscape(fmt.Sprintf("gen-%06d", 40_000))
			b.Run("deep", func(b *testing.B) { latency(b, get, fmt.Sprintf("/runs/%d?after=%s", res.RunID, after)) })
			b.Run("filtered", func(b *testing.B) {
				latency(b, get, fmt.Sprintf("/runs/%d?success=no&domain=retail&tool=cancel_reservation&after=%s", res.RunID, after))
			})
			b.Run("search", func(b *testing.B) { latency(b, get, fmt.Sprintf("/runs/%d?q=4711", res.RunID)) })
			// verdict alone reads the trajectories' counters; with a tool,
			// both must hold of one decision.
			b.Run("verdict", func(b *testing.B) { latency(b, get, fmt.Sprintf("/runs/%d?verdict=pass&after=%s", res.RunID, after)) })
			b.Run("decision", func(b *testing.B) {
				latency(b, get, fmt.Sprintf("/runs/%d?tool=cancel_reservation&verdict=pass&after=%s", res.RunID, after))
			})
		})
	}
}

func genPool(n int) iter.Seq2[*grounding.Trajectory, error] {
	return func(yield func(*grounding.Trajectory, error) bool) {
		for i := range n {
			if !yield(genTrajectory(i, 2+i%5), nil) {
				return
			}
		}
	}
}

// genTrajectory builds a τ-bench-like trajectory with `turns` tool calls.
func genTrajectory(i, turns int) *grounding.Trajectory {
	domains := []string{"airline", "retail", "telecom"}
	tools := []string{"get_user_details", "get_reservation_details", "cancel_reservation", "search_direct_flight"}
	ok := i%3 != 0
	reward := 0.0
	if ok {
		reward = 1
	}
	t := &grounding.Trajectory{
		ID: fmt.Sprintf("gen-%06d", i), ParentID: fmt.Sprintf("task-%d", i/4), Domain: domains[i%3],
		Source: grounding.Source{Format: "canonical", File: "pool.jsonl", Index: i}, Reward: &reward, Success: &ok,
		Hidden: []grounding.HiddenEntry{{Kind: grounding.HiddenUserInstruction, Content: json.RawMessage(`"You are user_` + fmt.Sprint(i) + `; change your flight."`)}},
	}
	t.Messages = append(t.Messages,
		grounding.Message{Role: grounding.RoleSystem, Content: "# Airline Agent Policy\nThe current time is 2024-05-15 15:00:00 EST."},
		grounding.Message{Role: grounding.RoleUser, Content: fmt.Sprintf("Hi, I am user_%d and I want to change reservation R%05d.", i, i)})
	for k := range turns {
		id := fmt.Sprintf("c%d", k)
		t.Messages = append(t.Messages,
			grounding.Message{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: id, Name: tools[(i+k)%len(tools)], Arguments: json.RawMessage(fmt.Sprintf(`{"reservation_id":"R%05d"}`, i))}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: id, Name: tools[(i+k)%len(tools)], Content: fmt.Sprintf(`{"reservation_id":"R%05d","status":"active","flights":[{"flight_number":"HAT%03d","date":"2024-05-20"}]}`, i, k%1000)},
			grounding.Message{Role: grounding.RoleAssistant, Content: fmt.Sprintf("Reservation R%05d is active. Anything else?", i)},
			grounding.Message{Role: grounding.RoleUser, Content: "Yes, one more thing."})
	}
	return t
}

// BenchmarkRunPageRareDecision measures the run page's decision filters on
// 50,000 generated τ-bench-like trajectories (gen --kind tau --seed 11, as
// checked at import): a tool's failed or ambiguous decisions are few and
// late in the page order, and a filter nothing meets reads the whole run.
//
//	TEST_DATABASE_URL=… go test ./web -run '^$' -bench RunPageRareDecision -benchtime 100x
func BenchmarkRunPageRareDecision(b *testing.B) {
	const n = 50_000
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			pool := func(yield func(*grounding.Trajectory, error) bool) {
				for t := range grounding.Generate(grounding.GenOptions{Trajectories: n, Seed: 11, Kind: "tau"}) {
					if !yield(t, nil) {
						return
					}
				}
			}
			res, err := db.ImportTrajectories(ctx, "pool", grounding.ImportResult{File: "pool.jsonl", Format: "canonical", SHA256: "pool"}, pool)
			if err != nil {
				b.Fatal(err)
			}
			get := benchServer(b, db)
			for _, c := range []struct{ name, query string }{
				{"tool-fail", "tool=get_line_details&verdict=fail"}, // 2,156 matches
				{"tool-ambiguous", "tool=get_order_details&verdict=ambiguous"},
				{"tool-fail-none", "tool=get_user_details&verdict=fail"}, // no match
				{"tool-pass", "tool=cancel_reservation&verdict=pass"},    // common
				{"reason-fail", "reason=term.failed&verdict=fail"},       // common reason
				{"reason-tool-fail", "reason=vis.hidden_leak&verdict=fail&tool=get_reservation_details"},
				// A reason with a tool, or with verdict=pass (audit S1):
				// each alone is common, together rare or never.
				{"reason-tool", "reason=vis.normalized&tool=cancel_line"},                               // 2 matches, late
				{"reason-tool-none", "reason=vis.normalized&tool=get_user_details"},                     // no match; both common
				{"reason-tool-unknown", "reason=vis.normalized&verdict=pass&tool=bash"},                 // no such tool
				{"reason-tool-pass", "reason=vis.normalized&tool=get_reservation_details&verdict=pass"}, // 28 matches
				{"reason-tool-pass-none", "reason=vis.derived&verdict=pass&tool=update_reservation"},    // no match
				{"reason-tool-success", "reason=vis.normalized&tool=cancel_line&success=yes"},           // 1 match
				{"reason-pass-none", "reason=exec.error&verdict=pass"},                                  // no match
				{"reason-fail", "reason=vis.contradiction&verdict=fail"},                                // 358 matches
				{"reason-rare", "reason=vis.contradiction"},                                             // 358 matches
				{"reason-tool-dense", "reason=term.failed&tool=get_user_details"},                       // 13,594 matches, early
				{"reason-pass-dense", "reason=term.failed&verdict=pass"},                                // common
				{"reason-common", "reason=term.failed"},                                                 // common
				{"tool-late", "tool=cancel_line"},                                                       // telecom only: late in page order
				{"tool-pass-late", "tool=cancel_line&verdict=pass"},                                     // the same with pass
				{"reason-tool-deep", "reason=vis.normalized&tool=update_line&after=gen-retail-010000"},  // keyset page
			} {
				b.Run(c.name, func(b *testing.B) { latency(b, get, fmt.Sprintf("/runs/%d?%s", res.RunID, c.query)) })
			}
		})
	}
}
