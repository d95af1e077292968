package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// sweDiagnosticsVersion is the version of the stored diagnostics. Bump it
// when grounding's classifier, router or diagnostics change meaning:
// RefreshSWEDiagnostics then recomputes every stored row.
const sweDiagnosticsVersion = 2 // 2: reverts, --help, backups, mv, write+run, regressions

// sweTrajectoryCond selects a run's SWE trajectories (alias t): the SWE
// importers' domain, or one of their formats for logs imported as
// canonical with another domain.
const sweTrajectoryCond = `(t.domain = 'swe' OR t.format IN ('swe-agent', 'mini-swe-agent', 'openhands'))`

// ImportSWEInstances stores SWE-bench instance metadata read from file, all
// or nothing, and returns how many instances it wrote. An instance already
// stored is replaced (its fix and tests may have been corrected). The
// first error seq yields aborts the import and comes back wrapped; an
// instance without an id is grounding.ErrInvalid.
func (db *DB) ImportSWEInstances(ctx context.Context, file string, seq iter.Seq2[*grounding.SWEInstance, error]) (int, error) {
	op := "import SWE instances from " + file
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return 0, storeErr(op, err)
	}
	defer tx.Rollback()
	at := dbTime{now()}
	q := tx.Rebind(`INSERT INTO swe_instances (instance_id, repo, base_commit, version, patch, test_patch,
		fail_to_pass, pass_to_pass, problem_statement, patch_files, loc_tokens, rep_tokens, patch_tokens, source_file, imported_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (instance_id) DO UPDATE SET repo = excluded.repo, base_commit = excluded.base_commit,
		version = excluded.version, patch = excluded.patch, test_patch = excluded.test_patch,
		fail_to_pass = excluded.fail_to_pass, pass_to_pass = excluded.pass_to_pass,
		problem_statement = excluded.problem_statement, patch_files = excluded.patch_files,
		loc_tokens = excluded.loc_tokens, rep_tokens = excluded.rep_tokens, patch_tokens = excluded.patch_tokens,
		source_file = excluded.source_file, imported_at = excluded.imported_at`)
	st, err := tx.PreparexContext(ctx, q)
	if err != nil {
		return 0, storeErr(op, err)
	}
	defer st.Close()
	n := 0
	for in, err := range seq {
		if err != nil {
			return 0, fmt.Errorf("store: %s: %w", op, err)
		}
		if in == nil || in.InstanceID == "" {
			return 0, fmt.Errorf("store: %s: instance %d has no id: %w", op, n, grounding.ErrInvalid)
		}
		ev := grounding.SWEEvidenceOf(in)
		f2p, err1 := encodeJSON(nonNil(in.FailToPass))
		p2p, err2 := encodeJSON(nonNil(in.PassToPass))
		files, err3 := encodeJSON(nonNil(in.PatchFiles()))
		if err := errors.Join(err1, err2, err3); err != nil {
			return 0, fmt.Errorf("store: %s: instance %q: %w: %w", op, in.InstanceID, grounding.ErrInvalid, err)
		}
		_, err = st.ExecContext(ctx, cleanText(in.InstanceID), cleanText(in.Repo), cleanText(in.BaseCommit), cleanText(in.Version),
			cleanText(in.Patch), cleanText(in.TestPatch), cleanJSON(f2p), cleanJSON(p2p), cleanText(in.ProblemStatement),
			cleanJSON(files), ev.LOCTokens, ev.REPTokens, ev.PATCHTokens, file, at)
		if err != nil {
			return 0, storeErr(fmt.Sprintf("%s: instance %q", op, in.InstanceID), err)
		}
		n++
	}
	if err := tx.Commit(); err != nil {
		return 0, storeErr(op+": commit", err)
	}
	return n, nil
}

