package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"groundwork/grounding"
)

// An export reads one snapshot: the summary (what the header announces) and
// every trajectory come from one read-only transaction, REPEATABLE READ on
// Postgres and a single read transaction on SQLite (WAL keeps its snapshot
// until it ends), so verdicts landing during a download never tear it.
//
// Order: parent by parent, parents in the order of their first trajectory
// (by id, that is import order) and each parent's trajectories by id. Weights
// need a whole parent at hand, and this order keeps the rows an export reads
// close to the order they were written in, so batches read neighboring pages
// instead of jumping across the tables as a sort by parent name would.
//
// Two passes inside the snapshot: a count of P, the parents with a
// supervised message (the weights need it before the first trajectory),
// by index probes per candidate; then a database cursor lists the candidate
// trajectories and a loader goroutine reads their rows in batches of
// exportBatch: the decisions first, then, for those that belong in the
// export (grounding.ExportTrajectory.Exported), their headers with the SFT
// rendering and marks the import kept (visible messages only for
// trajectories imported before renderings were kept). Go
// applies the limit, counts what it writes for the trailer and checks P.
// ExportSummary, for the download page, aggregates every decision instead.
// Memory holds one batch and one parent group, whatever the export's size.

// exportBatch is how many trajectories one round of queries loads.
const exportBatch = 512

// exportDialect is what differs between the databases for an export.
type exportDialect struct {
	// tx begins the snapshot.
	tx sql.TxOptions
	// setup runs first in the export transaction.
	setup []string
	// cursor streams the rows of q inside tx.
	cursor func(ctx context.Context, tx *sqlx.Tx, q string, args []any) (exportCursor, error)
}

var exportDialects = map[string]exportDialect{
	"sqlite": {
		tx: sql.TxOptions{ReadOnly: true},
		// SQLite steps several statements of one connection at once, so the
		// cursor is an open result set read between the batch queries.
		cursor: func(ctx context.Context, tx *sqlx.Tx, q string, args []any) (exportCursor, error) {
			rows, err := tx.QueryContext(ctx, q, args...)
			if err != nil {
				return nil, err
			}
			return &rowsCursor{rows: rows}, nil
		},
	},
	"postgres": {
		tx: sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
		// The summary hashes a few hundred thousand (trajectory, message)
		// groups: with the default 4 MB it spills to disk in batches.
		setup: []string{`SET LOCAL work_mem = '64MB'`, `SET LOCAL plan_cache_mode = force_generic_plan`},
		// lib/pq cannot run a query while another one's rows are open, so the
		// cursor is a server-side one, fetched a batch at a time.
		cursor: func(ctx context.Context, tx *sqlx.Tx, q string, args []any) (exportCursor, error) {
			if _, err := tx.ExecContext(ctx, `DECLARE groundwork_export NO SCROLL CURSOR FOR `+q, args...); err != nil {
				return nil, err
			}
			return &pgCursor{tx: tx}, nil
		},
	},
}

// exportRow is one candidate trajectory, as the cursor lists it.
type exportRow struct {
	id     int64
	parent string
}

func scanExportRow(rows *sql.Rows) (exportRow, error) {
	var r exportRow
	err := rows.Scan(&r.id, &r.parent)
	return r, err
}

// exportCursor yields the export set in order.
type exportCursor interface {
	// next returns up to n more rows; fewer than n means the end.
	next(ctx context.Context, dst []exportRow, n int) ([]exportRow, error)
	close() error
}

type rowsCursor struct{ rows *sql.Rows }

