package web

import "runtime/debug"

// batchGCPercent is the collector's GOGC for the batch commands (import,
// recheck, check) unless $GOGC says otherwise. These commands keep little
// alive (one batch of trajectories on its way to the database) and
// allocate fast, so at Go's default of 100 the collector ran for a fifth
// of an import's CPU, marking the same small live heap again every few
// megabytes. At 400 it runs a quarter as often: measured on the 35,000-
// trajectory pool into Postgres, user CPU 15.5/17.8 -> 12.1/14.0 s, wall
// 17.9/20.4 -> 15.9/18.9 s, peak RSS 116 -> 244 MB (BENCHMARKS.md).
// The server keeps Go's default: there the collector's cycles fall inside
// requests, and larger ones were worse for the slowest of them (review
// screen under 16 clients on Postgres, three pairs: p99 29.4/30.8/34.9 ms
// at 100, 40.6/40.0/39.5 ms at 400, for no less CPU).
const batchGCPercent = 400

// batchGC sets the batch commands' GOGC when the environment sets none
// and returns the function that restores the previous setting (Run may be
// called more than once in a process: tests, a future REPL).
func batchGC(getenv Env) (restore func()) {
	if getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(batchGCPercent)
	return func() { debug.SetGCPercent(old) }
}