// ImportSWEResults stores evaluation results read from file for the run
// called runName, all or nothing, and returns how many it wrote; a result
// already stored for the run and instance is replaced. An unknown run is
// grounding.ErrNotFound: results belong to the run whose patches were
// evaluated, so its trajectories come first.
func (db *DB) ImportSWEResults(ctx context.Context, runName, file string, seq iter.Seq2[grounding.SWEResult, error]) (int, error) {
	op := "import SWE results from " + file
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return 0, storeErr(op, err)
	}
	defer tx.Rollback()
	var runID int64
	if err := tx.GetContext(ctx, &runID, tx.Rebind(`SELECT id FROM runs WHERE name = ?`), runName); err != nil {
		return 0, storeErr(fmt.Sprintf("%s: run %q", op, runName), err)
	}
	at := dbTime{now()}
	st, err := tx.PreparexContext(ctx, tx.Rebind(`INSERT INTO swe_results (run_id, instance_id, resolved, source_file, imported_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (run_id, instance_id) DO UPDATE SET resolved = excluded.resolved,
		source_file = excluded.source_file, imported_at = excluded.imported_at`))
	if err != nil {
		return 0, storeErr(op, err)
	}
	defer st.Close()
	n := 0
	for r, err := range seq {
		if err != nil {
			return 0, fmt.Errorf("store: %s: %w", op, err)
		}
		if r.InstanceID == "" {
			return 0, fmt.Errorf("store: %s: result %d has no instance id: %w", op, n, grounding.ErrInvalid)
		}
		if _, err := st.ExecContext(ctx, runID, cleanText(r.InstanceID), r.Resolved, file, at); err != nil {
			return 0, storeErr(op, err)
		}
		n++
	}
	if err := tx.Commit(); err != nil {
		return 0, storeErr(op+": commit", err)
	}
	return n, nil
}

type sweInstanceRow struct {
	InstanceID       string `db:"instance_id"`
	Repo             string `db:"repo"`
	BaseCommit       string `db:"base_commit"`
	Version          string `db:"version"`
	Patch            string `db:"patch"`
	TestPatch        string `db:"test_patch"`
	FailToPass       []byte `db:"fail_to_pass"`
	PassToPass       []byte `db:"pass_to_pass"`
	ProblemStatement string `db:"problem_statement"`
	PatchFiles       []byte `db:"patch_files"`
	LOCTokens        int    `db:"loc_tokens"`
	REPTokens        int    `db:"rep_tokens"`
	PATCHTokens      int    `db:"patch_tokens"`
	SourceFile       string `db:"source_file"`
	ImportedAt       dbTime `db:"imported_at"`
}

func (r sweInstanceRow) instance() (*grounding.SWEInstance, error) {
	in := &grounding.SWEInstance{InstanceID: r.InstanceID, Repo: r.Repo, BaseCommit: r.BaseCommit, Version: r.Version,
		Patch: r.Patch, TestPatch: r.TestPatch, ProblemStatement: r.ProblemStatement}
	if err := decodeJSON(r.FailToPass, &in.FailToPass); err != nil {
		return nil, fmt.Errorf("decode FAIL_TO_PASS of %s: %w", r.InstanceID, err)
	}
	if err := decodeJSON(r.PassToPass, &in.PassToPass); err != nil {
		return nil, fmt.Errorf("decode PASS_TO_PASS of %s: %w", r.InstanceID, err)
	}
	return in, nil
}

func (r sweInstanceRow) summary() (grounding.SWEInstanceSummary, error) {
	s := grounding.SWEInstanceSummary{InstanceID: r.InstanceID, Repo: r.Repo, LOCTokens: r.LOCTokens, REPTokens: r.REPTokens,
		PATCHTokens: r.PATCHTokens, SourceFile: r.SourceFile, ImportedAt: r.ImportedAt.Time}
	if err := decodeJSON(r.PatchFiles, &s.Files); err != nil {
		return s, fmt.Errorf("decode patch files of %s: %w", r.InstanceID, err)
	}
	return s, nil
}

const sweInstanceColumns = `instance_id, repo, base_commit, version, patch, test_patch, fail_to_pass, pass_to_pass,
	problem_statement, patch_files, loc_tokens, rep_tokens, patch_tokens, source_file, imported_at`

