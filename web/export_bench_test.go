package web_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// The export benchmarks run on a generated τ-bench-like pool
// (grounding.Generate, seed 1). EXPORT_BENCH_N sets its size (default
// 35,000); Postgres runs when TEST_DATABASE_URL is set.
//
//	TEST_DATABASE_URL=postgres://… go test ./web -run '^$' -bench 'Export' -benchtime 3x -timeout 60m

func exportBenchN() int {
	if n, err := strconv.Atoi(os.Getenv("EXPORT_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 35_000
}

// exportBenchDB is a fresh database of one dialect and its URL.
type exportBenchDB struct {
	db  *store.DB
	url string
}

func exportBenchStores(b *testing.B) map[string]func(b *testing.B) exportBenchDB {
	out := map[string]func(b *testing.B) exportBenchDB{
		"sqlite": func(b *testing.B) exportBenchDB {
			u := "sqlite://" + filepath.Join(b.TempDir(), "bench.db")
			db, err := store.Open(context.Background(), u)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			return exportBenchDB{db, u}
		},
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		return out
	}
	out["postgres"] = func(b *testing.B) exportBenchDB {
		admin, err := sql.Open("postgres", base)
		if err != nil {
			b.Fatal(err)
		}
		defer admin.Close()
		name := fmt.Sprintf("gw_export_%d", time.Now().UnixNano())
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
		return exportBenchDB{db, u.String()}
	}
	return out
}

// importPool imports n generated trajectories as run name.
func importPool(b *testing.B, db *store.DB, name string, n int) grounding.ImportResult {
	b.Helper()
	start := time.Now()
	res, err := db.ImportTrajectories(context.Background(), name,
		grounding.ImportResult{File: name + ".jsonl", Format: "canonical", SHA256: name},
		func(yield func(*grounding.Trajectory, error) bool) {
			for t := range grounding.Generate(grounding.GenOptions{Trajectories: n, Seed: 1, Kind: "tau"}) {
				if !yield(t, nil) {
					return
				}
			}
		})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("imported %d trajectories into %s in %v", n, name, time.Since(start).Round(time.Millisecond))
	return res
}

// analyze does what the database does by itself a little after a bulk
// import, so the benchmark measures the export and not that moment:
// Postgres' autovacuum refreshes statistics (without them the planner reads
// whole tables per batch) and the visibility map (index-only scans); SQLite
// checkpoints the WAL into the database file (until then readers look every
// page up in the WAL index).
func analyze(b *testing.B, u string) {
	if path, ok := strings.CutPrefix(u, "sqlite://"); ok {
		db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		return
	}
	db, err := sql.Open("postgres", u)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
}

// download GETs path with the token and reads the body to the end. It
// returns the time to the first body byte, the total time and the size.
func download(b *testing.B, c *http.Client, base, path, token string) (ttfb, total time.Duration, n int64) {
	b.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		b.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	br := bufio.NewReaderSize(resp.Body, 1<<20)
	if _, err := br.Peek(1); err != nil {
		b.Fatal(err)
	}
	ttfb = time.Since(start)
	n, err = io.Copy(io.Discard, br)
	if err != nil {
		b.Fatalf("GET %s: %v after %d bytes", path, err, n)
	}
	return ttfb, time.Since(start), n
}

// curlDownload fetches base+path with curl, a separate process like a real
// client, so this process's CPU is the server's alone. curl's own
// time_starttransfer is the time to the first byte.
func curlDownload(b *testing.B, base, path, token string) (ttfb, total time.Duration, n int64) {
	b.Helper()
	out, err := exec.Command("curl", "-sS", "-f", "-o", "/dev/null", "-H", "Authorization: Bearer "+token,
		"-w", "%{time_starttransfer} %{time_total} %{size_download}", base+path).Output()
	if err != nil {
		b.Fatalf("curl %s: %v", path, err)
	}
	var first, all float64
	if _, err := fmt.Sscan(string(out), &first, &all, &n); err != nil {
		b.Fatalf("curl output %q: %v", out, err)
	}
	return time.Duration(first * float64(time.Second)), time.Duration(all * float64(time.Second)), n
}

// BenchmarkExport exports the generated pool through the real router with
// an API token and reports MB/s and the time to the first byte per format;
// on Postgres it also measures, in the same run, the floor: COPY (SELECT …)
// TO STDOUT of the rows the include_empty SFT export reads (every candidate
// trajectory's header, decisions and visible messages), and the ratio of
// the export's time to the floor's.
func BenchmarkExport(b *testing.B) {
	n := exportBenchN()
	for name, open := range exportBenchStores(b) {
		b.Run(name, func(b *testing.B) {
			s := open(b)
			ctx := context.Background()
			res := importPool(b, s.db, "pool", n)
			analyze(b, s.url)
			u, err := s.db.CreateUser(ctx, "rita", grounding.RoleResearcher, []byte("x"))
			if err != nil {
				b.Fatal(err)
			}
			_, token, err := s.db.CreateAPIToken(ctx, u.ID, "bench")
			if err != nil {
				b.Fatal(err)
			}
			h, err := web.NewHandler(web.Config{UploadDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, s.db, web.Importer{DB: s.db})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			// No transparent gzip: measure the export, not the compressor.
			// The client is curl when installed, else Go's (whose CPU then
			// counts in go-cpu-s).
			c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
			get := func(path string) (time.Duration, time.Duration, int64) { return download(b, c, srv.URL, path, token) }
			if _, err := exec.LookPath("curl"); err == nil {
				get = func(path string) (time.Duration, time.Duration, int64) { return curlDownload(b, srv.URL, path, token) }
			}
			for _, tt := range []struct{ name, path string }{
				{"sft", "/api/export/pool/sft.jsonl"},
				{"sft-all", "/api/export/pool/sft.jsonl?include_empty=true&complete=false"},
				{"masks", "/api/export/pool/masks.jsonl"},
				{"csv", "/api/export/pool/decisions.csv"},
			} {
				b.Run(tt.name, func(b *testing.B) {
					var ttfb, total time.Duration
					var size int64
					cpu0, pg0 := processCPU(), postgresCPU(b, s.url)
					for b.Loop() {
						f, t, n := get(tt.path)
						ttfb, total, size = ttfb+f, total+t, n
					}
					runs := float64(b.N)
					// CPU spent, to judge throughput on a machine shared with
					// other work: this process (server and client) and the
					// Postgres backends of the test database.
					goCPU := (processCPU() - cpu0).Seconds() / runs
					pgCPU := (postgresCPU(b, s.url) - pg0).Seconds() / runs
					b.ReportMetric(goCPU, "go-cpu-s")
					if strings.HasPrefix(s.url, "postgres") {
						b.ReportMetric(pgCPU, "pg-cpu-s")
					}
					b.SetBytes(size)
					b.ReportMetric(float64(ttfb.Milliseconds())/runs, "ttfb-ms")
					b.ReportMetric(float64(size)/1e6/(total.Seconds()/runs), "MB/s-http")
					if tt.name == "sft-all" {
						floor, fsize, fcpu := copyFloor(b, s.url, res.RunID)
						b.ReportMetric(float64(fsize)/1e6/floor.Seconds(), "MB/s-floor")
						b.ReportMetric(floor.Seconds()*1000, "floor-ms")
						b.ReportMetric((total.Seconds()/runs)/floor.Seconds(), "x-floor")
						// The same comparison in CPU seconds (both sides of
						// each: client and database), which the load of a
						// shared machine moves much less than wall time.
						b.ReportMetric(fcpu.Seconds(), "floor-cpu-s")
						b.ReportMetric((goCPU+pgCPU)/fcpu.Seconds(), "x-floor-cpu")
					}
				})
			}
		})
	}
}

// processCPU is the user and system CPU time of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU sums the CPU time of every postgres process on this machine
// (the server runs here; the benchmark is the only client): an export
// loads over several connections, opened and reused by the pool, so
// counting the backends connected at one moment missed some.
func postgresCPU(b *testing.B, u string) time.Duration {
	if !strings.HasPrefix(u, "postgres") {
		return 0
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile("/proc/" + e.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != "postgres" {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		total += statCPU(stat)
	}
	return total
}

// floorQueries read the rows an SFT export of the whole run reads: every
// trajectory's header with its SFT rendering, marks and the SHA-256 of its
// tool list (kept at import; an export reads each distinct list once), and
// the columns of its decisions an SFT export reads. (Before renderings were kept, an export read and
// rendered every visible message instead, and the floor read those rows.)
func floorQueries(runID int64) []string {
	run := strconv.FormatInt(runID, 10)
	return []string{
		`SELECT t.id, t.ext_id, t.parent_id, t.domain, t.success, t.reward, t.workflow_ok, t.flow_reasons, t.engine_version, t.profile,
			s.messages, s.marks, s.tools_sha
			FROM trajectories t LEFT JOIN trajectory_sft s ON s.trajectory_id = t.id WHERE t.run_id = ` + run + ` ORDER BY t.id`,
		`SELECT trajectory_id, message_idx, mask, human_verdict
			FROM decisions WHERE run_id = ` + run + ` ORDER BY trajectory_id, ordinal`,
	}
}

// copyFloor measures the database's own bulk output of the rows an SFT
// export of the whole run reads: on Postgres, COPY (SELECT …) TO STDOUT
// through psql; on SQLite, which has no COPY, the same SELECTs read through
// database/sql into sql.RawBytes and dropped. It returns the time and bytes.
func copyFloor(b *testing.B, u string, runID int64) (wall time.Duration, n int64, cpu time.Duration) {
	b.Helper()
	if strings.HasPrefix(u, "sqlite://") {
		cpu0 := processCPU()
		wall, n = sqliteFloor(b, strings.TrimPrefix(u, "sqlite://"), runID)
		return wall, n, processCPU() - cpu0
	}
	if _, err := exec.LookPath("psql"); err != nil {
		b.Skip("psql not installed: no COPY floor")
	}
	// One psql session: it notes its backend's pid, copies, and saves the
	// backend's /proc stat before it ends, for the server side's CPU.
	dir := b.TempDir()
	stat := filepath.Join(dir, "backend.stat")
	script := "SELECT pg_backend_pid() AS pid \\gset\n\\setenv GW_PID :pid\n"
	for _, q := range floorQueries(runID) {
		script += "COPY (" + strings.Join(strings.Fields(q), " ") + ") TO STDOUT;\n"
	}
	script += "\\! cat /proc/$GW_PID/stat > " + stat + "\n"
	file := filepath.Join(dir, "floor.sql")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command("psql", u, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	n, _ = io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		b.Fatalf("psql COPY: %v", err)
	}
	wall = time.Since(start)
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if st, err := os.ReadFile(stat); err == nil {
		cpu += statCPU(st)
	} else {
		b.Logf("no backend CPU for the floor: %v", err)
	}
	return wall, n, cpu
}

// statCPU is the user and system time in a /proc/PID/stat line, its own
// and that of its children it has waited for. With the children's, the sum
// over postgres processes never goes down: a backend that exits between two
// readings leaves its time in the postmaster's, which reaps it (summing the
// processes' own times alone came out negative across such an exit).
func statCPU(stat []byte) time.Duration {
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} { // utime, stime, cutime, cstime
		v, _ := strconv.ParseInt(f[i], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * 10 * time.Millisecond // clock ticks of 1/100 s
}

func sqliteFloor(b *testing.B, path string, runID int64) (time.Duration, int64) {
	b.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	var n int64
	for _, q := range floorQueries(runID) {
		rows, err := db.Query(q)
		if err != nil {
			b.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				b.Fatal(err)
			}
			for _, v := range vals {
				n += int64(len(v)) + 1
			}
		}
		if err := rows.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), n
}

// BenchmarkExportRSS measures the peak resident memory of a child
// groundwork process exporting 1,000 and then EXPORT_BENCH_N trajectories
// of the generated pool: the CLI export under /usr/bin/time -f %M, and a
// server (groundwork serve) answering one SFT download, read from the
// child's /proc/PID/status VmHWM. Streaming keeps the difference small.
func BenchmarkExportRSS(b *testing.B) {
	n := exportBenchN()
	bin := filepath.Join(b.TempDir(), "groundwork")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for name, open := range exportBenchStores(b) {
		b.Run(name, func(b *testing.B) {
			s := open(b)
			importPool(b, s.db, "pool-small", 1000)
			importPool(b, s.db, "pool-large", n)
			analyze(b, s.url)
			hash := "$2a$04$abcdefghijklmnopqrstuu5Y0v2r4s9Qm2mZ4mX3c2x6W1rJb8i5a" // any bcrypt-shaped value
			u, err := s.db.CreateUser(context.Background(), "rita", grounding.RoleResearcher, []byte(hash))
			if err != nil {
				b.Fatal(err)
			}
			_, token, err := s.db.CreateAPIToken(context.Background(), u.ID, "bench")
			if err != nil {
				b.Fatal(err)
			}
			s.db.Close() // the children open it
			for b.Loop() {
				for _, run := range []string{"pool-small", "pool-large"} {
					kb := cliPeakKB(b, bin, s.url, run)
					b.ReportMetric(float64(kb)/1024, "cli-MB-"+run)
					kb = serverPeakKB(b, bin, s.url, run, token)
					b.ReportMetric(float64(kb)/1024, "serve-MB-"+run)
				}
			}
		})
	}
}

// cliPeakKB runs `groundwork export` under /usr/bin/time -f %M.
func cliPeakKB(b *testing.B, bin, dbURL, run string) int {
	b.Helper()
	cmd := exec.Command("/usr/bin/time", "-f", "peak-kb %M", bin, "export", "--db", dbURL, "--run", run, "--format", "sft", "--include-empty", "--complete=false")
	cmd.Stdout = io.Discard
	errb := &strings.Builder{}
	cmd.Stderr = errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("export %s: %v\n%s", run, err, errb)
	}
	m := regexp.MustCompile(`peak-kb (\d+)`).FindStringSubmatch(errb.String())
	if m == nil {
		b.Fatalf("no peak RSS in %q", errb)
	}
	kb, _ := strconv.Atoi(m[1])
	b.Logf("cli %s: %s", run, strings.TrimSpace(strings.Split(errb.String(), "\n")[0]))
	return kb
}

// serverPeakKB starts `groundwork serve`, downloads one SFT export through
// it and returns the server's VmHWM.
func serverPeakKB(b *testing.B, bin, dbURL, run, token string) int {
	b.Helper()
	cmd := exec.Command(bin, "serve", "--db", dbURL, "--addr", "127.0.0.1:0", "--no-demo", "--data", b.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill() // our own child, by its pid
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	addr := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`serving on (http://\S+)`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
			break
		}
	}
	go io.Copy(io.Discard, out)
	if addr == "" {
		b.Fatal("serve printed no address")
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	_, total, size := download(b, c, addr, "/api/export/"+run+"/sft.jsonl?include_empty=true&complete=false", token)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		b.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindStringSubmatch(string(status))
	if m == nil {
		b.Fatalf("no VmHWM in /proc/%d/status", cmd.Process.Pid)
	}
	kb, _ := strconv.Atoi(m[1])
	b.Logf("serve %s: %.1f MB in %v, VmHWM %d kB", run, float64(size)/1e6, total.Round(time.Millisecond), kb)
	return kb
}
