package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// Import batching: trajectories are buffered and written together, so an
// import costs a few statements per batch rather than a round trip per
// message. A batch closes at whichever limit comes first.
const (
	batchTrajectories = 256  // 256 × 32 columns stays far under both parameter limits
	batchMessages     = 8192 // bounds memory with very long trajectories
)

// Columns written at import, in the order importWriter appends values.
var (
	trajectoryColumns = []string{
		"run_id", "import_id", "ext_id", "sort_key", "parent_id", "domain", "success", "reward",
		"n_messages", "n_decisions", "n_tool_calls", "n_errors",
		"source_file", "source_index", "source_line", "format", "request", "tools", "hidden", "meta",
		"checked_at", "engine_version", "profile", "workflow_ok", "flow_reasons", "violations",
		"n_pass", "n_fail", "n_ambiguous", "n_queued", "n_supervised", "certified",
	}
	messageColumns = []string{
		"trajectory_id", "idx", "role", "content", "content_null", "tool_calls",
		"tool_call_id", "name", "is_error", "hidden", "hidden_kind",
	}
	decisionColumns = []string{
		"trajectory_id", "run_id", "ordinal", "message_idx", "call_idx", "tool", "observation_idx", "is_error",
		"action", "e", "v", "g", "flow_ok", "auto_verdict", "verdict", "mask", "queued", "reasons", "args", "question", "detail",
	}
	reasonColumns = []string{"trajectory_id", "ordinal", "run_id", "reason", "tool"}
	sftColumns    = []string{"trajectory_id", "messages", "marks", "tools_sha"}
	queueColumns  = []string{"run_id", "trajectory_id", "ordinal", "source", "why", "priority", "required", "state", "created_at"}
)