func (c *rowsCursor) next(_ context.Context, dst []exportRow, n int) ([]exportRow, error) {
	for len(dst) < n && c.rows.Next() {
		r, err := scanExportRow(c.rows)
		if err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, c.rows.Err()
}

func (c *rowsCursor) close() error { return c.rows.Close() }

type pgCursor struct{ tx *sqlx.Tx }

func (c *pgCursor) next(ctx context.Context, dst []exportRow, n int) ([]exportRow, error) {
	rows, err := c.tx.QueryContext(ctx, fmt.Sprintf(`FETCH FORWARD %d FROM groundwork_export`, n))
	if err != nil {
		return dst, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanExportRow(rows)
		if err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, rows.Err()
}

func (c *pgCursor) close() error { return nil } // closed with the transaction

// exportBase is the candidate trajectories of f (run, domain, view,
// complete) as a subquery b with the export order's key: b.first is the
// smallest id of the trajectory's parent among the candidates.
func exportBase(f grounding.ExportFilter) (string, []any) {
	q := `SELECT t.id, t.parent_id, t.engine_version, t.profile, MIN(t.id) OVER (PARTITION BY t.parent_id) AS first
		FROM trajectories t WHERE t.run_id = ?`
	args := []any{f.RunID}
	if f.Domain != "" {
		q += ` AND t.domain = ?`
		args = append(args, f.Domain)
	}
	if f.ViewID != 0 {
		// A saved coverage view: its members are the certified trajectories
		// of the parents it selected, kept per run.
		q += ` AND t.id IN (SELECT vm.trajectory_id FROM coverage_view_members vm WHERE vm.view_id = ? AND vm.run_id = ?)`
		args = append(args, f.ViewID, f.RunID)
	}
	if f.Complete {
		q += ` AND NOT EXISTS (SELECT 1 FROM queue_items qi WHERE qi.trajectory_id = t.id AND qi.state IN ('open', 'conflict'))`
	}
	return q, args
}

// exportCursorQuery lists the candidates in export order.
func (db *DB) exportCursorQuery(f grounding.ExportFilter) (string, []any) {
	base, args := exportBase(f)
	return db.x.Rebind(`SELECT b.id, b.parent_id FROM (` + base + `) b ORDER BY b.first, b.id`), args
}

// exportSummaryQuery lists the trajectories f exports, in export order, up
// to the limit, each with its counts of selected decisions and of selected
// decisions in assistant messages of weight 1 (every decision of the
// message selected with mask 1): grounding.ExportTrajectory.Prepare and
// Exported state the same rules in Go.
func (db *DB) exportSummaryQuery(f grounding.ExportFilter) (string, []any) {
	sel := `1`
	switch f.Source {
	case grounding.VerdictSourceAuto:
		sel = `CASE WHEN d.human_verdict = '' THEN 1 ELSE 0 END`
	case grounding.VerdictSourceHuman:
		sel = `CASE WHEN d.human_verdict <> '' THEN 1 ELSE 0 END`
	}
	base, bargs := exportBase(f)
	// Joined from the candidates, the decisions are read through
	// decisions_export_idx (trajectory_id, message_idx, mask, human_verdict)
	// alone.
	q := `WITH b AS (` + base + `), m AS (
		SELECT d.trajectory_id AS tid, COUNT(*) AS n, SUM(` + sel + `) AS nsel,
		       MIN(CASE WHEN ` + sel + ` = 1 AND d.mask = 1 THEN 1 ELSE 0 END) AS w
		FROM b JOIN decisions d ON d.trajectory_id = b.id
		GROUP BY d.trajectory_id, d.message_idx
	), p AS (
		SELECT tid, SUM(nsel) AS nsel, SUM(CASE WHEN w = 1 THEN n ELSE 0 END) AS nsup
		FROM m GROUP BY tid
	)
	SELECT b.id, b.parent_id, b.engine_version, b.profile, COALESCE(p.nsel, 0), COALESCE(p.nsup, 0)
	FROM b LEFT JOIN p ON p.tid = b.id`
	args := bargs
	switch {
	case f.IncludeEmpty:
	case f.Format == grounding.ExportSFT:
		q += ` WHERE COALESCE(p.nsup, 0) > 0`
	default:
		q += ` WHERE COALESCE(p.nsel, 0) > 0`
	}
	q += ` ORDER BY b.first, b.id`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	return db.x.Rebind(q), args
}

// exportParentsQuery counts P, the parents of the export with a supervised
// message, without aggregating every decision: per candidate, an index
// probe finds a selected decision with mask 1 whose message has no other
// decision that is unselected or masked (decisions_export_idx answers both).
// It is what Export needs before its first trajectory; the counts come from
// the stream.
func (db *DB) exportParentsQuery(f grounding.ExportFilter) (string, []any) {
	sel, unsel := `TRUE`, `FALSE`
	switch f.Source {
	case grounding.VerdictSourceAuto:
		sel, unsel = `%[1]s.human_verdict = ''`, `%[1]s.human_verdict <> ''`
	case grounding.VerdictSourceHuman:
		sel, unsel = `%[1]s.human_verdict <> ''`, `%[1]s.human_verdict = ''`
	}
	at := func(format, alias string) string {
		if strings.Contains(format, "%[1]s") {
			return fmt.Sprintf(format, alias)
		}
		return format
	}
	supervised := `EXISTS (SELECT 1 FROM decisions d WHERE d.trajectory_id = b.id AND d.mask = 1 AND ` + at(sel, "d") + `
		AND NOT EXISTS (SELECT 1 FROM decisions d2 WHERE d2.trajectory_id = d.trajectory_id AND d2.message_idx = d.message_idx
			AND (d2.mask <> 1 OR ` + at(unsel, "d2") + `)))`
	base, args := exportBase(f)
	exported := `TRUE`
	switch {
	case f.IncludeEmpty:
	case f.Format == grounding.ExportSFT:
		exported = supervised
	default:
		exported = `EXISTS (SELECT 1 FROM decisions d WHERE d.trajectory_id = b.id AND ` + at(sel, "d") + `)`
	}
	q := `WITH b AS (` + base + `) SELECT COUNT(DISTINCT b.parent_id) FROM b WHERE ` + supervised
	if f.Limit > 0 {
		// Only the first f.Limit exported trajectories count.
		q = `WITH b AS (` + base + `), e AS (SELECT b.id, b.parent_id FROM b WHERE ` + exported + `
			ORDER BY b.first, b.id LIMIT ?)
			SELECT COUNT(DISTINCT b.parent_id) FROM e b WHERE ` + supervised
		args = append(args, f.Limit)
	}
	return db.x.Rebind(q), args
}

// checkExportFilter refuses what no database could answer.
func checkExportFilter(f *grounding.ExportFilter) error {
	if _, err := grounding.ParseExportFormat(string(f.Format)); err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	if f.Source == "" {
		f.Source = grounding.VerdictSourceAny
	}
	if _, err := grounding.ParseVerdictSource(string(f.Source)); err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	if f.Limit < 0 {
		return fmt.Errorf("store: export: negative limit %d: %w", f.Limit, grounding.ErrInvalid)
	}
	return nil
}

// ExportSummary counts what an export with filter f would contain right now:
// the figures its trailer would state. An unknown run or view contains
// nothing; a bad filter is grounding.ErrInvalid.
func (db *DB) ExportSummary(ctx context.Context, f grounding.ExportFilter) (grounding.ExportSummary, error) {
	if err := checkExportFilter(&f); err != nil {
		return grounding.ExportSummary{}, err
	}
	tx, err := db.x.BeginTxx(ctx, ptr(exportDialects[db.d.name].tx))
	if err != nil {
		return grounding.ExportSummary{}, storeErr("export summary", err)
	}
	defer tx.Rollback()
	at, err := db.exportSnapshot(ctx, tx, f)
	if err != nil {
		return grounding.ExportSummary{}, err
	}
	s, err := db.exportSummary(ctx, tx, f)
	s.Snapshot = at
	return s, err
}

func ptr[T any](v T) *T { return &v }

func (db *DB) exportSummary(ctx context.Context, tx *sqlx.Tx, f grounding.ExportFilter) (grounding.ExportSummary, error) {
	op := fmt.Sprintf("export summary of run %d", f.RunID)
	var s grounding.ExportSummary
	q, args := db.exportSummaryQuery(f)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return s, storeErr(op, err)
	}
	defer rows.Close()
	engines, profiles := map[string]bool{}, map[string]bool{}
	parent, counted := "", false
	for rows.Next() {
		var r struct {
			id                   int64
			parent               string
			engine, profile      string
			selected, supervised int
		}
		if err := rows.Scan(&r.id, &r.parent, &r.engine, &r.profile, &r.selected, &r.supervised); err != nil {
			return s, storeErr(op, err)
		}
		s.Trajectories++
		s.Decisions += r.selected
		s.Supervised += r.supervised
		// Rows come parent by parent: a parent counts once, when its first
		// trajectory with a supervised message shows up.
		if r.parent != parent || s.Trajectories == 1 {
			parent, counted = r.parent, false
		}
		if r.supervised > 0 && !counted {
			s.Parents++
			counted = true
		}
		if !engines[r.engine] {
			engines[r.engine] = true
			s.EngineVersions = append(s.EngineVersions, r.engine)
		}
		if !profiles[r.profile] {
			profiles[r.profile] = true
			s.Profiles = append(s.Profiles, r.profile)
		}
	}
	if err := rows.Err(); err != nil {
		return s, storeErr(op, err)
	}
	slices.Sort(s.EngineVersions)
	slices.Sort(s.Profiles)
	return s, nil
}

// Export streams the export f describes from one snapshot. It calls begin
// once the snapshot is taken, with its time, before reading anything heavy
// (so the first line leaves at once); then each for every trajectory in
// export order, parent by parent, with its decisions prepared
// (grounding.ExportTrajectory.Prepare) and its parent-normalized weight
// set. The trajectory passed to each is valid only during the call. It
// returns the summary of what it passed on (the same figures ExportSummary
// gives for the snapshot); P, counted in SQL before the first trajectory for
// the weights, is checked against the parents that got weight, and a
// difference is an error. An error from begin or each stops the export and
// comes back as is.
//
// Hidden context never enters an export: hidden messages are not read, nor
// the trajectories' hidden entries, requests or meta.
//
// A bad filter is grounding.ErrInvalid, before begin is called. The caller
// resolves the run and the view (f.ViewID); an unknown one exports nothing.
func (db *DB) Export(ctx context.Context, f grounding.ExportFilter, begin func(snapshot time.Time) error, each func(*grounding.ExportTrajectory) error) (grounding.ExportSummary, error) {
	var sum grounding.ExportSummary
	if err := checkExportFilter(&f); err != nil {
		return sum, err
	}
	op := fmt.Sprintf("export run %d", f.RunID)
	ed := exportDialects[db.d.name]
	tx, err := db.x.BeginTxx(ctx, &ed.tx)
	if err != nil {
		return sum, storeErr(op, err)
	}
	defer tx.Rollback()
	at, err := db.exportSnapshot(ctx, tx, f)
	if err != nil {
		return sum, err
	}
	if err := begin(at); err != nil {
		return sum, err
	}
	sum.Snapshot = at
	q, args := db.exportParentsQuery(f)
	if err := tx.GetContext(ctx, &sum.Parents, q, args...); err != nil {
		return sum, storeErr(op+": count parents", err)
	}
	q, args = db.exportCursorQuery(f)
	cur, err := ed.cursor(ctx, tx, q, args)
	if err != nil {
		return sum, storeErr(op+": open cursor", err)
	}
	defer cur.close()

	// Loader goroutines read the batches while this one weighs and hands
	// on the ones before: the database's time and the rendering overlap.
	// A few batches wait at most.
	lctx, cancel := context.WithCancel(ctx)
	batches := make(chan exportLoaded, 2)
	loaders, err := db.exportLoaders(lctx, tx, f)
	if err != nil {
		cancel()
		return sum, err
	}
	if len(loaders) == 1 {
		// The loader alone uses tx, the cursor's too.
		go loaders[0].run(lctx, cur, batches)
	} else {
		loads := make([]loadFunc, len(loaders))
		for i, l := range loaders {
			loads[i] = func(ctx context.Context, batch []exportRow) ([]*grounding.ExportTrajectory, error) {
				return l.load(ctx, batch, nil)
			}
		}
		go runLoaders(lctx, op, cur, loads, batches)
	}
	stop := func() {
		cancel()
		for range batches { // wait until the loaders are done with their transactions
		}
	}
	g := exportGroups{parents: sum.Parents, each: each, engines: map[string]bool{}, profiles: map[string]bool{}}
	for b := range batches {
		if b.err != nil {
			stop()
			return sum, b.err
		}
		for _, t := range b.ts {
			if err := g.add(t); err != nil {
				stop()
				return sum, err
			}
		}
	}
	cancel()
	if err := ctx.Err(); err != nil {
		// The client went away: the loaders stopped early, so the check
		// below would report a difference that is not there.
		return sum, err
	}
	if err := g.flush(); err != nil {
		return sum, err
	}
	// The parents counted in SQL and those that got weight in Go come from
	// one snapshot and the same rule; if they ever differed, the weights
	// would not sum to 1 and the export must not end as if it were whole.
	if g.parentsWithTokens != sum.Parents {
		return sum, fmt.Errorf("store: %s: %d parents had target tokens; %d were counted for the weights",
			op, g.parentsWithTokens, sum.Parents)
	}
	sum.Trajectories, sum.Decisions, sum.Supervised = g.n[0], g.n[1], g.n[2]
	sum.EngineVersions, sum.Profiles = g.sorted(g.engines), g.sorted(g.profiles)
	if err := cur.close(); err != nil {
		return sum, storeErr(op+": close cursor", err)
	}
	return sum, storeErr(op+": end", tx.Commit())
}

// exportSnapshot starts the transaction's snapshot (Postgres takes it at
// the first statement, SQLite at the first read) with a read of the run, and
// sets what the dialect wants for a long read.
func (db *DB) exportSnapshot(ctx context.Context, tx *sqlx.Tx, f grounding.ExportFilter) (time.Time, error) {
	op := fmt.Sprintf("export run %d", f.RunID)
	for _, q := range exportDialects[db.d.name].setup {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return time.Time{}, storeErr(op, err)
		}
	}
	var n int
	if err := tx.GetContext(ctx, &n, tx.Rebind(`SELECT COUNT(*) FROM runs WHERE id = ?`), f.RunID); err != nil {
		return time.Time{}, storeErr(op, err)
	}
	return now(), nil
}

