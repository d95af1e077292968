package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// Coverage storage (migration 00008): one coverage_paths row per trajectory
// holding its path steps and its canonical path over the current masks, the
// project's model scales, and saved views. See the migration's comment for
// what invalidates what.

// coverageColumns are the columns of coverage_paths, in coverageRow.values
// order.
var coverageColumns = []string{"trajectory_id", "run_id", "steps", "path", "path_id", "supervised", "tokens", "stale"}

// coverageRow is a trajectory's coverage_paths row without its ids.
type coverageRow struct {
	steps      string
	path       string
	supervised int
	tokens     int
}

// coverageOf computes the coverage row of t from its check: the path over
// the check's masks, certified as the trajectories table defines it
// (success, workflow respected, one mask).
func coverageOf(t *grounding.Trajectory, r grounding.Result) (coverageRow, error) {
	steps := grounding.PathSteps(t, r.Decisions)
	masks := make([]int, len(r.Decisions))
	for i, d := range r.Decisions {
		masks[i] = d.Mask
	}
	return newCoverageRow(steps, masks, t.Succeeded() && r.Workflow)
}

func newCoverageRow(steps []grounding.PathStep, masks []int, eligible bool) (coverageRow, error) {
	js, err := encodeJSON(nonNil(steps))
	if err != nil {
		return coverageRow{}, fmt.Errorf("store: encode path steps: %w", err)
	}
	sup := 0
	for _, m := range masks {
		sup += m
	}
	return coverageRow{steps: js, path: grounding.CanonicalPath(steps, masks, eligible), supervised: sup,
		tokens: grounding.CertifiedTokens(steps, masks)}, nil
}

func (c coverageRow) values(trajectoryID, runID int64) []any {
	return []any{trajectoryID, runID, c.steps, c.path, pathID(c.path), c.supervised, c.tokens, false}
}

// pathID is grounding.PathID, "" for no path.
func pathID(path string) string {
	if path == "" {
		return ""
	}
	return grounding.PathID(path)
}

// writeCoverageSteps stores new steps for a trajectory (recheck) and marks
// its row stale, creating it if needed; refreshCoverage derives the rest.
func writeCoverageSteps(ctx context.Context, tx *sqlx.Tx, trajectoryID, runID int64, steps []grounding.PathStep) error {
	js, err := encodeJSON(nonNil(steps))
	if err != nil {
		return fmt.Errorf("store: encode path steps: %w", err)
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO coverage_paths (trajectory_id, run_id, steps, stale) VALUES (?, ?, ?, ?)
		ON CONFLICT (trajectory_id) DO UPDATE SET steps = excluded.steps, stale = excluded.stale`), trajectoryID, runID, js, true)
	return storeErr(fmt.Sprintf("coverage steps of trajectory %d", trajectoryID), err)
}

// derived is a coverage row derived again from stored steps and masks.
type derived struct {
	path       string
	supervised int
	tokens     int
}

// deriveCoverage derives the coverage of trajectories ids from their stored
// steps, their decisions' current effective masks and their success and
// workflow flags. Trajectories without a coverage row are left out.
func deriveCoverage(ctx context.Context, q queryer, ids []int64) (map[int64]derived, error) {
	out := make(map[int64]derived, len(ids))
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		in := "(?" + strings.Repeat(", ?", len(chunk)-1) + ")"
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		var rows []struct {
			ID       int64  `db:"trajectory_id"`
			Steps    []byte `db:"steps"`
			Success  bool   `db:"success"`
			Workflow bool   `db:"workflow_ok"`
		}
		if err := sqlx.SelectContext(ctx, q, &rows, q.Rebind(`SELECT c.trajectory_id, c.steps, t.success, t.workflow_ok
			FROM coverage_paths c JOIN trajectories t ON t.id = c.trajectory_id WHERE c.trajectory_id IN `+in), args...); err != nil {
			return nil, storeErr("derive coverage", err)
		}
		var masks []struct {
			ID      int64 `db:"trajectory_id"`
			Ordinal int   `db:"ordinal"`
			Mask    int   `db:"mask"`
		}
		if err := sqlx.SelectContext(ctx, q, &masks, q.Rebind(`SELECT trajectory_id, ordinal, mask FROM decisions
			WHERE trajectory_id IN `+in+` ORDER BY trajectory_id, ordinal`), args...); err != nil {
			return nil, storeErr("derive coverage: masks", err)
		}
		byID := map[int64][]int{}
		for _, m := range masks {
			byID[m.ID] = append(byID[m.ID], m.Mask)
		}
		for _, r := range rows {
			var steps []grounding.PathStep
			if err := decodeJSON(r.Steps, &steps); err != nil {
				return nil, fmt.Errorf("store: derive coverage of trajectory %d: decode steps: %w", r.ID, err)
			}
			m := byID[r.ID]
			sup := 0
			for _, v := range m {
				sup += v
			}
			out[r.ID] = derived{path: grounding.CanonicalPath(steps, m, r.Success && r.Workflow), supervised: sup,
				tokens: grounding.CertifiedTokens(steps, m)}
		}
	}
	return out, nil
}

// refreshCoverage derives the coverage rows of ids again and stores them,
// no longer stale.
func refreshCoverage(ctx context.Context, tx *sqlx.Tx, ids []int64) error {
	ds, err := deriveCoverage(ctx, tx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		d, ok := ds[id]
		if !ok {
			continue
		}
		_, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE coverage_paths SET path = ?, path_id = ?, supervised = ?, tokens = ?, stale = ?
			WHERE trajectory_id = ?`), d.path, pathID(d.path), d.supervised, d.tokens, false, id)
		if err != nil {
			return storeErr(fmt.Sprintf("refresh coverage of trajectory %d", id), err)
		}
	}
	return nil
}

