package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// recheckBatch is how many trajectories one recheck transaction rewrites:
// small enough that SQLite's write lock is never held for long.
const recheckBatch = 200

// LoadTrajectory rebuilds the canonical trajectory of a stored one: its
// header, tools, hidden entries and every message, in order. Checks run on
// it exactly as they ran at import.
func (db *DB) LoadTrajectory(ctx context.Context, id int64) (*grounding.Trajectory, error) {
	h, err := db.Trajectory(ctx, id)
	if err != nil {
		return nil, err
	}
	msgs, err := db.Messages(ctx, id, 0, h.Messages)
	if err != nil {
		return nil, err
	}
	success := h.Success
	t := &grounding.Trajectory{
		ID: h.ExtID, ParentID: h.ParentID, Domain: h.Domain,
		Source:  grounding.Source{Format: h.Format, File: h.SourceFile, Index: h.SourceIndex, Line: h.SourceLine},
		Request: h.Request, Tools: h.Tools, Reward: h.Reward, Success: &success,
		Messages: msgs, Hidden: h.Hidden, Meta: h.Meta,
	}
	return t, nil
}

// RecheckResult counts what a recheck did.
type RecheckResult struct {
	Trajectories int
	Decisions    int
	Changed      int // decisions whose automatic verdict changed
}

// Recheck runs check again on every trajectory of the run (every run when
// runID is 0) and stores the new automatic results, engine and profile
// versions. Human verdicts are kept: a decision with one keeps it as its
// effective verdict, and its mask follows R · workflow · the human's g (a
// human verdict overrides g_t, never R_τ or the workflow). Work is committed
// in batches; progress, if not nil, is called after each.
func (db *DB) Recheck(ctx context.Context, runID int64, check func(*grounding.Trajectory) grounding.Result, progress func(RecheckResult)) (RecheckResult, error) {
	var res RecheckResult
	var after int64
	runs := map[int64]bool{}
	for {
		var ids []struct {
			ID    int64 `db:"id"`
			RunID int64 `db:"run_id"`
		}
		q := `SELECT id, run_id FROM trajectories WHERE id > ?`
		args := []any{after}
		if runID != 0 {
			q += ` AND run_id = ?`
			args = append(args, runID)
		}
		q += ` ORDER BY id LIMIT ?`
		args = append(args, recheckBatch)
		if err := db.x.SelectContext(ctx, &ids, db.x.Rebind(q), args...); err != nil {
			return res, storeErr("recheck: list trajectories", err)
		}
		if len(ids) == 0 {
			break
		}
		type checked struct {
			id     int64
			result grounding.Result
			run    int64
			steps  []grounding.PathStep // coverage (store/coverage.go)
		}
		batch := make([]checked, 0, len(ids))
		for _, row := range ids {
			t, err := db.LoadTrajectory(ctx, row.ID)
			if err != nil {
				return res, err
			}
			r := check(t)
			if err := sameDecisions(grounding.Decisions(t), r); err != nil {
				return res, fmt.Errorf("store: recheck trajectory %d: %w", row.ID, err)
			}
			batch = append(batch, checked{row.ID, r, row.RunID, grounding.PathSteps(t, r.Decisions)})
			runs[row.RunID] = true
		}
		tx, err := db.x.BeginTxx(ctx, nil)
		if err != nil {
			return res, storeErr("recheck", err)
		}
		at := now()
		for _, c := range batch {
			n, err := saveCheck(ctx, tx, db.d.forUpdate, c.id, c.result, at)
			if err != nil {
				tx.Rollback()
				return res, err
			}
			res.Trajectories++
			res.Decisions += len(c.result.Decisions)
			res.Changed += n
			if err := writeCoverageSteps(ctx, tx, c.id, c.run, c.steps); err != nil {
				tx.Rollback()
				return res, err
			}
		}
		// The paths follow the new steps and the effective masks.
		done := make([]int64, len(batch))
		for i, c := range batch {
			done[i] = c.id
		}
		if err := refreshCoverage(ctx, tx, done); err != nil {
			tx.Rollback()
			return res, err
		}
		if err := tx.Commit(); err != nil {
			return res, storeErr("recheck: commit", err)
		}
		after = ids[len(ids)-1].ID
		if progress != nil {
			progress(res)
		}
	}
	// The run counters are summed once at the end: per batch it would scan
	// the run's trajectories again each time.
	tx, err := db.x.BeginTxx(ctx, nil)
	if err != nil {
		return res, storeErr("recheck", err)
	}
	defer tx.Rollback()
	for id := range runs {
		if err := recountRun(ctx, tx, &db.d, id); err != nil {
			return res, err
		}
		if err := bumpCoverage(ctx, tx, id); err != nil {
			return res, err
		}
	}
	if err := tx.Commit(); err != nil {
		return res, storeErr("recheck: commit", err)
	}
	// Best effort, as after an import: every decision row was rewritten.
	_ = db.analyzeGrown(ctx, map[string]int{"decisions": res.Decisions, "coverage_paths": res.Trajectories})
	return res, nil
}

