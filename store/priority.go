package store

import (
	"context"
	"fmt"
	"strings"

	"groundwork/grounding"
)

// PrioritizeByDeficit ranks the run's open queue items by what a human
// verdict there is worth to the pool (SPEC §4, issue "order by value"):
// each trajectory gets grounding.DeficitPriority of the canonical path it
// would reach if its pending decisions were approved, against the support
// that path has among the run's certified trajectories, at a model scale of
// target depth. Items a lead queued by hand stay ahead of all. It returns
// how many items it ranked; depth < 1 is grounding.ErrInvalid.
func (db *DB) PrioritizeByDeficit(ctx context.Context, runID int64, depth int) (int, error) {
	op := fmt.Sprintf("prioritize run %d by deficit", runID)
	if depth < 1 || depth > grounding.MaxScaleDepth {
		return 0, fmt.Errorf("store: %s: depth %d: %w", op, depth, grounding.ErrInvalid)
	}
	pool, _, err := db.CoveragePool(ctx, []int64{runID})
	if err != nil {
		return 0, err
	}
	support := map[string]int{}
	for _, t := range pool {
		if t.Path != "" {
			support[t.Path]++
		}
	}
	var items []struct {
		ID           int64  `db:"id"`
		TrajectoryID int64  `db:"trajectory_id"`
		Ordinal      int    `db:"ordinal"`
		Source       string `db:"source"`
	}
	if err := db.x.SelectContext(ctx, &items, db.x.Rebind(`SELECT id, trajectory_id, ordinal, source FROM queue_items
		WHERE run_id = ? AND state = ? ORDER BY trajectory_id, ordinal`), runID, grounding.QueueOpen); err != nil {
		return 0, storeErr(op, err)
	}
	pending := map[int64]map[int]bool{}
	var ids []int64
	for _, it := range items {
		if pending[it.TrajectoryID] == nil {
			pending[it.TrajectoryID] = map[int]bool{}
			ids = append(ids, it.TrajectoryID)
		}
		pending[it.TrajectoryID][it.Ordinal] = true
	}
	prio := map[int64]int{}
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
		if err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT c.trajectory_id, c.steps, t.success, t.workflow_ok
			FROM coverage_paths c JOIN trajectories t ON t.id = c.trajectory_id WHERE c.trajectory_id IN `+in), args...); err != nil {
			return 0, storeErr(op, err)
		}
		var masks []struct {
			ID      int64 `db:"trajectory_id"`
			Ordinal int   `db:"ordinal"`
			Mask    int   `db:"mask"`
		}
		if err := db.x.SelectContext(ctx, &masks, db.x.Rebind(`SELECT trajectory_id, ordinal, mask FROM decisions
			WHERE trajectory_id IN `+in+` ORDER BY trajectory_id, ordinal`), args...); err != nil {
			return 0, storeErr(op, err)
		}
		byID := map[int64][]int{}
		for _, m := range masks {
			byID[m.ID] = append(byID[m.ID], m.Mask)
		}
		for _, r := range rows {
			var steps []grounding.PathStep
			if err := decodeJSON(r.Steps, &steps); err != nil {
				return 0, fmt.Errorf("store: %s: trajectory %d: decode steps: %w", op, r.ID, err)
			}
			p := make([]bool, len(steps))
			for ord := range pending[r.ID] {
				if ord < len(p) {
					p[ord] = true
				}
			}
			path := grounding.PotentialPath(steps, byID[r.ID], p, r.Success && r.Workflow)
			d := depth
			if path == "" {
				d = 0 // no verdict here can certify the trajectory
			}
			prio[r.ID] = grounding.DeficitPriority(d, support[path], len(pending[r.ID]))
		}
	}

	tx, done, err := db.begin(ctx)
	if err != nil {
		return 0, storeErr(op, err)
	}
	defer done()
	q := db.q(tx)
	top := 0
	for _, it := range items {
		if it.Source == grounding.SourceAuto {
			top = max(top, prio[it.TrajectoryID])
		}
	}
	n := 0
	for _, it := range items {
		p := prio[it.TrajectoryID]
		if it.Source == grounding.SourceManual {
			p = top + 1
		}
		res, err := q.exec(ctx, `UPDATE queue_items SET priority = ? WHERE id = ? AND state = ?`, p, it.ID, grounding.QueueOpen)
		if err != nil {
			return 0, storeErr(op, err)
		}
		if k, _ := res.RowsAffected(); k > 0 {
			n++
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, storeErr(op, err)
	}
	return n, nil
}