// ImportTrajectories persists one file's trajectories into the run called
// runName, creating the run if needed, in one transaction: all or nothing.
//
// meta carries the file's File, Format, SHA256 and Bytes. When an import
// with the same SHA256 exists, ImportTrajectories does not consume seq, adds
// nothing (not even the run) and returns meta with Duplicate set,
// PreviousRun and PreviousAt naming the earlier import, RunName set to
// runName and RunID zero.
//
// Otherwise it consumes seq. The first error seq yields aborts the import and
// comes back wrapped. A trajectory whose id is already in the run, or twice
// in the file, aborts it with an error wrapping grounding.ErrConflict that
// names the id, its record index and the file that brought it first; a nil
// trajectory or one without an id, with grounding.ErrInvalid.
//
// Each trajectory becomes a trajectories row, one messages row per message
// (idx is its position) and one decisions row per grounding.Decisions(t).
// U+0000 and invalid UTF-8 in requests, message content and JSON values are
// stored as U+FFFD (Postgres cannot hold them; see text.go). The run's
// counters grow in the same transaction. The result has RunID, RunName and
// the counts filled in.
func (db *DB) ImportTrajectories(ctx context.Context, runName string, meta grounding.ImportResult, seq iter.Seq2[*grounding.Trajectory, error]) (grounding.ImportResult, error) {
	op := "import " + grounding.CleanFileName(meta.File)
	fail := func(err error) (grounding.ImportResult, error) { return grounding.ImportResult{}, err }
	if p := grounding.RunNameProblem(runName); p != "" {
		return fail(fmt.Errorf("store: %s: %s: %w", op, strings.TrimSuffix(p, "."), grounding.ErrInvalid))
	}
	meta.File = grounding.CleanFileName(meta.File)
	if meta.SHA256 == "" {
		return fail(fmt.Errorf("store: %s: no sha256: %w", op, grounding.ErrInvalid))
	}

	conn, tx, err := db.beginBulk(ctx)
	if err != nil {
		return fail(storeErr(op, err))
	}
	defer conn.Close()
	defer tx.Rollback()
	at := now()

	// Under SQLite the immediate transaction already holds the write lock,
	// so this check is final. Under Postgres a concurrent import of the same
	// bytes can slip past it; the unique sha256 below catches that one.
	prev, err := previousImport(ctx, tx, meta.SHA256)
	if err != nil {
		return fail(storeErr(op, err))
	}
	if prev != nil {
		return duplicate(meta, runName, prev), nil
	}

	// Upserting locks the run row until commit, so imports into one run are
	// serialized under Postgres too: the counters add up, and the ext-id
	// check in flush sees every committed trajectory of the run.
	var run struct {
		ID           int64 `db:"id"`
		Trajectories int   `db:"trajectories"`
		Overlap      int   `db:"overlap"`
	}
	err = tx.GetContext(ctx, &run, tx.Rebind(
		`INSERT INTO runs (name, created_at) VALUES (?, ?)
		 ON CONFLICT (name) DO UPDATE SET name = excluded.name
		 RETURNING id, trajectories, overlap`), runName, dbTime{at})
	if err != nil {
		return fail(storeErr(fmt.Sprintf("%s: run %q", op, runName), err))
	}

	var importID int64
	err = tx.GetContext(ctx, &importID, tx.Rebind(
		`INSERT INTO imports (run_id, file, format, sha256, bytes, created_at)
		 VALUES (?, ?, ?, ?, ?, ?) RETURNING id`),
		run.ID, meta.File, meta.Format, meta.SHA256, meta.Bytes, dbTime{at})
	if err != nil {
		err = storeErr(op, err)
		if errors.Is(err, grounding.ErrConflict) {
			// The same bytes committed by a concurrent import meanwhile.
			_ = tx.Rollback()
			_ = conn.Close()
			if prev, perr := previousImport(ctx, db.x, meta.SHA256); perr == nil && prev != nil {
				return duplicate(meta, runName, prev), nil
			}
		}
		return fail(err)
	}

	w := &importWriter{
		tx: tx, d: &db.d, op: op, stmts: newStmts(conn, tx),
		runID: run.ID, runName: runName, importID: importID, meta: meta,
		checkRun: run.Trajectories > 0,
		facets:   make(map[[2]string]bool),
		at:       at,
		overlap:  run.Overlap,
	}
	defer w.stmts.close()
	if err := w.consume(ctx, seq); err != nil {
		return fail(err)
	}
	if err := w.flush(ctx); err != nil {
		return fail(err)
	}

	_, err = tx.ExecContext(ctx, tx.Rebind(
		`UPDATE imports SET trajectories = ?, messages = ?, decisions = ? WHERE id = ?`),
		w.n.trajectories, w.n.messages, w.n.decisions, importID)
	if err != nil {
		return fail(storeErr(op+": count import", err))
	}
	for f := range w.facets {
		_, err = tx.ExecContext(ctx, tx.Rebind(
			`INSERT INTO run_facets (run_id, kind, value) VALUES (?, ?, ?)
			 ON CONFLICT DO NOTHING`), run.ID, f[0], cleanText(f[1]))
		if err != nil {
			return fail(storeErr(op+": facets", err))
		}
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(
		`UPDATE runs SET trajectories = trajectories + ?, successes = successes + ?,
		 decisions = decisions + ?, tool_calls = tool_calls + ?, messages = messages + ?,
		 imports = imports + 1, n_pass = n_pass + ?, n_fail = n_fail + ?, n_ambiguous = n_ambiguous + ?,
		 n_queued = n_queued + ?, n_supervised = n_supervised + ?, n_certified = n_certified + ?
		 WHERE id = ?`),
		w.n.trajectories, w.n.successes, w.n.decisions, w.n.toolCalls, w.n.messages,
		w.checks.pass, w.checks.fail, w.checks.ambiguous, w.checks.queued, w.checks.supervised, w.checks.certified,
		run.ID)
	if err != nil {
		return fail(storeErr(op+": count run", err))
	}
	if err := tx.Commit(); err != nil {
		return fail(storeErr(op+": commit", err))
	}
	_ = conn.Close() // back to the pool, for the statistics below
	// Best effort: the import is committed whatever this says, and tables
	// left unanalyzed by a failure (a cancelled request) keep their change
	// count, so the next import or autovacuum picks them up.
	_ = db.analyzeGrown(ctx, map[string]int{
		"trajectories": w.n.trajectories, "messages": w.n.messages, "decisions": w.n.decisions,
		"decision_reasons": w.n.reasons, "queue_items": w.checks.queued, "coverage_paths": w.n.trajectories,
		"trajectory_sft": w.n.trajectories,
	})

	res := meta
	res.RunID, res.RunName = run.ID, runName
	res.Trajectories, res.Messages, res.Decisions = w.n.trajectories, w.n.messages, w.n.decisions
	res.Duplicate, res.PreviousRun, res.PreviousAt = false, "", time.Time{}
	return res, nil
}