// exportLoaders returns the loaders of an export inside tx. On Postgres,
// without a limit, there are exportWorkers of them, each in a transaction
// of its own on its own connection that imports tx's snapshot
// (pg_export_snapshot), so every batch is read from the same snapshot while
// several backends and decoding goroutines share the work: one loader
// waited on its backend, then decoded, then waited again, and the export
// ran at the speed of that one connection. The cursor stays on tx. SQLite
// cannot share a read snapshot between connections, and a limit counts
// trajectories in order: one loader on tx then.
func (db *DB) exportLoaders(ctx context.Context, tx *sqlx.Tx, f grounding.ExportFilter) ([]*exportLoader, error) {
	if db.d.name != "postgres" || f.Limit > 0 {
		return []*exportLoader{{db: db, tx: tx, f: f, reasons: map[string]string{}, tools: map[string][]byte{}}}, nil
	}
	op := fmt.Sprintf("export run %d", f.RunID)
	var snapshot string
	if err := tx.GetContext(ctx, &snapshot, `SELECT pg_export_snapshot()`); err != nil {
		return nil, storeErr(op+": export snapshot", err)
	}
	ed := exportDialects[db.d.name]
	out := make([]*exportLoader, 0, exportWorkers)
	for range exportWorkers {
		wtx, err := db.x.BeginTxx(ctx, &ed.tx)
		if err != nil {
			return nil, storeErr(op, err)
		}
		// Ended when ctx is: the export cancels it once it is done.
		go func() { <-ctx.Done(); wtx.Rollback() }()
		// The first statement of the transaction; a snapshot id cannot be
		// a bound parameter.
		if _, err := wtx.ExecContext(ctx, `SET TRANSACTION SNAPSHOT `+pq.QuoteLiteral(snapshot)); err != nil {
			return nil, storeErr(op+": import snapshot", err)
		}
		for _, q := range ed.setup {
			if _, err := wtx.ExecContext(ctx, q); err != nil {
				return nil, storeErr(op, err)
			}
		}
		out = append(out, &exportLoader{db: db, tx: wtx, f: f, reasons: map[string]string{}, tools: map[string][]byte{}})
	}
	return out, nil
}