// saveCheck stores a new automatic check of one trajectory and returns how
// many automatic verdicts changed.
//
// It takes the trajectory's locks in the order a settling verdict takes
// them (queue items, then decisions, then the trajectory): a verdict holds
// its item while it waits for the decision, and a recheck that had updated
// the decisions first and then reached for the items deadlocked with it on
// Postgres. forUpdate is the dialect's row-lock clause.
func saveCheck(ctx context.Context, tx *sqlx.Tx, forUpdate string, id int64, r grounding.Result, at time.Time) (int, error) {
	op := fmt.Sprintf("recheck trajectory %d", id)
	var items []int64
	if err := tx.SelectContext(ctx, &items, tx.Rebind(`SELECT id FROM queue_items WHERE trajectory_id = ? ORDER BY id`+forUpdate), id); err != nil {
		return 0, storeErr(op, err)
	}
	var old []struct {
		Ordinal int    `db:"ordinal"`
		Auto    string `db:"auto_verdict"`
	}
	if err := tx.SelectContext(ctx, &old, tx.Rebind(`SELECT ordinal, auto_verdict FROM decisions WHERE trajectory_id = ? ORDER BY ordinal`), id); err != nil {
		return 0, storeErr(op, err)
	}
	changed := 0
	for i, d := range r.Decisions {
		if i < len(old) && old[i].Auto != string(d.Verdict) {
			changed++
		}
		reasons, err := encodeJSON(nonNil(d.Reasons))
		if err != nil {
			return 0, err
		}
		args, question, err := evidenceJSON(d.Args)
		if err != nil {
			return 0, err
		}
		// With a human pass, the mask is R · workflow (g = 1); with a
		// human fail it is 0; otherwise the engine's.
		humanPass := 0
		if d.Workflow && r.R == 1 {
			humanPass = 1
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE decisions SET action = ?, e = ?, v = ?, g = ?, flow_ok = ?,
			auto_verdict = ?, queued = ?, reasons = ?, args = ?, question = ?, detail = ?,
			verdict = CASE WHEN human_verdict <> '' THEN human_verdict ELSE ? END,
			mask = CASE WHEN human_verdict = 'pass' THEN ? WHEN human_verdict = 'fail' THEN 0 ELSE ? END
			WHERE trajectory_id = ? AND ordinal = ?`),
			d.Action, d.E, d.V, d.G, d.Workflow, string(d.Verdict), d.Queued, cleanJSON(reasons), args, question, cleanText(d.Detail),
			string(d.Verdict), humanPass, d.Mask, id, d.Ordinal)
		if err != nil {
			return 0, storeErr(op, err)
		}
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM decision_reasons WHERE trajectory_id = ?`), id); err != nil {
		return 0, storeErr(op, err)
	}
	for _, d := range r.Decisions {
		for _, reason := range dedupe(d.Reasons) {
			if _, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO decision_reasons (trajectory_id, ordinal, run_id, reason, tool)
				SELECT trajectory_id, ordinal, run_id, ?, tool FROM decisions WHERE trajectory_id = ? AND ordinal = ?`), reason, id, d.Ordinal); err != nil {
				return 0, storeErr(op, err)
			}
		}
	}
	flow, err := encodeJSON(nonNil(r.Reasons))
	if err != nil {
		return 0, err
	}
	violations, err := encodeJSON(nonNil(r.Violations))
	if err != nil {
		return 0, err
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE trajectories SET checked_at = ?, engine_version = ?, profile = ?,
		workflow_ok = ?, flow_reasons = ?, violations = ? WHERE id = ?`),
		dbTime{at}, r.EngineVersion, r.Profile+"@"+r.ProfileVersion, r.Workflow, cleanJSON(flow), cleanJSON(violations), id)
	if err != nil {
		return 0, storeErr(op, err)
	}
	if err := syncQueue(ctx, tx, id, r, at); err != nil {
		return 0, err
	}
	if err := recountTrajectory(ctx, tx, id); err != nil {
		return 0, err
	}
	return changed, nil
}