// bumpCoverage marks the coverage of a run changed (a recheck: steps may
// have changed without any mask) and forgets its change log, which only
// served as a signal.
func bumpCoverage(ctx context.Context, tx *sqlx.Tx, runID int64) error {
	if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE runs SET coverage_version = coverage_version + 1 WHERE id = ?`), runID); err != nil {
		return storeErr(fmt.Sprintf("bump coverage of run %d", runID), err)
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM coverage_changes WHERE run_id = ?`), runID)
	return storeErr(fmt.Sprintf("bump coverage of run %d", runID), err)
}

// inInt64 returns "(?, ?, …)" and the arguments for ids.
func inInt64(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return "(?" + strings.Repeat(", ?", max(len(ids), 1)-1) + ")", args
}

// normRuns sorts and deduplicates run ids; none is grounding.ErrInvalid.
func normRuns(runIDs []int64) ([]int64, error) {
	ids := slices.Clone(runIDs)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return nil, fmt.Errorf("store: coverage: no run chosen: %w", grounding.ErrInvalid)
	}
	return ids, nil
}

type versionRow struct {
	ID           int64 `db:"id"`
	Trajectories int   `db:"trajectories"`
	Version      int64 `db:"coverage_version"`
	Changes      int64 `db:"changes"`
}

// coverageVersions reads the invalidation counters of runs; an unknown run
// is grounding.ErrNotFound.
func coverageVersions(ctx context.Context, q queryer, ids []int64) ([]versionRow, error) {
	in, args := inInt64(ids)
	var rows []versionRow
	if err := sqlx.SelectContext(ctx, q, &rows, q.Rebind(versionsSQL(in)), args...); err != nil {
		return nil, storeErr("coverage version", err)
	}
	return checkVersions(rows, ids)
}

// versions is coverageVersions outside a transaction, prepared: the
// coverage page reads it on every view.
func (db *DB) versions(ctx context.Context, ids []int64) ([]versionRow, error) {
	in, args := inInt64(ids)
	var rows []versionRow
	if err := db.selIn(ctx, &rows, len(ids), versionsSQL(in), args...); err != nil {
		return nil, storeErr("coverage version", err)
	}
	return checkVersions(rows, ids)
}

