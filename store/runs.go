package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"groundwork/grounding"
)

type runRow struct {
	ID           int64  `db:"id"`
	Name         string `db:"name"`
	CreatedAt    dbTime `db:"created_at"`
	Trajectories int    `db:"trajectories"`
	Successes    int    `db:"successes"`
	Decisions    int    `db:"decisions"`
	ToolCalls    int    `db:"tool_calls"`
	Messages     int    `db:"messages"`
	Imports      int    `db:"imports"`
	Pass         int    `db:"n_pass"`
	Fail         int    `db:"n_fail"`
	Ambiguous    int    `db:"n_ambiguous"`
	Queued       int    `db:"n_queued"`
	Supervised   int    `db:"n_supervised"`
	Certified    int    `db:"n_certified"`
}

func (r runRow) run() grounding.Run {
	return grounding.Run{
		ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt.Time,
		Trajectories: r.Trajectories, Successes: r.Successes, Decisions: r.Decisions,
		ToolCalls: r.ToolCalls, Messages: r.Messages, Imports: r.Imports,
		Pass: r.Pass, Fail: r.Fail, Ambiguous: r.Ambiguous, Queued: r.Queued,
		Supervised: r.Supervised, Certified: r.Certified,
	}
}

// runColumns reads the check counters with the differences human verdicts
// left in run_count_deltas, not folded in yet (see migration 00009).
const runColumns = `id, name, created_at, trajectories, successes, decisions, tool_calls, messages, imports,
	n_pass + (SELECT COALESCE(SUM(x.n_pass), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_pass,
	n_fail + (SELECT COALESCE(SUM(x.n_fail), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_fail,
	n_ambiguous + (SELECT COALESCE(SUM(x.n_ambiguous), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_ambiguous,
	n_queued + (SELECT COALESCE(SUM(x.n_queued), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_queued,
	n_supervised + (SELECT COALESCE(SUM(x.n_supervised), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_supervised,
	n_certified + (SELECT COALESCE(SUM(x.n_certified), 0) FROM run_count_deltas x WHERE x.run_id = runs.id) AS n_certified`

// Runs lists every run, newest first. The counters come from the runs
// table, maintained at import: listing never counts over the pool.
func (db *DB) Runs(ctx context.Context) ([]grounding.Run, error) {
	var rows []runRow
	if err := db.sel(ctx, &rows, `SELECT `+runColumns+` FROM runs ORDER BY created_at DESC, id DESC`); err != nil {
		return nil, storeErr("list runs", err)
	}
	runs := make([]grounding.Run, len(rows))
	for i, r := range rows {
		runs[i] = r.run()
	}
	return runs, nil
}

// Run returns the run with this id, or grounding.ErrNotFound.
func (db *DB) Run(ctx context.Context, id int64) (grounding.Run, error) {
	var r runRow
	if err := db.get(ctx, &r, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id); err != nil {
		return grounding.Run{}, storeErr(fmt.Sprintf("run %d", id), err)
	}
	return r.run(), nil
}

// RunByName returns the run called name, or grounding.ErrNotFound.
func (db *DB) RunByName(ctx context.Context, name string) (grounding.Run, error) {
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		// No run has such a name (import refuses it), and Postgres would
		// refuse the text itself with an error.
		return grounding.Run{}, fmt.Errorf("store: run %q: %w", name, grounding.ErrNotFound)
	}
	var r runRow
	if err := db.get(ctx, &r, `SELECT `+runColumns+` FROM runs WHERE name = ?`, name); err != nil {
		return grounding.Run{}, storeErr(fmt.Sprintf("run %q", name), err)
	}
	return r.run(), nil
}

// RunFacets returns the distinct non-empty domains and tools of a run's
// trajectories and decisions, each sorted (byte order), for filter menus.
// An unknown run has none; run 0 stands for every run (each value once).
func (db *DB) RunFacets(ctx context.Context, runID int64) (domains, tools []string, err error) {
	op := fmt.Sprintf("facets of run %d", runID)
	// run_facets is kept by ImportTrajectories, so this reads a few rows
	// instead of scanning the run's decisions.
	var rows []struct {
		Kind  string `db:"kind"`
		Value string `db:"value"`
	}
	if runID == 0 {
		// Every run's facets at once: the filter forms offer them when no
		// run is chosen, and one statement beats one per run.
		err = db.sel(ctx, &rows, `SELECT DISTINCT kind, value FROM run_facets`)
	} else {
		err = db.sel(ctx, &rows, `SELECT kind, value FROM run_facets WHERE run_id = ?`, runID)
	}
	if err != nil {
		return nil, nil, storeErr(op, err)
	}
	for _, r := range rows {
		if r.Kind == "domain" {
			domains = append(domains, r.Value)
		} else {
			tools = append(tools, r.Value)
		}
	}
	// Sorted here rather than in SQL so the order is Go's byte order in
	// both dialects, whatever the database collation.
	slices.Sort(domains)
	slices.Sort(tools)
	return domains, tools, nil
}