// exportWorkers is how many loaders share a Postgres export. Three ran
// a little faster once exports read the import's renderings (sft-all
// 94.7/91.5 against 85.9/87.8 MB/s, alternating, inside this machine's
// noise) but held a third batch in flight: the server's peak RSS for
// 35,000 trajectories against 1,000 grew by 20-41 MB instead of 14-18.
const exportWorkers = 2

// loadFunc loads a batch of the cursor's rows: one loader's load.
type loadFunc func(ctx context.Context, batch []exportRow) ([]*grounding.ExportTrajectory, error)

// runLoaders reads the cursor's batches and has loaders load them
// concurrently, each batch by whichever loader is free, and sends them to
// out in cursor order. An error is sent as the last item. It closes out
// only once every goroutine it started is done with its transaction.
func runLoaders(ctx context.Context, op string, cur exportCursor, loaders []loadFunc, out chan<- exportLoaded) {
	ctx, cancel := context.WithCancel(ctx)
	var all sync.WaitGroup
	defer func() {
		cancel()
		all.Wait()
		close(out)
	}()
	type job struct {
		n     int
		batch []exportRow
	}
	type done struct {
		n int
		exportLoaded
	}
	jobs := make(chan job)
	results := make(chan done, len(loaders))
	// A token per batch handed to a loader and not yet sent on: a batch
	// that loads slowly holds back those after it, which wait here in
	// order, and without the tokens the other loaders would go on loading
	// batch after batch behind it. With them, memory holds at most this
	// many loaded batches besides those out buffers, whatever the export's
	// size.
	inflight := make(chan struct{}, len(loaders)+1)
	var workers sync.WaitGroup
	for _, l := range loaders {
		workers.Add(1)
		all.Add(1)
		go func() {
			defer all.Done()
			defer workers.Done()
			for j := range jobs {
				ts, err := l(ctx, j.batch)
				select {
				case results <- done{j.n, exportLoaded{ts: ts, err: err}}:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	all.Add(2)
	go func() { defer all.Done(); workers.Wait(); close(results) }()
	// The cursor (on the export's own transaction), read ahead of the
	// loaders by a batch.
	fetched := make(chan error, 1)
	go func() {
		defer all.Done()
		defer close(jobs)
		for n := 0; ; n++ {
			batch, err := cur.next(ctx, make([]exportRow, 0, exportBatch), exportBatch)
			if err != nil {
				fetched <- storeErr(op+": fetch", err)
				return
			}
			if len(batch) > 0 {
				select {
				case inflight <- struct{}{}:
				case <-ctx.Done():
					fetched <- ctx.Err()
					return
				}
				select {
				case jobs <- job{n, batch}:
				case <-ctx.Done():
					fetched <- ctx.Err()
					return
				}
			}
			if len(batch) < exportBatch {
				fetched <- nil
				return
			}
		}
	}()

	send := func(b exportLoaded) bool {
		select {
		case out <- b:
			return b.err == nil
		case <-ctx.Done():
			return false
		}
	}
	waiting := map[int]exportLoaded{}
	next := 0
	for r := range results {
		waiting[r.n] = r.exportLoaded
		for {
			b, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			if !send(b) {
				return
			}
			<-inflight
		}
	}
	if err := <-fetched; err != nil {
		send(exportLoaded{err: err})
	}
}

// exportLoaded is one loaded batch, or the error that ended loading.
type exportLoaded struct {
	ts  []*grounding.ExportTrajectory
	err error
}

// run loads the cursor's batches into out until the end, the limit, an
// error (sent as the last item) or ctx's end, then closes out.
func (l *exportLoader) run(ctx context.Context, cur exportCursor, out chan<- exportLoaded) {
	defer close(out)
	op := fmt.Sprintf("export run %d", l.f.RunID)
	send := func(b exportLoaded) bool {
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	batch := make([]exportRow, 0, exportBatch)
	left := l.f.Limit // 0: no limit
	for {
		var err error
		batch, err = cur.next(ctx, batch[:0], exportBatch)
		if err != nil {
			send(exportLoaded{err: storeErr(op+": fetch", err)})
			return
		}
		ts, err := l.load(ctx, batch, &left)
		if err != nil {
			send(exportLoaded{err: err})
			return
		}
		if !send(exportLoaded{ts: ts}) || len(batch) < exportBatch || l.f.Limit > 0 && left == 0 {
			return
		}
	}
}

// exportGroups holds one parent's trajectories until the parent ends, since
// their weights depend on the parent's total target tokens.
type exportGroups struct {
	parents int
	each    func(*grounding.ExportTrajectory) error
	group   []*grounding.ExportTrajectory
	// What was passed on: trajectories, selected and supervised decisions;
	// the parents with target tokens; engine and profile versions.
	n                 [3]int
	parentsWithTokens int
	engines, profiles map[string]bool
}

func (g *exportGroups) sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (g *exportGroups) add(t *grounding.ExportTrajectory) error {
	if len(g.group) > 0 && g.group[0].ParentID != t.ParentID {
		if err := g.flush(); err != nil {
			return err
		}
	}
	g.group = append(g.group, t)
	return nil
}

func (g *exportGroups) flush() error {
	grounding.ParentWeights(g.group, g.parents)
	tokens := 0
	for _, t := range g.group {
		g.n[0]++
		g.n[1] += t.SelectedDecisions
		g.n[2] += t.SupervisedDecisions
		tokens += t.Tokens
		g.engines[t.EngineVersion] = true
		g.profiles[t.Profile] = true
		if err := g.each(t); err != nil {
			return err
		}
	}
	if tokens > 0 {
		g.parentsWithTokens++
	}
	clear(g.group)
	g.group = g.group[:0]
	return nil
}

// exportLoader loads batches of trajectories inside the export transaction.
type exportLoader struct {
	db      *DB
	tx      *sqlx.Tx
	f       grounding.ExportFilter
	reasons map[string]string // interned reason codes
	// Sizes of the last batch's slabs, to size the next ones.
	decisionsHint, messagesHint int
	marks                       []grounding.SFTMark // the batch's slab of marks
	tools                       map[string][]byte   // tool lists read, by SHA-256
}

// load returns the trajectories of batch that belong in the export, in
// batch order, prepared, with their decisions, headers and the visible
// messages the format needs. left counts down the limit (when there is one).
func (l *exportLoader) load(ctx context.Context, batch []exportRow, left *int) ([]*grounding.ExportTrajectory, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	op := fmt.Sprintf("export run %d", l.f.RunID)
	byID := make(map[int64]*grounding.ExportTrajectory, len(batch))
	ts := make([]*grounding.ExportTrajectory, len(batch))
	ids := make([]any, len(batch))
	for i, r := range batch {
		ts[i] = &grounding.ExportTrajectory{ID: r.id, ParentID: r.parent}
		byID[r.id] = ts[i]
		ids[i] = r.id
	}
	sft := l.f.Format == grounding.ExportSFT
	// SFT renders no decision: it needs which messages are supervised, from
	// decisions_export_idx alone. Masks and CSV need every column.
	q := `SELECT d.trajectory_id, d.message_idx, d.mask, d.human_verdict
		FROM decisions d WHERE d.trajectory_id ` + l.in(len(ids)) + ` ORDER BY d.trajectory_id, d.message_idx`
	if !sft {
		q = `SELECT d.trajectory_id, d.ordinal, d.message_idx, d.call_idx, d.tool, d.auto_verdict, d.human_verdict,
			d.verdict, d.mask, d.reasons, d.decided_at, COALESCE(u.name, '')
			FROM decisions d LEFT JOIN users u ON u.id = d.decided_by
			WHERE d.trajectory_id ` + l.in(len(ids)) + ` ORDER BY d.trajectory_id, d.ordinal`
	}
	rows, err := l.tx.QueryContext(ctx, l.tx.Rebind(q), l.args(ids)...)
	if err != nil {
		return nil, storeErr(op+": decisions", err)
	}
	if err := l.decisions(rows, byID, sft); err != nil {
		return nil, storeErr(op+": decisions", err)
	}
	// Keep those the export holds, up to the limit. Trajectories without
	// decisions have no messages loaded yet, which Prepare does not need.
	kept := ts[:0]
	for _, t := range ts {
		t.Prepare(l.f.Source)
		if !t.Exported(l.f) {
			delete(byID, t.ID)
			continue
		}
		if l.f.Limit > 0 {
			if *left == 0 {
				delete(byID, t.ID)
				continue
			}
			*left--
		}
		kept = append(kept, t)
	}
	if len(kept) == 0 {
		return nil, nil
	}
	ids = ids[:0]
	for _, t := range kept {
		ids = append(ids, t.ID)
	}
	in := l.in(len(ids))

	// SFT renders the tools and the import's rendering of the messages, and
	// no flow reasons; masks and CSV the reverse, and need only the marks
	// (for the target tokens). A pool has a few tool lists: with a rendering
	// kept, the tools come by their SHA-256, each list read once per loader.
	cols := `flow_reasons, '', ''`
	if sft {
		cols = `'[]', CASE WHEN s.trajectory_id IS NULL THEN t.tools ELSE '' END, COALESCE(s.messages, '')`
	}
	// Never hidden, request or meta: hidden context stays out of exports.
	rows, err = l.tx.QueryContext(ctx, l.tx.Rebind(`SELECT t.id, t.ext_id, t.parent_id, t.domain, t.success, t.reward,
		t.workflow_ok, t.engine_version, t.profile, `+cols+`, s.trajectory_id IS NOT NULL, COALESCE(s.marks, ''),
		COALESCE(s.tools_sha, '')
		FROM trajectories t LEFT JOIN trajectory_sft s ON s.trajectory_id = t.id WHERE t.id `+in), l.args(ids)...)
	if err != nil {
		return nil, storeErr(op+": trajectories", err)
	}
	unrendered, byTools, err := l.trajectories(rows, byID, sft)
	if err != nil {
		return nil, storeErr(op+": trajectories", err)
	}
	if err := l.toolLists(ctx, byTools); err != nil {
		return nil, storeErr(op+": tools", err)
	}

	// Trajectories imported before renderings were kept: their messages,
	// which Prepare renders. SFT needs every visible message; masks and
	// CSV only the assistant ones, for the target tokens. The role comes as
	// a small number (no string per message); other roles, which importers
	// refuse, come as text.
	if len(unrendered) > 0 {
		q = `SELECT trajectory_id, idx,
			CASE role WHEN 'assistant' THEN 0 WHEN 'user' THEN 1 WHEN 'tool' THEN 2 WHEN 'system' THEN 3 ELSE 4 END,
			CASE WHEN role IN ('assistant', 'user', 'tool', 'system') THEN '' ELSE role END,
			content, content_null, tool_calls, tool_call_id, name
			FROM messages WHERE trajectory_id ` + l.in(len(unrendered)) + ` AND hidden = ?`
		args := append(l.args(unrendered), false)
		if !sft {
			q += ` AND role = ?`
			args = append(args, grounding.RoleAssistant)
		}
		rows, err = l.tx.QueryContext(ctx, l.tx.Rebind(q+` ORDER BY trajectory_id, idx`), args...)
		if err != nil {
			return nil, storeErr(op+": messages", err)
		}
		if err := l.messages(rows, byID); err != nil {
			return nil, storeErr(op+": messages", err)
		}
	}
	// Prepared again with the marks (or the messages they are rendered
	// from): the weights and tokens need them.
	for _, t := range kept {
		t.Prepare(l.f.Source)
	}
	return kept, nil
}

// toolsRef is a trajectory whose row came with the SHA-256 of its tool
// list instead of the list.
type toolsRef struct {
	t   *grounding.ExportTrajectory
	sha string
}

// toolLists sets the tools of refs, reading each list the loader has not
// seen yet once (by the first trajectory that has it).
func (l *exportLoader) toolLists(ctx context.Context, refs []toolsRef) error {
	for _, r := range refs {
		t := r.t
		tools, ok := l.tools[r.sha]
		if !ok {
			if err := l.tx.GetContext(ctx, &tools, l.tx.Rebind(`SELECT tools FROM trajectories WHERE id = ?`), t.ID); err != nil {
				return fmt.Errorf("trajectory %d: %w", t.ID, err)
			}
			if len(l.tools) >= 256 { // a pool of many tool lists: keep memory bounded
				clear(l.tools)
			}
			l.tools[r.sha] = tools
		}
		t.Tools = tools
	}
	return nil
}

// in is the condition "is one of n ids" that args binds: on Postgres one
// array parameter, = ANY(?), whose plan does not depend on n (planning an
// IN list of 512 constants took longer than running the query: 4-5 ms
// against 3-7 ms a batch), with the export's transactions asking for
// generic plans; on SQLite an IN list.
func (l *exportLoader) in(n int) string {
	if l.db.d.name == "postgres" {
		return "= ANY(?)"
	}
	return "IN (?" + strings.Repeat(", ?", n-1) + ")"
}

// args binds ids (int64s) for the condition of in.
func (l *exportLoader) args(ids []any) []any {
	if l.db.d.name != "postgres" {
		return slices.Clip(ids)
	}
	a := make(pq.Int64Array, len(ids))
	for i, id := range ids {
		a[i] = id.(int64)
	}
	return []any{a}
}

// trajectories reads the trajectories' rows into byID, with the import's
// SFT rendering (for SFT) and marks. It returns the ids of those imported
// before renderings were kept and, for SFT, the trajectories whose tool
// list came by its SHA-256.
func (l *exportLoader) trajectories(rows *sql.Rows, byID map[int64]*grounding.ExportTrajectory, sft bool) (unrendered []any, byTools []toolsRef, err error) {
	defer rows.Close()
	l.marks = make([]grounding.SFTMark, 0, max(cap(l.marks), 64)) // the earlier batch may still be rendering
	for rows.Next() {
		var (
			id       int64
			reward   sql.NullFloat64
			flow     []byte
			tools    []byte
			rendered bool
			marks    string
			toolsSHA string
			r        grounding.ExportTrajectory
		)
		if err := rows.Scan(&id, &r.ExtID, &r.ParentID, &r.Domain, &r.Success, &reward,
			&r.WorkflowOK, &r.EngineVersion, &r.Profile, &flow, &tools, &r.SFT, &rendered, &marks, &toolsSHA); err != nil {
			return nil, nil, err
		}
		t := byID[id]
		if t == nil {
			return nil, nil, fmt.Errorf("unexpected trajectory %d", id)
		}
		if r.ParentID != t.ParentID {
			return nil, nil, fmt.Errorf("trajectory %d: parent %q, listed as %q", id, r.ParentID, t.ParentID)
		}
		t.ExtID, t.Domain, t.Success, t.WorkflowOK, t.EngineVersion, t.Profile = r.ExtID, r.Domain, r.Success, r.WorkflowOK, r.EngineVersion, r.Profile
		if reward.Valid {
			t.Reward = &reward.Float64
		}
		if t.FlowReasons, err = l.strings(flow); err != nil {
			return nil, nil, fmt.Errorf("trajectory %d: flow reasons: %w", id, err)
		}
		if len(tools) > 0 {
			t.Tools = tools
		}
		if !rendered {
			unrendered = append(unrendered, id)
			continue
		}
		// One slab of marks per batch; a slab outgrown stays with the
		// trajectories that point into it.
		start := len(l.marks)
		if l.marks, err = grounding.ParseSFTMarks(l.marks, marks); err != nil {
			return nil, nil, fmt.Errorf("trajectory %d: %w", id, err)
		}
		t.Marks = l.marks[start:len(l.marks):len(l.marks)]
		if sft {
			t.SFT = r.SFT
			if err := grounding.CheckSFTMarks(t.SFT, t.Marks); err != nil {
				return nil, nil, fmt.Errorf("trajectory %d: %w", id, err)
			}
			byTools = append(byTools, toolsRef{t, toolsSHA})
		}
	}
	return unrendered, byTools, rows.Err()
}

// decisions reads decision rows, grouped by trajectory, into one slab per
// batch (one allocation instead of a growing slice per trajectory). For SFT
// the rows hold only message_idx, mask and human_verdict.
func (l *exportLoader) decisions(rows *sql.Rows, byID map[int64]*grounding.ExportTrajectory, sft bool) error {
	defer rows.Close()
	var (
		tid     int64
		auto    string
		human   string
		verdict string
		reasons []byte
		at      nullTime
		err     error
		cur     *grounding.ExportTrajectory
		start   int
	)
	slab := make([]grounding.ExportDecision, 0, max(l.decisionsHint, 64))
	for rows.Next() {
		var d grounding.ExportDecision
		if sft {
			// int64 destinations take database/sql's fast path (no reflection).
			var msg, mask int64
			err = rows.Scan(&tid, &msg, &mask, &human)
			d.Message, d.Mask = int(msg), int(mask)
		} else {
			err = rows.Scan(&tid, &d.Ordinal, &d.Message, &d.Call, &d.Tool, &auto, &human, &verdict, &d.Mask, &reasons, &at, &d.Annotator)
		}
		if err != nil {
			return err
		}
		if cur == nil || cur.ID != tid {
			if cur != nil {
				cur.Decisions = slab[start:len(slab):len(slab)]
			}
			if cur = byID[tid]; cur == nil {
				return fmt.Errorf("unexpected trajectory %d", tid)
			}
			start = len(slab)
		}
		d.HumanVerdict = verdictOf(human)
		if !sft {
			d.AutoVerdict, d.Verdict = verdictOf(auto), verdictOf(verdict)
			if d.Reasons, err = l.strings(reasons); err != nil {
				return fmt.Errorf("trajectory %d decision %d: reasons: %w", tid, d.Ordinal, err)
			}
			// Who decided belongs to the current human verdict only.
			if d.HumanVerdict != "" {
				d.DecidedAt = at.Time
			} else {
				d.Annotator = ""
			}
		}
		if len(slab) == cap(slab) { // a new slab: the earlier trajectories keep theirs
			slab = append(make([]grounding.ExportDecision, 0, 2*cap(slab)), slab[start:]...)
			start = 0
		}
		slab = append(slab, d)
	}
	if cur != nil {
		cur.Decisions = slab[start:len(slab):len(slab)]
	}
	l.decisionsHint = len(slab) + len(slab)/8
	return rows.Err()
}

// messages reads message rows, grouped by trajectory, into one slab per
// batch, like decisions.
func (l *exportLoader) messages(rows *sql.Rows, byID map[int64]*grounding.ExportTrajectory) error {
	defer rows.Close()
	var (
		tid   int64
		calls []byte
		err   error
		cur   *grounding.ExportTrajectory
		start int
	)
	slab := make([]grounding.Message, 0, max(l.messagesHint, 64))
	var idx, role int64 // int64 destinations take database/sql's fast path
	for rows.Next() {
		var m grounding.Message
		calls = nil
		if err := rows.Scan(&tid, &idx, &role, &m.Role, &m.Content, &m.ContentNull, &calls, &m.ToolCallID, &m.Name); err != nil {
			return err
		}
		m.Index = int(idx)
		if role >= 0 && role < int64(len(exportRoles)) {
			m.Role = exportRoles[role]
		}
		if cur == nil || cur.ID != tid {
			if cur != nil {
				cur.Messages = slab[start:len(slab):len(slab)]
			}
			if cur = byID[tid]; cur == nil {
				return fmt.Errorf("unexpected trajectory %d", tid)
			}
			start = len(slab)
		}
		if len(calls) > 0 {
			if m.ToolCalls, err = grounding.DecodeStoredToolCalls(calls); err != nil {
				return fmt.Errorf("trajectory %d message %d: %w", tid, m.Index, err)
			}
		}
		if len(slab) == cap(slab) {
			slab = append(make([]grounding.Message, 0, 2*cap(slab)), slab[start:]...)
			start = 0
		}
		slab = append(slab, m)
	}
	if cur != nil {
		cur.Messages = slab[start:len(slab):len(slab)]
	}
	l.messagesHint = len(slab) + len(slab)/8
	return rows.Err()
}

// exportRoles decodes the role numbers of the messages query.
var exportRoles = []string{grounding.RoleAssistant, grounding.RoleUser, grounding.RoleTool, grounding.RoleSystem}

// verdictOf returns the Verdict constant for s without allocating.
func verdictOf(s string) grounding.Verdict {
	switch grounding.Verdict(s) {
	case grounding.VerdictPass:
		return grounding.VerdictPass
	case grounding.VerdictFail:
		return grounding.VerdictFail
	case grounding.VerdictAmbiguous:
		return grounding.VerdictAmbiguous
	}
	return grounding.Verdict(s)
}

// strings decodes a stored JSON list of reason codes. The common case, no
// escapes, is split by hand and the codes interned: an export decodes one
// list per decision, and they repeat a few dozen codes.
func (l *exportLoader) strings(raw []byte) ([]string, error) {
	s := strings.TrimSpace(string(raw))
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") || strings.ContainsRune(s, '\\') {
		var out []string
		if err := decodeJSON(raw, &out); err != nil {
			return nil, err
		}
		return out, nil
	}
	body := strings.TrimSpace(s[1 : len(s)-1])
	if body == "" {
		return nil, nil
	}
	var out []string
	for part := range strings.SplitSeq(body, ",") {
		part = strings.TrimSpace(part)
		if len(part) < 2 || part[0] != '"' || part[len(part)-1] != '"' || strings.Contains(part[1:len(part)-1], `"`) {
			// A comma inside a code: let encoding/json split it.
			out = nil
			if err := decodeJSON(raw, &out); err != nil {
				return nil, err
			}
			return out, nil
		}
		code := part[1 : len(part)-1]
		if v, ok := l.reasons[code]; ok {
			code = v
		} else {
			code = strings.Clone(code)
			l.reasons[code] = code
		}
		out = append(out, code)
	}
	return out, nil
}