func versionsSQL(in string) string {
	return `SELECT r.id, r.trajectories, r.coverage_version,
		COALESCE((SELECT MAX(c.id) FROM coverage_changes c WHERE c.run_id = r.id), 0) AS changes
		FROM runs r WHERE r.id IN ` + in + ` ORDER BY r.id`
}

func checkVersions(rows []versionRow, ids []int64) ([]versionRow, error) {
	if len(rows) != len(ids) {
		for _, id := range ids {
			if !slices.ContainsFunc(rows, func(r versionRow) bool { return r.ID == id }) {
				return nil, fmt.Errorf("store: coverage of run %d: %w", id, grounding.ErrNotFound)
			}
		}
	}
	return rows, nil
}

func versionKey(rows []versionRow) string {
	var b strings.Builder
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, "%d:%d:%d:%d", r.ID, r.Trajectories, r.Version, r.Changes)
	}
	return b.String()
}

// parseVersionKey reads a versionKey back; ok is false for anything else.
func parseVersionKey(key string) ([]versionRow, bool) {
	var out []versionRow
	for _, part := range strings.Split(key, ";") {
		var r versionRow
		if _, err := fmt.Sscanf(part, "%d:%d:%d:%d", &r.ID, &r.Trajectories, &r.Version, &r.Changes); err != nil {
			return nil, false
		}
		out = append(out, r)
	}
	return out, true
}

// CoverageChanges brings a pool read at version since up to date when only
// masks or workflow flags changed meanwhile (human verdicts): it returns
// the trajectories changed since then with their path, supervised decisions
// and tokens derived again (ID, Path, Supervised and Tokens set), the new
// version, and ok. When an import or a recheck happened, or since is not a
// version of these runs, ok is false and the caller reads the whole pool
// again (CoveragePool). One read-only transaction.
func (db *DB) CoverageChanges(ctx context.Context, runIDs []int64, since string) ([]grounding.PoolTrajectory, string, bool, error) {
	ids, err := normRuns(runIDs)
	if err != nil {
		return nil, "", false, err
	}
	old, ok := parseVersionKey(since)
	if !ok || len(old) != len(ids) {
		return nil, "", false, nil
	}
	tx, err := db.x.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", false, storeErr("coverage changes", err)
	}
	defer tx.Rollback()
	now, err := coverageVersions(ctx, tx, ids)
	if err != nil {
		return nil, "", false, err
	}
	var changed []int64
	for i, r := range now {
		o := old[i]
		if o.ID != r.ID || o.Trajectories != r.Trajectories || o.Version != r.Version || o.Changes > r.Changes {
			return nil, "", false, nil
		}
		if o.Changes == r.Changes {
			continue
		}
		var ts []int64
		if err := tx.SelectContext(ctx, &ts, tx.Rebind(`SELECT DISTINCT trajectory_id FROM coverage_changes
			WHERE run_id = ? AND id > ? AND id <= ? ORDER BY trajectory_id`), r.ID, o.Changes, r.Changes); err != nil {
			return nil, "", false, storeErr("coverage changes", err)
		}
		changed = append(changed, ts...)
	}
	ds, err := deriveCoverage(ctx, tx, changed)
	if err != nil {
		return nil, "", false, err
	}
	out := make([]grounding.PoolTrajectory, 0, len(changed))
	for _, id := range changed {
		if d, ok := ds[id]; ok {
			out = append(out, grounding.PoolTrajectory{ID: id, Path: d.path, Supervised: d.supervised, Tokens: d.tokens})
		}
	}
	return out, versionKey(now), true, nil
}

// CoverageVersion returns a key that changes whenever the coverage pool of
// the runs can change: an import into one of them, a recheck, a changed
// mask or success or workflow flag (four counters per run, one indexed
// query). An unknown run is grounding.ErrNotFound; no run
// grounding.ErrInvalid.
func (db *DB) CoverageVersion(ctx context.Context, runIDs []int64) (string, error) {
	ids, err := normRuns(runIDs)
	if err != nil {
		return "", err
	}
	rows, err := db.versions(ctx, ids)
	if err != nil {
		return "", err
	}
	return versionKey(rows), nil
}