// syncQueue keeps a trajectory's queue items in step with a new check: a
// decision that became queued (and has no human verdict) gets an automatic
// item, unless it has one already; an automatic item whose decision is no
// longer queued leaves the queue while nobody has touched it (an item with
// events is history and stays); the open automatic items take the new
// priority.
func syncQueue(ctx context.Context, tx *sqlx.Tx, id int64, r grounding.Result, at time.Time) error {
	op := fmt.Sprintf("recheck trajectory %d: queue", id)
	queued := 0
	for _, d := range r.Decisions {
		if d.Queued {
			queued++
		}
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(`INSERT INTO queue_items (run_id, trajectory_id, ordinal, source, why, priority, required, state, created_at)
		SELECT d.run_id, d.trajectory_id, d.ordinal, ?, d.reasons, ?, r.overlap, ?, ?
		FROM decisions d JOIN runs r ON r.id = d.run_id
		WHERE d.trajectory_id = ? AND d.queued = ? AND d.human_verdict = ''
		ON CONFLICT (trajectory_id, ordinal) DO NOTHING`),
		grounding.SourceAuto, queued, grounding.QueueOpen, dbTime{at}, id, true)
	if err != nil {
		return storeErr(op, err)
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`DELETE FROM queue_items WHERE trajectory_id = ? AND source = ? AND state = ?
		AND NOT EXISTS (SELECT 1 FROM decisions d WHERE d.trajectory_id = queue_items.trajectory_id AND d.ordinal = queue_items.ordinal AND d.queued = ?)
		AND NOT EXISTS (SELECT 1 FROM verdict_events e WHERE e.item_id = queue_items.id)`),
		id, grounding.SourceAuto, grounding.QueueOpen, true)
	if err != nil {
		return storeErr(op, err)
	}
	_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE queue_items SET priority = ? WHERE trajectory_id = ? AND source = ? AND state = ?`),
		queued, id, grounding.SourceAuto, grounding.QueueOpen)
	return storeErr(op, err)
}

// recountTrajectory derives a trajectory's verdict counts from its
// decisions' effective verdicts and masks. n_queued counts the queued
// decisions still waiting for a human.
func recountTrajectory(ctx context.Context, tx *sqlx.Tx, id int64) error {
	_, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE trajectories SET
		n_pass       = (SELECT COUNT(*) FROM decisions d WHERE d.trajectory_id = trajectories.id AND d.verdict = 'pass'),
		n_fail       = (SELECT COUNT(*) FROM decisions d WHERE d.trajectory_id = trajectories.id AND d.verdict = 'fail'),
		n_ambiguous  = (SELECT COUNT(*) FROM decisions d WHERE d.trajectory_id = trajectories.id AND d.verdict = 'ambiguous'),
		n_queued     = (SELECT COUNT(*) FROM decisions d WHERE d.trajectory_id = trajectories.id AND d.queued = ? AND d.human_verdict = ''),
		n_supervised = (SELECT COALESCE(SUM(d.mask), 0) FROM decisions d WHERE d.trajectory_id = trajectories.id),
		certified    = (success AND workflow_ok AND (SELECT COALESCE(SUM(d.mask), 0) FROM decisions d WHERE d.trajectory_id = trajectories.id) > 0)
		WHERE id = ?`), true, id)
	if err != nil {
		return storeErr(fmt.Sprintf("recount trajectory %d", id), err)
	}
	return nil
}

// recountRun sums a run's check counters from its trajectories and drops
// the pending differences of human verdicts (run_count_deltas), which those
// sums hold already. On Postgres verdicts may settle meanwhile: it first
// waits for the run's row, so a verdict folding its change into the row
// has committed and the ones after it append deltas; then one statement
// drops the deltas and sums the trajectories from one snapshot, so each
// verdict is either in both (dropped and summed) or in neither (its delta
// stays). With two statements, a verdict between them was counted twice.
// SQLite's writer is alone, and its CTEs cannot delete: two statements.
func recountRun(ctx context.Context, tx *sqlx.Tx, d *dialect, runID int64) error {
	op := fmt.Sprintf("recount run %d", runID)
	const sums = `UPDATE runs SET
		n_pass       = (SELECT COALESCE(SUM(n_pass), 0) FROM trajectories t WHERE t.run_id = runs.id),
		n_fail       = (SELECT COALESCE(SUM(n_fail), 0) FROM trajectories t WHERE t.run_id = runs.id),
		n_ambiguous  = (SELECT COALESCE(SUM(n_ambiguous), 0) FROM trajectories t WHERE t.run_id = runs.id),
		n_queued     = (SELECT COALESCE(SUM(n_queued), 0) FROM trajectories t WHERE t.run_id = runs.id),
		n_supervised = (SELECT COALESCE(SUM(n_supervised), 0) FROM trajectories t WHERE t.run_id = runs.id),
		n_certified  = (SELECT COUNT(*) FROM trajectories t WHERE t.run_id = runs.id AND t.certified = ?)
		WHERE id = ?`
	if d.name != "postgres" {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM run_count_deltas WHERE run_id = ?`), runID); err != nil {
			return storeErr(op, err)
		}
		_, err := tx.ExecContext(ctx, tx.Rebind(sums), true, runID)
		return storeErr(op, err)
	}
	var id int64
	if err := tx.GetContext(ctx, &id, tx.Rebind(`SELECT id FROM runs WHERE id = ?`+d.forUpdate), runID); err != nil {
		return storeErr(op, err)
	}
	_, err := tx.ExecContext(ctx, tx.Rebind(`WITH gone AS (DELETE FROM run_count_deltas WHERE run_id = ?) `+sums), runID, true, runID)
	return storeErr(op, err)
}
