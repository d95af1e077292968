package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// Import batching: trajectories are buffered and written together, so an
// import costs a few statements per batch rather than a round trip per
// message. A batch closes at whichever limit comes first.
const (
	batchTrajectories = 256  // 256 × 31 columns stays far under both parameter limits
	batchMessages     = 8192 // bounds memory with very long trajectories
)

// Columns written at import, in the order importWriter appends values.
var (
	trajectoryColumns = []string{
		"run_id", "import_id", "ext_id", "parent_id", "domain", "success", "reward",
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
	reasonColumns = []string{"trajectory_id", "ordinal", "run_id", "reason"}
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
	op := "import " + meta.File
	fail := func(err error) (grounding.ImportResult, error) { return grounding.ImportResult{}, err }
	if runName == "" {
		return fail(fmt.Errorf("store: %s: empty run name: %w", op, grounding.ErrInvalid))
	}
	if meta.SHA256 == "" {
		return fail(fmt.Errorf("store: %s: no sha256: %w", op, grounding.ErrInvalid))
	}

	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return fail(storeErr(op, err))
	}
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
			if prev, perr := previousImport(ctx, db.x, meta.SHA256); perr == nil && prev != nil {
				return duplicate(meta, runName, prev), nil
			}
		}
		return fail(err)
	}

	w := &importWriter{
		tx: tx, d: &db.d, op: op, stmts: newStmts(tx),
		runID: run.ID, runName: runName, importID: importID, meta: meta,
		checkRun: run.Trajectories > 0,
		seen:     make(map[string]int),
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
	// Best effort: the import is committed whatever this says, and tables
	// left unanalyzed by a failure (a cancelled request) keep their change
	// count, so the next import or autovacuum picks them up.
	_ = db.analyzeGrown(ctx, map[string]int{
		"trajectories": w.n.trajectories, "messages": w.n.messages, "decisions": w.n.decisions,
		"decision_reasons": w.n.reasons, "queue_items": w.checks.queued, "coverage_paths": w.n.trajectories,
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
	// seen maps each ext id of this file to its record index.
	seen map[string]int

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

// count adds a trajectory's check to c and returns the trajectory's own.
func (c *checkCounts) count(res grounding.Result) checkCounts {
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
	c.pass += own.pass
	c.fail += own.fail
	c.ambiguous += own.ambiguous
	c.queued += own.queued
	c.supervised += own.supervised
	c.certified += own.certified
	return own
}

type pendingTrajectory struct {
	t         *grounding.Trajectory
	decisions []grounding.Decision
	check     grounding.Result
	queued    int   // decisions of t queued for a human
	row       []any // trajectoryColumns values
	cov       coverageRow
}

// add validates t, computes its decisions and row, and flushes a full batch.
// consume reads seq and writes its trajectories. Parsing and checking (the
// CPU-heavy part) run in a producer goroutine while this one writes batches
// to the database, so on two cores the two overlap. The producer owns the
// counters until the channel closes; the first error from either side stops
// both.
func (w *importWriter) consume(ctx context.Context, seq iter.Seq2[*grounding.Trajectory, error]) error {
	type item struct {
		p   pendingTrajectory
		err error
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := make(chan item, 2*batchTrajectories)
	go func() {
		defer close(ch)
		for t, err := range seq {
			var it item
			if err != nil {
				it.err = fmt.Errorf("store: %s: %w", w.op, err)
			} else {
				it.p, it.err = w.admit(t)
			}
			select {
			case ch <- it:
			case <-pctx.Done():
				return
			}
			if it.err != nil {
				return
			}
		}
	}()
	fail := func(err error) error {
		cancel()
		for range ch { // wait for the producer to stop
		}
		return err
	}
	for it := range ch {
		if it.err != nil {
			return fail(it.err)
		}
		w.batch = append(w.batch, it.p)
		w.batchMsgs += len(it.p.t.Messages)
		if len(w.batch) >= batchTrajectories || w.batchMsgs >= batchMessages {
			if err := w.flush(ctx); err != nil {
				return fail(err)
			}
		}
	}
	return ctx.Err()
}

// admit validates t, refuses a second trajectory with its id, and prepares
// its row and check.
func (w *importWriter) admit(t *grounding.Trajectory) (pendingTrajectory, error) {
	if t == nil {
		return pendingTrajectory{}, fmt.Errorf("store: %s: record %d: nil trajectory: %w", w.op, w.n.trajectories, grounding.ErrInvalid)
	}
	if t.ID == "" {
		return pendingTrajectory{}, fmt.Errorf("store: %s: record %d has no id: %w", w.op, t.Source.Index, grounding.ErrInvalid)
	}
	if first, dup := w.seen[t.ID]; dup {
		return pendingTrajectory{}, fmt.Errorf("store: %s: trajectory %q (record %d) appears twice in %s (first at record %d): %w",
			w.op, t.ID, t.Source.Index, w.meta.File, first, grounding.ErrConflict)
	}
	w.seen[t.ID] = t.Source.Index
	return w.prepare(t)
}

// prepare computes the trajectories row of t and updates the counters.
func (w *importWriter) prepare(t *grounding.Trajectory) (pendingTrajectory, error) {
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
	tools, err := encodeJSON(nonNil(t.Tools))
	if err != nil {
		return bad("tools", err)
	}
	hidden, err := encodeJSON(nonNil(t.Hidden))
	if err != nil {
		return bad("hidden", err)
	}
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

	if t.Domain != "" {
		w.facets[[2]string{"domain", t.Domain}] = true
	}
	for _, d := range decisions {
		if d.Tool != "" {
			w.facets[[2]string{"tool", d.Tool}] = true
		}
	}

	w.n.trajectories++
	if success {
		w.n.successes++
	}
	w.n.messages += len(t.Messages)
	w.n.decisions += len(decisions)
	w.n.toolCalls += calls

	own := w.checks.count(check)
	flow, err := encodeJSON(nonNil(check.Reasons))
	if err != nil {
		return pendingTrajectory{}, err
	}
	violations, err := encodeJSON(nonNil(check.Violations))
	if err != nil {
		return pendingTrajectory{}, err
	}
	cov, err := coverageOf(t, check)
	if err != nil {
		return pendingTrajectory{}, err
	}
	return pendingTrajectory{t: t, decisions: decisions, check: check, queued: own.queued, cov: cov, row: []any{
		w.runID, w.importID, t.ID, t.Parent(), t.Domain, success, reward,
		len(t.Messages), len(decisions), calls, errs,
		cmp.Or(t.Source.File, w.meta.File), t.Source.Index, t.Source.Line, cmp.Or(t.Source.Format, w.meta.Format),
		cleanText(t.Request), cleanJSON(tools), cleanJSON(hidden), meta,
		dbTime{w.at}, check.EngineVersion, check.Profile + "@" + check.ProfileVersion, check.Workflow, flow, cleanJSON(violations),
		own.pass, own.fail, own.ambiguous, own.queued, own.supervised, own.certified == 1,
	}}, nil
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
	var decs, rs, qs, covs []any
	for _, p := range w.batch {
		id := ids[p.t.ID]
		covs = append(covs, p.cov.values(id, w.runID)...)
		for i, m := range p.t.Messages {
			var calls any
			if len(m.ToolCalls) > 0 {
				s, err := encodeJSON(m.ToolCalls)
				if err != nil {
					return fmt.Errorf("store: %s: trajectory %q (record %d): message %d: tool calls: %w: %w",
						w.op, p.t.ID, p.t.Source.Index, i, grounding.ErrInvalid, err)
				}
				calls = cleanJSON(s)
			}
			msgs = append(msgs, id, i, m.Role, cleanText(m.Content), m.ContentNull, calls,
				m.ToolCallID, m.Name, m.Error, m.IsHidden(), m.HiddenKind)
		}
		for i, d := range p.decisions {
			c := p.check.Decisions[i]
			reasons, err := encodeJSON(nonNil(c.Reasons))
			if err != nil {
				return err
			}
			args, question, err := evidenceJSON(c.Args)
			if err != nil {
				return err
			}
			decs = append(decs, id, w.runID, d.Ordinal, d.Message, d.Call, d.Tool, d.Observation, d.Error,
				c.Action, c.E, c.V, c.G, c.Workflow, string(c.Verdict), string(c.Verdict), c.Mask, c.Queued,
				cleanJSON(reasons), args, question, cleanText(c.Detail))
			for _, r := range dedupe(c.Reasons) {
				rs = append(rs, id, d.Ordinal, w.runID, r)
			}
			if c.Queued {
				// Until coverage deficits exist, a trajectory's queued
				// decisions are worth more together: priority is their count.
				qs = append(qs, w.runID, id, d.Ordinal, "auto", cleanJSON(reasons), p.queued, w.overlap, "open", dbTime{w.at})
			}
		}
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "messages", messageColumns, msgs); err != nil {
		return storeErr(w.op+": insert messages", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "decisions", decisionColumns, decs); err != nil {
		return storeErr(w.op+": insert decisions", err)
	}
	w.n.reasons += len(rs) / len(reasonColumns)
	if err := w.d.bulk(ctx, w.stmts, w.d, "decision_reasons", reasonColumns, rs); err != nil {
		return storeErr(w.op+": insert decision reasons", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "queue_items", queueColumns, qs); err != nil {
		return storeErr(w.op+": queue decisions", err)
	}
	if err := w.d.bulk(ctx, w.stmts, w.d, "coverage_paths", coverageColumns, covs); err != nil {
		return storeErr(w.op+": coverage paths", err)
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
			return fmt.Errorf("store: %s: trajectory %q (record %d) is already in run %q, imported from %s: %w",
				w.op, p.t.ID, p.t.Source.Index, w.runName, file, grounding.ErrConflict)
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
func evidenceJSON(args []grounding.ArgEvidence) (all, question string, err error) {
	if all, err = encodeJSON(nonNil(args)); err != nil {
		return "", "", err
	}
	if question, err = encodeJSON(nonNil(grounding.InQuestion(args))); err != nil {
		return "", "", err
	}
	return cleanJSON(all), cleanJSON(question), nil
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