// CoveragePool returns every trajectory of the runs as coverage sees it, in
// trajectory id order, and the CoverageVersion it reflects (read in the same
// transaction). Rows a verdict made stale are derived again from their
// steps and current masks. Trajectories imported before coverage existed
// get their rows computed and stored first, once. An unknown run is
// grounding.ErrNotFound.
func (db *DB) CoveragePool(ctx context.Context, runIDs []int64) ([]grounding.PoolTrajectory, string, error) {
	ids, err := normRuns(runIDs)
	if err != nil {
		return nil, "", err
	}
	for attempt := 0; ; attempt++ {
		pool, version, missing, err := db.readPool(ctx, ids)
		if err != nil || missing == 0 || attempt > 0 {
			return pool, version, err
		}
		if err := db.backfillCoverage(ctx, ids); err != nil {
			return nil, "", err
		}
	}
}

// readPool reads the pool in one read-only transaction and reports how many
// trajectories of the runs have no coverage row yet.
func (db *DB) readPool(ctx context.Context, ids []int64) ([]grounding.PoolTrajectory, string, int, error) {
	op := "coverage pool"
	tx, err := db.x.BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, "", 0, storeErr(op, err)
	}
	defer tx.Rollback()
	vrows, err := coverageVersions(ctx, tx, ids)
	if err != nil {
		return nil, "", 0, err
	}
	total := 0
	for _, v := range vrows {
		total += v.Trajectories
	}
	in, args := inInt64(ids)
	rows, err := tx.QueryContext(ctx, tx.Rebind(`SELECT c.trajectory_id, c.run_id, t.ext_id, t.parent_id, t.domain,
		c.path, c.supervised, c.tokens, c.stale
		FROM coverage_paths c JOIN trajectories t ON t.id = c.trajectory_id
		WHERE c.run_id IN `+in+` ORDER BY c.trajectory_id`), args...)
	if err != nil {
		return nil, "", 0, storeErr(op, err)
	}
	pool := make([]grounding.PoolTrajectory, 0, total)
	// Paths, parents and domains repeat across rows: they are read as raw
	// bytes and kept once each (a long path is allocated once, not once per
	// trajectory).
	intern := map[string]string{}
	in1 := func(b []byte) string {
		if v, ok := intern[string(b)]; ok {
			return v
		}
		s := string(b)
		intern[s] = s
		return s
	}
	var stale []int64
	var staleAt []int
	var parent, domain, path sql.RawBytes
	for rows.Next() {
		var t grounding.PoolTrajectory
		var isStale bool
		if err := rows.Scan(&t.ID, &t.Run, &t.ExtID, &parent, &domain, &path, &t.Supervised, &t.Tokens, &isStale); err != nil {
			rows.Close()
			return nil, "", 0, storeErr(op, err)
		}
		t.Parent, t.Domain, t.Path = in1(parent), in1(domain), in1(path)
		if isStale {
			stale = append(stale, t.ID)
			staleAt = append(staleAt, len(pool))
		}
		pool = append(pool, t)
	}
	if err := rows.Close(); err != nil {
		return nil, "", 0, storeErr(op, err)
	}
	if err := rows.Err(); err != nil {
		return nil, "", 0, storeErr(op, err)
	}
	if len(stale) > 0 {
		ds, err := deriveCoverage(ctx, tx, stale)
		if err != nil {
			return nil, "", 0, err
		}
		for k, id := range stale {
			if d, ok := ds[id]; ok {
				t := &pool[staleAt[k]]
				t.Path, t.Supervised, t.Tokens = in1([]byte(d.path)), d.supervised, d.tokens
			}
		}
	}
	return pool, versionKey(vrows), total - len(pool), nil
}