// SWEInstance returns the stored instance with this id, or
// grounding.ErrNotFound.
func (db *DB) SWEInstance(ctx context.Context, id string) (*grounding.SWEInstance, error) {
	op := fmt.Sprintf("SWE instance %q", id)
	var r sweInstanceRow
	if err := db.x.GetContext(ctx, &r, db.x.Rebind(`SELECT `+sweInstanceColumns+` FROM swe_instances WHERE instance_id = ?`), id); err != nil {
		return nil, storeErr(op, err)
	}
	in, err := r.instance()
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	return in, nil
}

// SWEInstances lists stored instances by id, limit (default 100, at most
// 1000) at a time after the id after; next is the last id when more follow.
func (db *DB) SWEInstances(ctx context.Context, after string, limit int) (rows []grounding.SWEInstanceSummary, next string, err error) {
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var rs []sweInstanceRow
	err = db.x.SelectContext(ctx, &rs, db.x.Rebind(`SELECT `+sweInstanceColumns+` FROM swe_instances
		WHERE instance_id > ? ORDER BY instance_id LIMIT ?`), after, limit+1)
	if err != nil {
		return nil, "", storeErr("list SWE instances", err)
	}
	if len(rs) > limit {
		rs = rs[:limit]
		next = rs[limit-1].InstanceID
	}
	for _, r := range rs {
		s, err := r.summary()
		if err != nil {
			return nil, "", fmt.Errorf("store: list SWE instances: %w", err)
		}
		rows = append(rows, s)
	}
	return rows, next, nil
}