// priorImport is an earlier import of the same content.
type priorImport struct {
	RunName   string `db:"run_name"`
	CreatedAt dbTime `db:"created_at"`
}

// previousImport returns the import with this sha256, or nil.
func previousImport(ctx context.Context, q queryer, sha string) (*priorImport, error) {
	var rows []priorImport
	err := sqlx.SelectContext(ctx, q, &rows, q.Rebind(
		`SELECT r.name AS run_name, i.created_at FROM imports i JOIN runs r ON r.id = i.run_id WHERE i.sha256 = ?`), sha)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

// queryer is a *sqlx.DB or a *sqlx.Tx, for helpers used both inside and
// outside a transaction.
type queryer interface {
	sqlx.QueryerContext
	Rebind(string) string
}

// nonNil returns s, or an empty slice for nil, so JSON columns hold [] rather
// than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func duplicate(meta grounding.ImportResult, runName string, prev *priorImport) grounding.ImportResult {
	res := meta
	res.RunID, res.RunName = 0, runName
	res.Trajectories, res.Messages, res.Decisions = 0, 0, 0
	res.Duplicate, res.PreviousRun, res.PreviousAt = true, prev.RunName, prev.CreatedAt.Time
	return res
}

// importWriter buffers trajectories and writes them in batches.
type importWriter struct {
	tx       *sqlx.Tx
	d        *dialect
	op       string
	stmts    *stmts
	runID    int64
	runName  string
	importID int64
	meta     grounding.ImportResult
	// checkRun is set when the run had trajectories before this import:
	// each batch's ids are then looked up among them.
	checkRun bool
	// facets are the domains and tools this file brings to the run.
	facets map[[2]string]bool

	batch     []pendingTrajectory
	batchMsgs int
	n         struct{ trajectories, successes, messages, decisions, toolCalls, reasons int }
	checks    checkCounts
	at        time.Time
	overlap   int // the run's k: verdicts each queue item needs
}

// checkCounts are the run counters the checks move.
type checkCounts struct{ pass, fail, ambiguous, queued, supervised, certified int }

// countCheck returns a trajectory's own counters.
func countCheck(res grounding.Result) checkCounts {
	var own checkCounts
	for _, d := range res.Decisions {
		switch d.Verdict {
		case grounding.VerdictPass:
			own.pass++
		case grounding.VerdictFail:
			own.fail++
		default:
			own.ambiguous++
		}
		if d.Queued {
			own.queued++
		}
		own.supervised += d.Mask
	}
	if res.R == 1 && res.Workflow && own.supervised > 0 {
		own.certified = 1
	}
	return own
}

func (c *checkCounts) add(o checkCounts) {
	c.pass += o.pass
	c.fail += o.fail
	c.ambiguous += o.ambiguous
	c.queued += o.queued
	c.supervised += o.supervised
	c.certified += o.certified
}

// pendingTrajectory is one admitted trajectory with every row it becomes,
// ready to write but for its database id: the trajectory_id slots of msgs,
// decs, reasons and queue are filled in by flush.
type pendingTrajectory struct {
	t       *grounding.Trajectory
	row     []any // trajectoryColumns values
	msgs    []any // messageColumns values, one message after the other
	decs    []any // decisionColumns values
	reasons []any // reasonColumns values
	queue   []any // queueColumns values
	sft     []any // sftColumns values
	cov     coverageRow

	own                       checkCounts
	decisions, calls, success int
	domain                    string
	tools                     []string
}