// backfillCoverage computes the coverage rows of the runs' trajectories that
// have none (imported before migration 00008) from their stored messages
// and decisions, in batches.
func (db *DB) backfillCoverage(ctx context.Context, runIDs []int64) error {
	in, args := inInt64(runIDs)
	var ids []struct {
		ID    int64 `db:"id"`
		RunID int64 `db:"run_id"`
	}
	if err := db.x.SelectContext(ctx, &ids, db.x.Rebind(`SELECT t.id, t.run_id FROM trajectories t
		WHERE t.run_id IN `+in+` AND NOT EXISTS (SELECT 1 FROM coverage_paths c WHERE c.trajectory_id = t.id) ORDER BY t.id`), args...); err != nil {
		return storeErr("backfill coverage", err)
	}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), recheckBatch)]
		ids = ids[len(batch):]
		type computed struct {
			id, run int64
			steps   []grounding.PathStep
		}
		var cs []computed
		for _, row := range batch {
			t, err := db.LoadTrajectory(ctx, row.ID)
			if err != nil {
				return err
			}
			stored, err := db.Decisions(ctx, row.ID, 0, 0)
			if err != nil {
				return err
			}
			ds := make([]grounding.DecisionResult, len(stored))
			for i, s := range stored {
				ds[i] = grounding.DecisionResult{Ordinal: s.Ordinal, Message: s.Message, Call: s.Call, Tool: s.Tool,
					Observation: s.Observation, Action: s.Action, Reasons: s.Reasons, Args: s.Args}
			}
			cs = append(cs, computed{row.ID, row.RunID, grounding.PathSteps(t, ds)})
		}
		tx, err := db.x.BeginTxx(ctx, nil)
		if err != nil {
			return storeErr("backfill coverage", err)
		}
		var done []int64
		for _, c := range cs {
			js, err := encodeJSON(nonNil(c.steps))
			if err != nil {
				tx.Rollback()
				return err
			}
			// DO NOTHING: a concurrent import or recheck may have written
			// the row meanwhile, and its row is at least as new.
			res, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO coverage_paths (trajectory_id, run_id, steps, stale) VALUES (?, ?, ?, ?)
				ON CONFLICT (trajectory_id) DO NOTHING`), c.id, c.run, js, true)
			if err != nil {
				tx.Rollback()
				return storeErr("backfill coverage", err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				done = append(done, c.id)
			}
		}
		if err := refreshCoverage(ctx, tx, done); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return storeErr("backfill coverage: commit", err)
		}
	}
	return nil
}

// CoverageScales returns the project's model scales in display order.
func (db *DB) CoverageScales(ctx context.Context) ([]grounding.Scale, error) {
	var rows []grounding.Scale
	if err := db.x.SelectContext(ctx, &rows, `SELECT name, depth FROM coverage_scales ORDER BY position, name`); err != nil {
		return nil, storeErr("coverage scales", err)
	}
	return rows, nil
}

// SaveCoverageScale adds scale s, or sets the depth of the scale with the
// same name (compared without case, the new spelling kept). An invalid scale
// is grounding.ErrInvalid.
func (db *DB) SaveCoverageScale(ctx context.Context, s grounding.Scale) error {
	s.Name = strings.TrimSpace(s.Name)
	if err := s.Validate(); err != nil {
		return fmt.Errorf("store: save scale: %w", err)
	}
	op := fmt.Sprintf("save scale %q", s.Name)
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return storeErr(op, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE coverage_scales SET name = ?, depth = ? WHERE LOWER(name) = LOWER(?)`), s.Name, s.Depth, s.Name)
	if err != nil {
		return storeErr(op, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		_, err = tx.ExecContext(ctx, tx.Rebind(`INSERT INTO coverage_scales (name, depth, position)
			SELECT ?, ?, COALESCE(MAX(position), 0) + 1 FROM coverage_scales`), s.Name, s.Depth)
		if err != nil {
			return storeErr(op, err)
		}
	}
	return storeErr(op, tx.Commit())
}