// SWERuns lists the runs holding SWE trajectories (by their domain facet,
// kept at import), newest first.
func (db *DB) SWERuns(ctx context.Context) ([]grounding.Run, error) {
	var rows []runRow
	err := db.x.SelectContext(ctx, &rows, `SELECT `+runColumns+` FROM runs
		WHERE id IN (SELECT run_id FROM run_facets WHERE kind = 'domain' AND value = 'swe')
		ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, storeErr("list SWE runs", err)
	}
	out := make([]grounding.Run, len(rows))
	for i, r := range rows {
		out[i] = r.run()
	}
	return out, nil
}

// sweMessageRow is a stored message, read for diagnosis.
type sweMessageRow struct {
	TrajectoryID int64  `db:"trajectory_id"`
	Idx          int    `db:"idx"`
	Role         string `db:"role"`
	Content      string `db:"content"`
	ContentNull  bool   `db:"content_null"`
	ToolCalls    []byte `db:"tool_calls"`
	ToolCallID   string `db:"tool_call_id"`
	Name         string `db:"name"`
	IsError      bool   `db:"is_error"`
	Hidden       bool   `db:"hidden"`
	HiddenKind   string `db:"hidden_kind"`
}

func (r sweMessageRow) message() (grounding.Message, error) {
	m := grounding.Message{Index: r.Idx, Role: r.Role, Content: r.Content, ContentNull: r.ContentNull,
		ToolCallID: r.ToolCallID, Name: r.Name, Error: r.IsError, HiddenKind: r.HiddenKind}
	if r.Hidden {
		m.Visibility = grounding.Hidden
	}
	if len(r.ToolCalls) > 0 {
		if err := decodeJSON(r.ToolCalls, &m.ToolCalls); err != nil {
			return m, fmt.Errorf("message %d: decode tool calls: %w", r.Idx, err)
		}
	}
	return m, nil
}

const sweMessageColumns = `m.trajectory_id, m.idx, m.role, m.content, m.content_null, m.tool_calls, m.tool_call_id, m.name, m.is_error, m.hidden, m.hidden_kind`

// sweHeadRow is what diagnosis needs of a trajectory row.
type sweHeadRow struct {
	ID     int64  `db:"id"`
	RunID  int64  `db:"run_id"`
	ExtID  string `db:"ext_id"`
	Format string `db:"format"`
	Meta   []byte `db:"meta"`
}

// RefreshSWEDiagnostics computes and stores the diagnostics of every SWE
// trajectory of the run that has none yet, or one of an older version, and
// returns how many it computed. It reads the pending trajectories' messages
// in one ordered scan and writes in transactions of a few hundred rows, so
// a concurrent import is never blocked long; running it twice computes
// nothing the second time. An unknown run computes nothing.
func (db *DB) RefreshSWEDiagnostics(ctx context.Context, runID int64) (int, error) {
	op := fmt.Sprintf("refresh SWE diagnostics of run %d", runID)
	pending := `FROM trajectories t LEFT JOIN swe_diagnostics d ON d.trajectory_id = t.id
		WHERE t.run_id = ? AND ` + sweTrajectoryCond + ` AND (d.trajectory_id IS NULL OR d.version < ?)`
	var heads []sweHeadRow
	if err := db.x.SelectContext(ctx, &heads, db.x.Rebind(`SELECT t.id, t.run_id, t.ext_id, t.format, t.meta `+pending+` ORDER BY t.id`),
		runID, sweDiagnosticsVersion); err != nil {
		return 0, storeErr(op, err)
	}
	if len(heads) == 0 {
		return 0, nil
	}
	byID := make(map[int64]*sweHeadRow, len(heads))
	for i := range heads {
		byID[heads[i].ID] = &heads[i]
	}
	rows, err := db.x.QueryxContext(ctx, db.x.Rebind(`SELECT `+sweMessageColumns+` FROM messages m
		WHERE m.trajectory_id IN (SELECT t.id `+pending+`) ORDER BY m.trajectory_id, m.idx`), runID, sweDiagnosticsVersion)
	if err != nil {
		return 0, storeErr(op, err)
	}
	var (
		computed []sweDiagnosticRow
		cur      *grounding.Trajectory
		curID    int64
		done     = map[int64]bool{}
	)
	// Diagnosis runs beside the scan, on another core: the driver and
	// the classifier cost about the same.
	type job struct {
		id int64
		t  *grounding.Trajectory
	}
	jobs := make(chan job, 64)
	results := make(chan []sweDiagnosticRow, 1)
	go func() {
		var out []sweDiagnosticRow
		for j := range jobs {
			out = append(out, diagnosticRow(j.id, byID[j.id].RunID, grounding.DiagnoseSWE(j.t, nil)))
		}
		results <- out
	}()
	stopped := false
	stop := func() []sweDiagnosticRow {
		if stopped {
			return nil
		}
		stopped = true
		close(jobs)
		return <-results
	}
	defer stop()
	finish := func() {
		if cur == nil {
			return
		}
		jobs <- job{curID, cur}
		done[curID] = true
		cur = nil
	}
	// The scan is read to its end before any write, so SQLite's writer never
	// waits on this connection's open cursor.
	for rows.Next() {
		var r sweMessageRow
		if err := rows.StructScan(&r); err != nil {
			rows.Close()
			return 0, storeErr(op, err)
		}
		if cur == nil || r.TrajectoryID != curID {
			finish()
			h := byID[r.TrajectoryID]
			cur, curID = &grounding.Trajectory{ID: h.ExtID, Meta: h.Meta, Source: grounding.Source{Format: h.Format}}, h.ID
		}
		m, err := r.message()
		if err != nil {
			rows.Close()
			return 0, fmt.Errorf("store: %s: trajectory %d: %w", op, r.TrajectoryID, err)
		}
		cur.Messages = append(cur.Messages, m)
	}
	if err := rows.Err(); err != nil {
		rows.Close()
		return 0, storeErr(op, err)
	}
	rows.Close()
	finish()
	computed = stop()
	for _, h := range heads { // trajectories without messages
		if !done[h.ID] {
			computed = append(computed, diagnosticRow(h.ID, h.RunID, grounding.DiagnoseSWE(&grounding.Trajectory{ID: h.ExtID, Meta: h.Meta}, nil)))
		}
	}
	// A few hundred rows per transaction: an import waiting for the write
	// lock waits for one chunk, not the whole run.
	const perTx = 500
	n := 0
	for len(computed) > 0 {
		k := min(perTx, len(computed))
		if err := db.saveSWEDiagnostics(ctx, computed[:k]); err != nil {
			return n, fmt.Errorf("store: %s: %w", op, err)
		}
		n += k
		computed = computed[k:]
	}
	return n, nil
}

// sweDiagnosticRow is one swe_diagnostics row.
type sweDiagnosticRow struct {
	TrajectoryID int64        `db:"trajectory_id"`
	RunID        int64        `db:"run_id"`
	ExtID        string       `db:"ext_id"`
	InstanceID   string       `db:"instance_id"`
	Version      int          `db:"version"`
	Steps        int          `db:"steps"`
	Stages       string       `db:"stages"`
	EditedFiles  []byte       `db:"edited_files"`
	Reproduction sql.NullBool `db:"reproduction"`
	Verification sql.NullBool `db:"verification"`
	Completed    bool         `db:"completed"`
}

func nullBool(b *bool) sql.NullBool {
	if b == nil {
		return sql.NullBool{}
	}
	return sql.NullBool{Bool: *b, Valid: true}
}

func boolPtr(b sql.NullBool) *bool {
	if !b.Valid {
		return nil
	}
	v := b.Bool
	return &v
}

func diagnosticRow(id, runID int64, d grounding.SWEDiagnosis) sweDiagnosticRow {
	files, _ := encodeJSON(nonNil(d.EditedFiles)) // a []string always encodes
	return sweDiagnosticRow{
		TrajectoryID: id, RunID: runID, ExtID: d.Trajectory, InstanceID: d.InstanceID, Version: sweDiagnosticsVersion,
		Steps: len(d.Steps), Stages: d.StageString(), EditedFiles: []byte(cleanJSON(files)),
		Reproduction: nullBool(d.Reproduction), Verification: nullBool(d.Verification), Completed: d.Completed,
	}
}

// sweDiagnosticColumns are written by saveSWEDiagnostics, in order.
var sweDiagnosticColumns = []string{"trajectory_id", "run_id", "ext_id", "instance_id", "version",
	"steps", "stages", "edited_files", "reproduction", "verification", "completed"}

// saveSWEDiagnostics upserts rows in one transaction, with one multi-row
// statement (a round trip per row cost Postgres about as much as the
// diagnosis itself).
func (db *DB) saveSWEDiagnostics(ctx context.Context, rows []sweDiagnosticRow) error {
	if len(rows) == 0 {
		return nil
	}
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return storeErr("save SWE diagnostics", err)
	}
	defer tx.Rollback()
	q := valuesSQL("swe_diagnostics", sweDiagnosticColumns, len(rows)) + ` ON CONFLICT (trajectory_id) DO UPDATE SET
		instance_id = excluded.instance_id, version = excluded.version, steps = excluded.steps, stages = excluded.stages,
		edited_files = excluded.edited_files, reproduction = excluded.reproduction, verification = excluded.verification,
		completed = excluded.completed`
	args := make([]any, 0, len(rows)*len(sweDiagnosticColumns))
	for _, r := range rows {
		args = append(args, r.TrajectoryID, r.RunID, cleanText(r.ExtID), cleanText(r.InstanceID), r.Version,
			r.Steps, r.Stages, string(r.EditedFiles), r.Reproduction, r.Verification, r.Completed)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(q), args...); err != nil {
		return storeErr(fmt.Sprintf("save SWE diagnostics of %d trajectories", len(rows)), err)
	}
	return storeErr("save SWE diagnostics: commit", tx.Commit())
}

// sweOutcomeRow is a stored diagnosis joined with its instance's reference
// files and the run's evaluation result.
type sweOutcomeRow struct {
	sweDiagnosticRow
	PatchFiles []byte       `db:"patch_files"`
	Resolved   sql.NullBool `db:"resolved"`
}

func (r sweOutcomeRow) outcome(refs map[string][]string) (grounding.SWEOutcome, error) {
	o := grounding.SWEOutcome{
		TrajectoryID: r.TrajectoryID, ExtID: r.ExtID, InstanceID: r.InstanceID, Steps: r.Steps, Stages: r.Stages,
		Reproduction: boolPtr(r.Reproduction), Verification: boolPtr(r.Verification), Completed: r.Completed,
		Resolved: boolPtr(r.Resolved),
	}
	if string(r.EditedFiles) != "[]" {
		if err := decodeJSON(r.EditedFiles, &o.EditedFiles); err != nil {
			return o, fmt.Errorf("decode edited files of trajectory %d: %w", r.TrajectoryID, err)
		}
	}
	if len(r.PatchFiles) > 0 {
		// Runs attempt the same instances many times: decode each
		// instance's reference once per read.
		ref, ok := refs[r.InstanceID]
		if !ok {
			if err := decodeJSON(r.PatchFiles, &ref); err != nil {
				return o, fmt.Errorf("decode reference files of %s: %w", r.InstanceID, err)
			}
			refs[r.InstanceID] = ref
		}
		o.Localization = grounding.SWELocalization(o.EditedFiles, ref)
	}
	return o, nil
}

const sweOutcomeQuery = `SELECT d.trajectory_id, d.run_id, d.ext_id, d.instance_id, d.version, d.steps, d.stages,
	d.edited_files, d.reproduction, d.verification, d.completed, i.patch_files, r.resolved
	FROM swe_diagnostics d
	LEFT JOIN swe_instances i ON i.instance_id = d.instance_id
	LEFT JOIN swe_results r ON r.run_id = d.run_id AND r.instance_id = d.instance_id`

// SWEOutcomes returns the stored diagnostics of a run's SWE trajectories,
// ordered by ext id, limit at a time after the ext id after (limit <= 0:
// all of them), with localization computed against the stored reference
// (nil without one) and the run's evaluation result (nil without one).
// next is the last ext id when more follow. Call RefreshSWEDiagnostics
// first for a run imported before; an unknown run has none.
func (db *DB) SWEOutcomes(ctx context.Context, runID int64, after string, limit int) (outs []grounding.SWEOutcome, next string, err error) {
	op := fmt.Sprintf("SWE outcomes of run %d", runID)
	q := sweOutcomeQuery + ` WHERE d.run_id = ? AND d.ext_id > ? ORDER BY d.ext_id`
	args := []any{runID, after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit+1)
	}
	var rows []sweOutcomeRow
	if err := db.x.SelectContext(ctx, &rows, db.x.Rebind(q), args...); err != nil {
		return nil, "", storeErr(op, err)
	}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
		next = rows[limit-1].ExtID
	}
	outs = make([]grounding.SWEOutcome, len(rows))
	refs := map[string][]string{}
	for i, r := range rows {
		if outs[i], err = r.outcome(refs); err != nil {
			return nil, "", fmt.Errorf("store: %s: %w", op, err)
		}
	}
	return outs, next, nil
}

// SWEStamp returns a short string that changes whenever the outcomes of
// the run's SWE trajectories may have: trajectories imported into the run,
// instance metadata imported, or the run's results imported. It reads a few
// index entries, so a page can cache a run's outcomes under it.
func (db *DB) SWEStamp(ctx context.Context, runID int64) (string, error) {
	var s struct {
		Trajectories int            `db:"trajectories"`
		Instances    int            `db:"instances"`
		InstancesAt  sql.NullString `db:"instances_at"`
		Results      int            `db:"results"`
		ResultsAt    sql.NullString `db:"results_at"`
	}
	err := db.x.GetContext(ctx, &s, db.x.Rebind(`SELECT
		COALESCE((SELECT trajectories FROM runs WHERE id = ?), -1) AS trajectories,
		(SELECT COUNT(*) FROM swe_instances) AS instances,
		(SELECT MAX(imported_at) FROM swe_instances) AS instances_at,
		(SELECT COUNT(*) FROM swe_results WHERE run_id = ?) AS results,
		(SELECT MAX(imported_at) FROM swe_results WHERE run_id = ?) AS results_at`), runID, runID, runID)
	if err != nil {
		return "", storeErr(fmt.Sprintf("SWE stamp of run %d", runID), err)
	}
	return fmt.Sprintf("v%d t%d i%d@%s r%d@%s", sweDiagnosticsVersion, s.Trajectories, s.Instances, s.InstancesAt.String, s.Results, s.ResultsAt.String), nil
}

// SWESubject loads what the diagnostics page of one trajectory needs, in
// one transaction: the whole trajectory, its run, its instance's metadata
// (nil when none is stored) and the run's result for it (nil when none).
// An unknown trajectory is grounding.ErrNotFound.
func (db *DB) SWESubject(ctx context.Context, trajectoryID int64) (grounding.SWESubject, error) {
	op := fmt.Sprintf("SWE trajectory %d", trajectoryID)
	tx, err := db.x.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return grounding.SWESubject{}, storeErr(op, err)
	}
	defer tx.Rollback()
	var h struct {
		ID       int64           `db:"id"`
		RunID    int64           `db:"run_id"`
		RunName  string          `db:"run_name"`
		ExtID    string          `db:"ext_id"`
		ParentID string          `db:"parent_id"`
		Domain   string          `db:"domain"`
		Format   string          `db:"format"`
		File     string          `db:"source_file"`
		Index    int             `db:"source_index"`
		Request  string          `db:"request"`
		Meta     []byte          `db:"meta"`
		Reward   sql.NullFloat64 `db:"reward"`
		Success  bool            `db:"success"`
	}
	err = tx.GetContext(ctx, &h, tx.Rebind(`SELECT t.id, t.run_id, r.name AS run_name, t.ext_id, t.parent_id, t.domain, t.format,
		t.source_file, t.source_index, t.request, t.meta, t.reward, t.success
		FROM trajectories t JOIN runs r ON r.id = t.run_id WHERE t.id = ?`), trajectoryID)
	if err != nil {
		return grounding.SWESubject{}, storeErr(op, err)
	}
	tr := &grounding.Trajectory{ID: h.ExtID, ParentID: h.ParentID, Domain: h.Domain, Request: h.Request, Meta: h.Meta,
		Source: grounding.Source{Format: h.Format, File: h.File, Index: h.Index}, Success: &h.Success}
	if h.Reward.Valid {
		tr.Reward = &h.Reward.Float64
	}
	var ms []sweMessageRow
	if err := tx.SelectContext(ctx, &ms, tx.Rebind(`SELECT `+sweMessageColumns+` FROM messages m WHERE m.trajectory_id = ? ORDER BY m.idx`), trajectoryID); err != nil {
		return grounding.SWESubject{}, storeErr(op, err)
	}
	tr.Messages = make([]grounding.Message, len(ms))
	for i, r := range ms {
		if tr.Messages[i], err = r.message(); err != nil {
			return grounding.SWESubject{}, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	s := grounding.SWESubject{ID: h.ID, RunID: h.RunID, RunName: h.RunName, Trajectory: tr}
	if id := grounding.SWEMetaOf(tr).InstanceID; id != "" {
		s.Instance, s.Resolved, err = sweInstanceAndResult(ctx, tx, h.RunID, id)
		if err != nil {
			return grounding.SWESubject{}, fmt.Errorf("store: %s: %w", op, err)
		}
	}
	return s, nil
}

func sweInstanceAndResult(ctx context.Context, tx *sqlx.Tx, runID int64, id string) (*grounding.SWEInstance, *bool, error) {
	var rs []sweInstanceRow
	if err := tx.SelectContext(ctx, &rs, tx.Rebind(`SELECT `+sweInstanceColumns+` FROM swe_instances WHERE instance_id = ?`), id); err != nil {
		return nil, nil, err
	}
	var in *grounding.SWEInstance
	if len(rs) == 1 {
		var err error
		if in, err = rs[0].instance(); err != nil {
			return nil, nil, err
		}
	}
	var res []bool
	if err := tx.SelectContext(ctx, &res, tx.Rebind(`SELECT resolved FROM swe_results WHERE run_id = ? AND instance_id = ?`), runID, id); err != nil {
		return nil, nil, err
	}
	if len(res) == 1 {
		return in, &res[0], nil
	}
	return in, nil, nil
}
