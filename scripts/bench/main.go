// Command bench measures groundwork against its floors. scripts/bench.sh
// drives it; each subcommand prints one line of results.
//
//	bench floor-json FILE                 decode FILE with encoding/json alone
//	bench floor-copy --db URL FILE        load FILE's rows into Postgres with COPY alone
//	bench load --url U [--user U] [--users N] --password P [--pid N] [--clients 16] [--requests 2000] PATH...
//	                                      p50/p99 latency of each PATH under concurrent clients
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lib/pq"

	"groundwork/grounding"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench floor-json|floor-copy|load ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "floor-json":
		err = floorJSON(os.Args[2:])
	case "floor-copy":
		err = floorCopy(os.Args[2:])
	case "load":
		err = load(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// floorJSON decodes every line of a canonical pool into grounding.Trajectory
// with encoding/json: the least any importer must do.
func floorJSON(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("floor-json FILE")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var bytes int64
	n := 0
	for sc.Scan() {
		bytes += int64(len(sc.Bytes())) + 1
		var t grounding.Trajectory
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return err
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("floor encoding/json: %d trajectories, %.1f MB in %.2f s: %.1f MB/s, %.0f trajectories/s\n", n, float64(bytes)/1e6, secs, float64(bytes)/1e6/secs, float64(n)/secs)
	return nil
}

// floorCopy loads the same rows groundwork stores (one per trajectory, one
// per message, one per decision) into scratch tables with COPY and nothing
// else: no validation, no checks, no indexes.
func floorCopy(args []string) error {
	fs := flag.NewFlagSet("floor-copy", flag.ExitOnError)
	dsn := fs.String("db", "", "Postgres URL")
	fs.Parse(args)
	if fs.NArg() != 1 || *dsn == "" {
		return fmt.Errorf("floor-copy --db URL FILE")
	}
	db, err := sql.Open("postgres", *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	for _, q := range []string{
		`DROP TABLE IF EXISTS floor_trajectories, floor_messages, floor_decisions`,
		`CREATE UNLOGGED TABLE floor_trajectories (id BIGINT, ext_id TEXT, parent_id TEXT, domain TEXT, reward DOUBLE PRECISION, tools JSON, hidden JSON)`,
		`CREATE UNLOGGED TABLE floor_messages (trajectory_id BIGINT, idx INT, role TEXT, content TEXT, tool_calls JSON, tool_call_id TEXT, hidden BOOLEAN)`,
		`CREATE UNLOGGED TABLE floor_decisions (trajectory_id BIGINT, ordinal INT, message_idx INT, call_idx INT, tool TEXT)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	defer db.ExecContext(ctx, `DROP TABLE IF EXISTS floor_trajectories, floor_messages, floor_decisions`)
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Decode once (the JSON floor), then copy each table in turn (one COPY
	// at a time per connection): this measures the database side at its
	// cheapest.
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var bytes int64
	var pool []grounding.Trajectory
	for sc.Scan() {
		bytes += int64(len(sc.Bytes())) + 1
		var t grounding.Trajectory
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			return err
		}
		pool = append(pool, t)
	}
	n := len(pool)
	copyRows := func(table string, cols []string, each func(exec func(...any) error) error) error {
		st, err := tx.Prepare(pq.CopyIn(table, cols...))
		if err != nil {
			return err
		}
		if err := each(func(v ...any) error { _, err := st.Exec(v...); return err }); err != nil {
			return err
		}
		if _, err := st.Exec(); err != nil {
			return err
		}
		return st.Close()
	}
	err = copyRows("floor_trajectories", []string{"id", "ext_id", "parent_id", "domain", "reward", "tools", "hidden"}, func(exec func(...any) error) error {
		for i, t := range pool {
			tools, _ := json.Marshal(t.Tools)
			hidden, _ := json.Marshal(t.Hidden)
			if err := exec(i, t.ID, t.ParentID, t.Domain, t.Reward, string(tools), string(hidden)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = copyRows("floor_messages", []string{"trajectory_id", "idx", "role", "content", "tool_calls", "tool_call_id", "hidden"}, func(exec func(...any) error) error {
		for i, t := range pool {
			for k, m := range t.Messages {
				var calls any
				if len(m.ToolCalls) > 0 {
					b, _ := json.Marshal(m.ToolCalls)
					calls = string(b)
				}
				if err := exec(i, k, m.Role, m.Content, calls, m.ToolCallID, m.IsHidden()); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = copyRows("floor_decisions", []string{"trajectory_id", "ordinal", "message_idx", "call_idx", "tool"}, func(exec func(...any) error) error {
		for i := range pool {
			for _, d := range grounding.Decisions(&pool[i]) {
				if err := exec(i, d.Ordinal, d.Message, d.Call, d.Tool); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("floor json+COPY (postgres): %d trajectories, %.1f MB in %.2f s: %.1f MB/s, %.0f trajectories/s\n", n, float64(bytes)/1e6, secs, float64(bytes)/1e6/secs, float64(n)/secs)
	return nil
}

// load logs in once per client and sends requests to each path, reporting
// p50/p99 per path and the server's peak RSS (VmHWM) when --pid is given.
func load(args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	base := fs.String("url", "http://127.0.0.1:8080", "groundwork base URL")
	user := fs.String("user", "admin", "account")
	password := fs.String("password", "", "password")
	clients := fs.Int("clients", 16, "concurrent clients")
	requests := fs.Int("requests", 2000, "requests per path")
	warm := fs.Int("warm", 10, "requests per client, all clients at once, before measuring each path")
	warmFor := fs.Duration("warm-for", 2*time.Second, "and keep warming up, all clients at once, until this much time has passed")
	pid := fs.Int("pid", 0, "server pid, to report its peak RSS")
	users := fs.Int("users", 0, "log client i in as USER1..USERn (i mod n, all with the same password) instead of all as USER")
	fs.Parse(args)
	paths := fs.Args()
	cs := make([]*http.Client, *clients)
	for i := range cs {
		jar, _ := cookiejar.New(nil)
		cs[i] = &http.Client{Jar: jar, Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		name := *user
		if *users > 0 {
			name = *user + strconv.Itoa(i%*users+1)
		}
		form := url.Values{"name": {name}, "password": {*password}}
		req, _ := http.NewRequest("POST", *base+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", *base)
		resp, err := cs[i].Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Request.URL.Path == "/login" {
			return fmt.Errorf("login as %s failed", name)
		}
	}
	for _, p := range paths {
		get := func(c *http.Client) (time.Duration, error) {
			start := time.Now()
			resp, err := c.Get(*base + p)
			if err != nil {
				return 0, err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return 0, fmt.Errorf("GET %s = %d", p, resp.StatusCode)
			}
			return time.Since(start), nil
		}
		// Warm up with every client at once, as measured: the server's
		// connection pool grows to what this concurrency needs, and each
		// pooled Postgres connection prepares the page's statements and
		// settles on their plans (Postgres plans a prepared statement
		// afresh for its first five runs on a connection before it keeps a
		// generic plan) before the clock starts: the goal is latency once
		// warm. Three requests per client left those first runs in the
		// measured ones, the review screen's p99 71.7 ms where ten give
		// 32.7-43.7 on the same build. And it lasts -warm-for (2 s) at
		// least: the pool can still grow in the measured run (the logins
		// open connections of their own), and a new Postgres backend's
		// first parse of each of the page's statements took 84-141 ms
		// (Postgres' log, log_min_duration_statement): in one
		// scripts/bench.sh run after 160 warm-up requests, three new
		// backends were parsing the review screen's statements 0.2 s into
		// the measured run, when its slowest request (89.5 ms) began; p99
		// 59.1 ms.
		warmUntil := time.Now().Add(*warmFor)
		var warmErr error
		var warmOnce sync.Once
		var wwg sync.WaitGroup
		for _, c := range cs {
			wwg.Add(1)
			go func(c *http.Client) {
				defer wwg.Done()
				for i := 0; i < *warm || time.Now().Before(warmUntil); i++ {
					if _, err := get(c); err != nil {
						warmOnce.Do(func() { warmErr = err })
						return
					}
				}
			}(c)
		}
		wwg.Wait()
		if warmErr != nil {
			return warmErr
		}
		var (
			mu   sync.Mutex
			lat  []time.Duration
			errs []error
			wg   sync.WaitGroup
			// slowAt is when the slowest request started, to be matched
			// against the Postgres log (checkpoints) and the server's.
			slowAt  time.Time
			slowest time.Duration
		)
		next := make(chan struct{}, *requests)
		for range *requests {
			next <- struct{}{}
		}
		close(next)
		cpu0, pg0 := cpuTicks(*pid), postgresTicks()
		start := time.Now()
		for _, c := range cs {
			wg.Add(1)
			go func(c *http.Client) {
				defer wg.Done()
				for range next {
					at := time.Now()
					d, err := get(c)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						lat = append(lat, d)
						if d > slowest {
							slowest, slowAt = d, at
						}
					}
					mu.Unlock()
				}
			}(c)
		}
		wg.Wait()
		if len(errs) > 0 {
			return fmt.Errorf("%d failed requests, first: %v", len(errs), errs[0])
		}
		secs := time.Since(start).Seconds()
		cpu := perRequest(cpuTicks(*pid)-cpu0, len(lat))
		pgCPU := perRequest(postgresTicks()-pg0, len(lat))
		slices.Sort(lat)
		pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		fmt.Printf("%-60s p50 %6.1f ms  p90 %6.1f ms  p99 %6.1f ms  max %6.1f ms  %6.0f req/s  CPU/req server %5.2f ms, postgres %5.2f ms  (%d requests, %d clients)%s  slowest began %s UTC, +%.1f s\n",
			p, pct(0.5), pct(0.9), pct(0.99), pct(1), float64(len(lat))/secs, cpu, pgCPU, len(lat), *clients, rss(*pid),
			slowAt.UTC().Format("15:04:05.000"), slowAt.Sub(start).Seconds())
	}
	return nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's CPU times (100 on
// every Linux this runs on).
const clockTicks = 100

// cpuTicks is the user+system CPU time of process pid so far, in clock
// ticks (0 without a pid).
func cpuTicks(pid int) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the parenthesized command name; utime and stime are
	// the 14th and 15th of the line.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// postgresTicks is the CPU time of every process named postgres on this
// machine (the server's backends), in clock ticks: 0 where none runs.
func postgresTicks() int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	var total int64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		total += cpuTicks(pid)
	}
	return total
}

// perRequest turns a CPU time in clock ticks into milliseconds per request.
func perRequest(ticks int64, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(ticks) * 1000 / clockTicks / float64(n)
}

func rss(pid int) string {
	if pid == 0 {
		return ""
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return "  server peak RSS " + strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return ""
}