// DeleteCoverageScale removes the scale called name (without case), or
// returns grounding.ErrNotFound. Saved views keep the scale they were made
// for.
func (db *DB) DeleteCoverageScale(ctx context.Context, name string) error {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM coverage_scales WHERE LOWER(name) = LOWER(?)`), strings.TrimSpace(name))
	if err != nil {
		return storeErr(fmt.Sprintf("delete scale %q", name), err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("store: delete scale %q: %w", name, grounding.ErrNotFound)
	}
	return nil
}

var viewMemberColumns = []string{"view_id", "trajectory_id", "run_id", "parent_id", "stage"}

// SaveView stores v (name, scale, budget, method, seed, runs, created_by)
// with its members in one transaction: all or nothing. A name invalid by
// grounding.ValidateViewName, no runs or no members is grounding.ErrInvalid;
// a name already used by a view of one of the runs is grounding.ErrConflict,
// with the run named in the message. The result has ID, Runs (sorted),
// Parents, Trajectories and CreatedAt set.
func (db *DB) SaveView(ctx context.Context, v grounding.CoverageView, members []grounding.ViewMember) (grounding.CoverageView, error) {
	v.Name = strings.TrimSpace(v.Name)
	if err := grounding.ValidateViewName(v.Name); err != nil {
		return grounding.CoverageView{}, fmt.Errorf("store: save view: %w", err)
	}
	runs, err := normRuns(v.Runs)
	if err != nil {
		return grounding.CoverageView{}, err
	}
	if len(members) == 0 {
		return grounding.CoverageView{}, fmt.Errorf("store: save view %q: no trajectories selected: %w", v.Name, grounding.ErrInvalid)
	}
	if v.Method != grounding.MethodStructured && v.Method != grounding.MethodRandom {
		return grounding.CoverageView{}, fmt.Errorf("store: save view %q: unknown method %q: %w", v.Name, v.Method, grounding.ErrInvalid)
	}
	v.Runs = runs
	op := fmt.Sprintf("save view %q", v.Name)
	conn, tx, err := db.beginBulk(ctx)
	if err != nil {
		return grounding.CoverageView{}, storeErr(op, err)
	}
	defer conn.Close()
	defer tx.Rollback()
	v.CreatedAt = now()
	in, args := inInt64(runs)
	var taken []string
	if err := tx.SelectContext(ctx, &taken, tx.Rebind(`SELECT r.name FROM coverage_view_runs v JOIN runs r ON r.id = v.run_id
		WHERE v.name = ? AND v.run_id IN `+in+` ORDER BY r.name`), append([]any{v.Name}, args...)...); err != nil {
		return grounding.CoverageView{}, storeErr(op, err)
	}
	if len(taken) > 0 {
		return grounding.CoverageView{}, fmt.Errorf("store: %s: run %q already has a view with this name: %w", op, taken[0], grounding.ErrConflict)
	}
	parents := map[string]bool{}
	for _, m := range members {
		parents[grounding.ParentKey(m.RunID, m.Parent)] = true
		if !slices.Contains(runs, m.RunID) {
			return grounding.CoverageView{}, fmt.Errorf("store: %s: trajectory %d is in run %d, not one of the view's runs: %w", op, m.TrajectoryID, m.RunID, grounding.ErrInvalid)
		}
	}
	v.Parents, v.Trajectories = len(parents), len(members)
	var createdBy any
	if v.CreatedBy != 0 {
		createdBy = v.CreatedBy
	}
	err = tx.GetContext(ctx, &v.ID, tx.Rebind(`INSERT INTO coverage_views (name, scale, depth, budget, method, seed, parents, trajectories, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		v.Name, v.Scale.Name, v.Scale.Depth, v.Budget, v.Method, int64(v.Seed), v.Parents, v.Trajectories, createdBy, dbTime{v.CreatedAt})
	if err != nil {
		return grounding.CoverageView{}, storeErr(op, err)
	}
	for _, run := range runs {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO coverage_view_runs (view_id, run_id, name) VALUES (?, ?, ?)`), v.ID, run, v.Name); err != nil {
			return grounding.CoverageView{}, storeErr(op, err)
		}
	}
	vals := make([]any, 0, len(members)*len(viewMemberColumns))
	for _, m := range members {
		vals = append(vals, v.ID, m.TrajectoryID, m.RunID, cleanText(m.Parent), m.Stage)
	}
	st := newStmts(conn, tx)
	defer st.close()
	if err := db.d.bulk(ctx, st, &db.d, "coverage_view_members", viewMemberColumns, vals); err != nil {
		return grounding.CoverageView{}, storeErr(op+": members", err)
	}
	if err := tx.Commit(); err != nil {
		return grounding.CoverageView{}, storeErr(op+": commit", err)
	}
	return v, nil
}

type viewRow struct {
	ID           int64          `db:"id"`
	Name         string         `db:"name"`
	Scale        string         `db:"scale"`
	Depth        int            `db:"depth"`
	Budget       int            `db:"budget"`
	Method       string         `db:"method"`
	Seed         int64          `db:"seed"`
	Parents      int            `db:"parents"`
	Trajectories int            `db:"trajectories"`
	CreatedBy    sql.NullInt64  `db:"created_by"`
	CreatedName  sql.NullString `db:"created_by_name"`
	CreatedAt    dbTime         `db:"created_at"`
}

const viewSelect = `SELECT v.id, v.name, v.scale, v.depth, v.budget, v.method, v.seed, v.parents, v.trajectories,
	v.created_by, u.name AS created_by_name, v.created_at
	FROM coverage_views v LEFT JOIN users u ON u.id = v.created_by`

// views loads the views q selects and their runs.
func (db *DB) views(ctx context.Context, op, q string, args ...any) ([]grounding.CoverageView, error) {
	var rows []viewRow
	if err := db.selIn(ctx, &rows, len(args), q, args...); err != nil {
		return nil, storeErr(op, err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	in, iargs := inInt64(ids)
	var vr []struct {
		ViewID int64 `db:"view_id"`
		RunID  int64 `db:"run_id"`
	}
	if err := db.selIn(ctx, &vr, len(ids), `SELECT view_id, run_id FROM coverage_view_runs WHERE view_id IN `+in+` ORDER BY run_id`, iargs...); err != nil {
		return nil, storeErr(op, err)
	}
	out := make([]grounding.CoverageView, len(rows))
	for i, r := range rows {
		out[i] = grounding.CoverageView{ID: r.ID, Name: r.Name, Scale: grounding.Scale{Name: r.Scale, Depth: r.Depth},
			Budget: r.Budget, Method: r.Method, Seed: uint64(r.Seed), Parents: r.Parents, Trajectories: r.Trajectories,
			CreatedBy: r.CreatedBy.Int64, CreatedByName: r.CreatedName.String, CreatedAt: r.CreatedAt.Time}
		for _, x := range vr {
			if x.ViewID == r.ID {
				out[i].Runs = append(out[i].Runs, x.RunID)
			}
		}
	}
	return out, nil
}

// Views lists the views of any of the runs (every view when runIDs is
// empty), newest first.
func (db *DB) Views(ctx context.Context, runIDs []int64) ([]grounding.CoverageView, error) {
	if len(runIDs) == 0 {
		return db.views(ctx, "list views", viewSelect+` ORDER BY v.created_at DESC, v.id DESC`)
	}
	in, args := inInt64(runIDs)
	return db.views(ctx, "list views", viewSelect+` WHERE v.id IN (SELECT view_id FROM coverage_view_runs WHERE run_id IN `+in+`)
		ORDER BY v.created_at DESC, v.id DESC`, args...)
}

// View returns the view with this id, or grounding.ErrNotFound.
func (db *DB) View(ctx context.Context, id int64) (grounding.CoverageView, error) {
	vs, err := db.views(ctx, fmt.Sprintf("view %d", id), viewSelect+` WHERE v.id = ?`, id)
	if err != nil {
		return grounding.CoverageView{}, err
	}
	if len(vs) == 0 {
		return grounding.CoverageView{}, fmt.Errorf("store: view %d: %w", id, grounding.ErrNotFound)
	}
	return vs[0], nil
}

// ViewByName returns the view of run runID called name, or
// grounding.ErrNotFound. Exports restricted to a view start here.
func (db *DB) ViewByName(ctx context.Context, runID int64, name string) (grounding.CoverageView, error) {
	vs, err := db.views(ctx, fmt.Sprintf("view %q of run %d", name, runID),
		viewSelect+` WHERE v.id = (SELECT view_id FROM coverage_view_runs WHERE run_id = ? AND name = ?)`, runID, strings.TrimSpace(name))
	if err != nil {
		return grounding.CoverageView{}, err
	}
	if len(vs) == 0 {
		return grounding.CoverageView{}, fmt.Errorf("store: view %q of run %d: %w", name, runID, grounding.ErrNotFound)
	}
	return vs[0], nil
}

// ViewTrajectoryIDs returns the ids of the view's trajectories in run
// runID (every run of the view when runID is 0), ascending. An unknown view
// has none. Exports restricted to a view may also join
// coverage_view_members (view_id, trajectory_id) directly.
func (db *DB) ViewTrajectoryIDs(ctx context.Context, viewID, runID int64) ([]int64, error) {
	q := `SELECT trajectory_id FROM coverage_view_members WHERE view_id = ?`
	args := []any{viewID}
	if runID != 0 {
		q += ` AND run_id = ?`
		args = append(args, runID)
	}
	var ids []int64
	if err := db.x.SelectContext(ctx, &ids, db.x.Rebind(q+` ORDER BY trajectory_id`), args...); err != nil {
		return nil, storeErr(fmt.Sprintf("trajectories of view %d", viewID), err)
	}
	return ids, nil
}

// ViewMembers returns the view's trajectories with their ext id, parent,
// stage and current certified target tokens (derived again where a verdict
// changed them), in (run, parent, ext id) order. Weights follow from
// grounding.ParentNormalized(grounding.MemberWeights(members)).
func (db *DB) ViewMembers(ctx context.Context, viewID int64) ([]grounding.ViewMember, error) {
	op := fmt.Sprintf("members of view %d", viewID)
	var rows []struct {
		ID     int64  `db:"trajectory_id"`
		RunID  int64  `db:"run_id"`
		ExtID  string `db:"ext_id"`
		Parent string `db:"parent_id"`
		Stage  string `db:"stage"`
		Tokens int    `db:"tokens"`
		Stale  bool   `db:"stale"`
	}
	if err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT m.trajectory_id, m.run_id, t.ext_id, m.parent_id, m.stage,
		COALESCE(c.tokens, 0) AS tokens, COALESCE(c.stale, ?) AS stale
		FROM coverage_view_members m JOIN trajectories t ON t.id = m.trajectory_id
		LEFT JOIN coverage_paths c ON c.trajectory_id = m.trajectory_id
		WHERE m.view_id = ?`), false, viewID); err != nil {
		return nil, storeErr(op, err)
	}
	var stale []int64
	for _, r := range rows {
		if r.Stale {
			stale = append(stale, r.ID)
		}
	}
	ds, err := deriveCoverage(ctx, db.x, stale)
	if err != nil {
		return nil, err
	}
	out := make([]grounding.ViewMember, len(rows))
	for i, r := range rows {
		out[i] = grounding.ViewMember{TrajectoryID: r.ID, RunID: r.RunID, ExtID: r.ExtID, Parent: r.Parent, Stage: r.Stage, Tokens: r.Tokens}
		if d, ok := ds[r.ID]; ok {
			out[i].Tokens = d.tokens
		}
	}
	slices.SortFunc(out, func(a, b grounding.ViewMember) int {
		return cmp.Or(cmp.Compare(a.RunID, b.RunID), strings.Compare(a.Parent, b.Parent), strings.Compare(a.ExtID, b.ExtID))
	})
	return out, nil
}

// RunNames returns the names of runs by id (unknown ids are left out).
func (db *DB) RunNames(ctx context.Context, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	in, args := inInt64(ids)
	var rows []struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
	}
	if err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT id, name FROM runs WHERE id IN `+in), args...); err != nil {
		return nil, storeErr("run names", err)
	}
	for _, r := range rows {
		out[r.ID] = r.Name
	}
	return out, nil
}