// consume reads seq and writes its trajectories. Three stages overlap: a
// reader goroutine pulls trajectories from seq (the parsing) and admits
// them in file order (ids, duplicates); workers (a core each but the
// writer's) check and encode them, the CPU-heavy part; and this goroutine
// puts them back in file
// order, counts them and writes batches to the database. Errors surface in
// file order, the first one stopping every stage. At most maxInFlight
// trajectories are between the reader and the writer, whatever the file's
// size.
func (w *importWriter) consume(ctx context.Context, seq iter.Seq2[*grounding.Trajectory, error]) error {
	type job struct {
		n   int // position in the file's sequence
		t   *grounding.Trajectory
		err error
	}
	type done struct {
		n   int
		p   pendingTrajectory
		err error
	}
	// The writer is the one stage that cannot be split (one transaction,
	// one connection; SQLite's engine runs in it), so it keeps a core of
	// its own: with as many workers as cores, the Go scheduler shared two
	// cores among four busy goroutines and the writer got half of one
	// (a SQLite import of 35,000 trajectories took 24 s instead of 11).
	workers := max(1, runtime.GOMAXPROCS(0)-1)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, maxInFlight)
	jobs := make(chan job, workers)
	results := make(chan done, maxInFlight)

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the reader: parse, admit, hand out in order
		defer wg.Done()
		defer close(jobs)
		seen := make(map[string]int)
		n := 0
		for t, err := range seq {
			select {
			case slots <- struct{}{}:
			case <-pctx.Done():
				return
			}
			j := job{n: n, t: t}
			if err != nil {
				j.err = fmt.Errorf("store: %s: %w", w.op, err)
			} else {
				j.err = admit(w, t, n, seen)
			}
			select {
			case jobs <- j:
			case <-pctx.Done():
				return
			}
			if j.err != nil {
				return
			}
			n++
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch importScratch
			for j := range jobs {
				d := done{n: j.n, err: j.err}
				if d.err == nil {
					d.p, d.err = w.prepare(j.t, &scratch)
				}
				select {
				case results <- d:
				case <-pctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	fail := func(err error) error {
		cancel()
		for range results { // wait for every stage to stop
		}
		return err
	}
	waiting := make(map[int]done)
	next := 0
	for d := range results {
		waiting[d.n] = d
		for {
			d, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			next++
			<-slots
			if d.err != nil {
				return fail(d.err)
			}
			w.count(&d.p)
			w.batch = append(w.batch, d.p)
			w.batchMsgs += len(d.p.t.Messages)
			if len(w.batch) >= batchTrajectories || w.batchMsgs >= batchMessages {
				if err := w.flush(ctx); err != nil {
					return fail(err)
				}
			}
		}
	}
	return ctx.Err()
}

// maxInFlight bounds the trajectories read but not yet written: twice a
// batch, so the workers never wait on the writer's batch filling up.
const maxInFlight = 2 * batchTrajectories

// admit validates t, record n of the file, and refuses a second trajectory
// with its id (seen maps ids to their record index).
func admit(w *importWriter, t *grounding.Trajectory, n int, seen map[string]int) error {
	if t == nil {
		return fmt.Errorf("store: %s: record %d: nil trajectory: %w", w.op, n, grounding.ErrInvalid)
	}
	if t.ID == "" {
		return fmt.Errorf("store: %s: record %d has no id: %w", w.op, t.Source.Index, grounding.ErrInvalid)
	}
	if first, dup := seen[t.ID]; dup {
		return fmt.Errorf("store: %s: trajectory %q (record %d) appears twice in %s (first at record %d): %w",
			w.op, t.ID, t.Source.Index, w.meta.File, first, grounding.ErrConflict)
	}
	seen[t.ID] = t.Source.Index
	return nil
}

// count adds an admitted trajectory to the import's counters and facets,
// in file order.
func (w *importWriter) count(p *pendingTrajectory) {
	w.n.trajectories++
	w.n.successes += p.success
	w.n.messages += len(p.t.Messages)
	w.n.decisions += p.decisions
	w.n.toolCalls += p.calls
	w.n.reasons += len(p.reasons) / len(reasonColumns)
	w.checks.add(p.own)
	if p.domain != "" {
		w.facets[[2]string{"domain", p.domain}] = true
	}
	for _, tool := range p.tools {
		w.facets[[2]string{"tool", tool}] = true
	}
}

// prepare checks t and encodes every row it becomes. It reads only what
// the import fixed before the first trajectory (run, import, time, k), so
// workers run it concurrently, each with a scratch of its own.
func (w *importWriter) prepare(t *grounding.Trajectory, scratch *importScratch) (pendingTrajectory, error) {
	decisions := grounding.Decisions(t)
	check := grounding.CheckDefault(t)
	if err := sameDecisions(decisions, check); err != nil {
		// The engine walks the same decisions; a mismatch is a bug, and
		// storing a check against the wrong decisions would be worse than
		// refusing the file.
		return pendingTrajectory{}, fmt.Errorf("store: %s: trajectory %q: %w", w.op, t.ID, err)
	}
	calls, errs := 0, 0
	for _, d := range decisions {
		if !d.IsReply() {
			calls++
		}
	}
	for _, m := range t.Messages {
		if m.Role == grounding.RoleTool && m.Error {
			errs++
		}
	}
	bad := func(what string, err error) (pendingTrajectory, error) {
		return pendingTrajectory{}, fmt.Errorf("store: %s: trajectory %q (record %d): %s: %w: %w",
			w.op, t.ID, t.Source.Index, what, grounding.ErrInvalid, err)
	}
	storedTools, toolsSum, err := scratch.storedTools(t.Tools)
	if err != nil {
		return bad("tools", err)
	}
	scratch.buf, err = appendHidden(scratch.buf[:0], nonNil(t.Hidden))
	if err != nil {
		return bad("hidden", err)
	}
	hidden := cleanJSON(string(scratch.buf))
	var meta any
	if len(t.Meta) > 0 {
		if !json.Valid(t.Meta) {
			return bad("meta", errors.New("not valid JSON"))
		}
		meta = cleanJSON(string(t.Meta))
	}
	var reward any
	if t.Reward != nil {
		reward = *t.Reward
	}
	success := t.Succeeded()

	own := countCheck(check)
	flow := string(appendStrings(scratch.buf[:0], nonNil(check.Reasons)))
	violations := string(appendViolations(scratch.buf[:0], nonNil(check.Violations)))
	cov, err := coverageOf(t, check)
	if err != nil {
		return pendingTrajectory{}, err
	}
	p := pendingTrajectory{t: t, cov: cov, own: own, decisions: len(decisions), calls: calls, domain: t.Domain, row: []any{
		w.runID, w.importID, t.ID, naturalKey(t.ID), t.Parent(), t.Domain, success, reward,
		len(t.Messages), len(decisions), calls, errs,
		cmp.Or(t.Source.File, w.meta.File), t.Source.Index, t.Source.Line, cmp.Or(t.Source.Format, w.meta.Format),
		cleanText(t.Request), storedTools, hidden, meta,
		dbTime{w.at}, check.EngineVersion, check.Profile + "@" + check.ProfileVersion, check.Workflow, flow, cleanJSON(violations),
		own.pass, own.fail, own.ambiguous, own.queued, own.supervised, own.certified == 1,
	}}
	if success {
		p.success = 1
	}
	for _, d := range decisions {
		if d.Tool != "" && !slices.Contains(p.tools, d.Tool) {
			p.tools = append(p.tools, d.Tool)
		}
	}

	// The rows, with nil where flush puts the trajectory's id. The SFT
	// rendering is made from the visible messages as an export would read
	// them back: content cleaned, tool calls as read from the text stored.
	p.msgs = make([]any, 0, len(t.Messages)*len(messageColumns))
	visible := make([]grounding.Message, 0, len(t.Messages))
	for i, m := range t.Messages {
		var calls any
		content := cleanText(m.Content)
		if len(m.ToolCalls) > 0 {
			var s string
			if s, m.ToolCalls, err = scratch.storedToolCalls(m.ToolCalls, !m.IsHidden()); err != nil {
				return bad(fmt.Sprintf("message %d: tool calls", i), err)
			}
			calls = s
		}
		p.msgs = append(p.msgs, nil, i, m.Role, content, m.ContentNull, calls,
			m.ToolCallID, m.Name, m.Error, m.IsHidden(), m.HiddenKind)
		if !m.IsHidden() {
			m.Index, m.Content = i, content
			visible = append(visible, m)
		}
	}
	rendering, marks := grounding.AppendSFTMessages(nil, visible)
	p.sft = []any{nil, string(rendering), string(grounding.AppendSFTMarks(nil, marks)), toolsSum}
	p.decs = make([]any, 0, len(decisions)*len(decisionColumns))
	for i, d := range decisions {
		c := check.Decisions[i]
		reasons := cleanJSON(string(appendStrings(scratch.buf[:0], nonNil(c.Reasons))))
		args, question, err := evidenceJSON(c.Args)
		if err != nil {
			return pendingTrajectory{}, err
		}
		p.decs = append(p.decs, nil, w.runID, d.Ordinal, d.Message, d.Call, d.Tool, d.Observation, d.Error,
			c.Action, c.E, c.V, c.G, c.Workflow, string(c.Verdict), string(c.Verdict), c.Mask, c.Queued,
			reasons, args, question, cleanText(c.Detail))
		for _, r := range dedupe(c.Reasons) {
			p.reasons = append(p.reasons, nil, d.Ordinal, w.runID, r, d.Tool)
		}
		if c.Queued {
			// Until coverage deficits exist, a trajectory's queued
			// decisions are worth more together: priority is their count.
			p.queue = append(p.queue, w.runID, nil, d.Ordinal, "auto", reasons, own.queued, w.overlap, "open", dbTime{w.at})
		}
	}
	return p, nil
}

// setID puts id into the slot of every row of vals (n values each) at pos.
func setID(vals []any, n, pos int, id int64) []any {
	for i := pos; i < len(vals); i += n {
		vals[i] = id
	}
	return vals
}

// flush writes the buffered batch.
func (w *importWriter) flush(ctx context.Context) error {
	if len(w.batch) == 0 {
		return nil
	}
	defer func() { w.batch, w.batchMsgs = w.batch[:0], 0 }()
	if w.checkRun {
		if err := w.checkExisting(ctx); err != nil {
			return err
		}
	}

	// Trajectories: one statement, ids back by ext id (RETURNING order is
	// not promised to follow VALUES order).
	args := make([]any, 0, len(w.batch)*len(trajectoryColumns))
	for _, p := range w.batch {
		args = append(args, p.row...)
	}
	st, err := w.stmts.get(ctx, w.tx.Rebind(valuesSQL("trajectories", trajectoryColumns, len(w.batch))+" RETURNING id, ext_id"))
	if err != nil {
		return storeErr(w.op+": insert trajectories", err)
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return storeErr(w.op+": insert trajectories", err)
	}
	ids := make(map[string]int64, len(w.batch))
	for rows.Next() {
		var id int64
		var ext string
		if err := rows.Scan(&id, &ext); err != nil {
			rows.Close()
			return storeErr(w.op+": insert trajectories", err)
		}
		ids[ext] = id
	}
	if err := rows.Close(); err != nil {
		return storeErr(w.op+": insert trajectories", err)
	}
	if err := rows.Err(); err != nil {
		return storeErr(w.op+": insert trajectories", err)
	}

	msgs := make([]any, 0, w.batchMsgs*len(messageColumns))
	var decs, rs, qs, covs, sfts []any
	for _, p := range w.batch {
		id := ids[p.t.ID]
		covs = append(covs, p.cov.values(id, w.runID)...)
		msgs = append(msgs, setID(p.msgs, len(messageColumns), 0, id)...)
		decs = append(decs, setID(p.decs, len(decisionColumns), 0, id)...)
		rs = append(rs, setID(p.reasons, len(reasonColumns), 0, id)...)
		qs = append(qs, setID(p.queue, len(queueColumns), 1, id)...)
		sfts = append(sfts, setID(p.sft, len(sftColumns), 0, id)...)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "messages", messageColumns, msgs); err != nil {
		return storeErr(w.op+": insert messages", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "decisions", decisionColumns, decs); err != nil {
		return storeErr(w.op+": insert decisions", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "decision_reasons", reasonColumns, rs); err != nil {
		return storeErr(w.op+": insert decision reasons", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "queue_items", queueColumns, qs); err != nil {
		return storeErr(w.op+": queue decisions", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "coverage_paths", coverageColumns, covs); err != nil {
		return storeErr(w.op+": coverage paths", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "trajectory_sft", sftColumns, sfts); err != nil {
		return storeErr(w.op+": SFT renderings", err)
	}
	return nil
}

// checkExisting fails when a trajectory of the batch is already in the run,
// naming the first one (in file order) and the file it came from.
func (w *importWriter) checkExisting(ctx context.Context) error {
	args := make([]any, 0, len(w.batch)+1)
	args = append(args, w.runID)
	for _, p := range w.batch {
		args = append(args, p.t.ID)
	}
	q := `SELECT t.ext_id, i.file FROM trajectories t JOIN imports i ON i.id = t.import_id
	      WHERE t.run_id = ? AND t.ext_id IN (?` + strings.Repeat(", ?", len(w.batch)-1) + `)`
	rows, err := w.tx.QueryxContext(ctx, w.tx.Rebind(q), args...)
	if err != nil {
		return storeErr(w.op+": check trajectory ids", err)
	}
	defer rows.Close()
	existing := make(map[string]string)
	for rows.Next() {
		var ext, file string
		if err := rows.Scan(&ext, &file); err != nil {
			return storeErr(w.op+": check trajectory ids", err)
		}
		existing[ext] = file
	}
	if err := rows.Err(); err != nil {
		return storeErr(w.op+": check trajectory ids", err)
	}
	for _, p := range w.batch {
		if file, ok := existing[p.t.ID]; ok {
			// Worded as the importer words a bad field: this file, this
			// record and line, the id, and where the id came from first.
			ie := &grounding.ImportError{File: w.meta.File, Record: p.t.Source.Index, Line: p.t.Source.Line, Field: "id",
				Expected: fmt.Sprintf("an id not already in run %q", w.runName),
				Got:      fmt.Sprintf("%q, imported before from %s", p.t.ID, file)}
			return fmt.Errorf("store: %s: %w: %w", w.op, ie, grounding.ErrConflict)
		}
	}
	return nil
}

// encodeJSON marshals v without HTML escaping (logs are shown as text, and
// "<" must stay "<" in SQLite) and without the trailing newline.
func encodeJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// evidenceJSON renders a decision's argument evidence for the args column
// and the arguments in question (grounding.InQuestion) for the question
// column, which queue lists read instead of all of it.
// grounding.AppendEvidenceJSON writes what encoding/json would, four times
// as fast: evidence is the largest thing an import writes.
func evidenceJSON(args []grounding.ArgEvidence) (all, question string, err error) {
	b, err := grounding.AppendEvidenceJSON(nil, nonNil(args))
	if err != nil {
		return "", "", err
	}
	q, err := grounding.AppendEvidenceJSON(nil, nonNil(grounding.InQuestion(args)))
	if err != nil {
		return "", "", err
	}
	return cleanJSON(string(b)), cleanJSON(string(q)), nil
}

// dedupe returns s without repeated values, in first-seen order.
func dedupe(s []string) []string {
	var out []string
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// sameDecisions checks that a check result covers exactly these decisions,
// paired with the same messages, calls and observations.
func sameDecisions(ds []grounding.Decision, r grounding.Result) error {
	if len(r.Decisions) != len(ds) {
		return fmt.Errorf("the check covers %d decisions, want %d", len(r.Decisions), len(ds))
	}
	for i, d := range ds {
		c := r.Decisions[i]
		if c.Ordinal != d.Ordinal || c.Message != d.Message || c.Call != d.Call || c.Observation != d.Observation {
			return fmt.Errorf("the check's decision %d (message %d, call %d, observation %d) differs from (message %d, call %d, observation %d)",
				i, c.Message, c.Call, c.Observation, d.Message, d.Call, d.Observation)
		}
	}
	return nil
}
