package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

type eventRow struct {
	ID           int64         `db:"id"`
	ItemID       sql.NullInt64 `db:"item_id"`
	RunID        int64         `db:"run_id"`
	TrajectoryID int64         `db:"trajectory_id"`
	Ordinal      int           `db:"ordinal"`
	UserID       int64         `db:"user_id"`
	UserName     string        `db:"user_name"`
	Kind         string        `db:"kind"`
	Verdict      string        `db:"verdict"`
	PrevVerdict  string        `db:"prev_verdict"`
	Note         string        `db:"note"`
	Undoes       sql.NullInt64 `db:"undoes"`
	CreatedAt    dbTime        `db:"created_at"`
}

func (r eventRow) event() grounding.VerdictEvent {
	return grounding.VerdictEvent{
		ID: r.ID, ItemID: r.ItemID.Int64, RunID: r.RunID, TrajectoryID: r.TrajectoryID, Ordinal: r.Ordinal,
		UserID: r.UserID, UserName: r.UserName, Kind: r.Kind, Verdict: grounding.Verdict(r.Verdict),
		PrevVerdict: grounding.Verdict(r.PrevVerdict), Note: r.Note, Undoes: r.Undoes.Int64, CreatedAt: r.CreatedAt.Time,
	}
}

const eventSelect = `SELECT e.id, e.item_id, e.run_id, e.trajectory_id, e.ordinal, e.user_id, u.name AS user_name,
	e.kind, e.verdict, e.prev_verdict, e.note, e.undoes, e.created_at
	FROM verdict_events e JOIN users u ON u.id = e.user_id`

// events is itemEvents inside a transaction, prepared.
func (t txq) events(ctx context.Context, itemID int64) ([]grounding.VerdictEvent, error) {
	var rows []eventRow
	if err := t.sel(ctx, &rows, eventSelect+` WHERE e.item_id = ? ORDER BY e.id`, itemID); err != nil {
		return nil, storeErr(fmt.Sprintf("events of item %d", itemID), err)
	}
	out := make([]grounding.VerdictEvent, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

func itemEvents(ctx context.Context, q queryer, itemID int64) ([]grounding.VerdictEvent, error) {
	var rows []eventRow
	if err := sqlx.SelectContext(ctx, q, &rows, q.Rebind(eventSelect+` WHERE e.item_id = ? ORDER BY e.id`), itemID); err != nil {
		return nil, storeErr(fmt.Sprintf("events of item %d", itemID), err)
	}
	out := make([]grounding.VerdictEvent, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

// addEvent appends e to the history and returns it with its id.
func addEvent(ctx context.Context, tx *sqlx.Tx, e grounding.VerdictEvent) (grounding.VerdictEvent, error) {
	return txq{tx: tx}.addEvent(ctx, e)
}

func (t txq) addEvent(ctx context.Context, e grounding.VerdictEvent) (grounding.VerdictEvent, error) {
	var item, undoes any
	if e.ItemID != 0 {
		item = e.ItemID
	}
	if e.Undoes != 0 {
		undoes = e.Undoes
	}
	query := `INSERT INTO verdict_events
		(item_id, run_id, trajectory_id, ordinal, user_id, kind, verdict, prev_verdict, note, undoes, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`
	get := func(dest any, args ...any) error { return t.tx.GetContext(ctx, dest, t.tx.Rebind(query), args...) }
	if t.db != nil {
		get = func(dest any, args ...any) error { return t.get(ctx, dest, query, args...) }
	}
	err := get(&e.ID,
		item, e.RunID, e.TrajectoryID, e.Ordinal, e.UserID, e.Kind, string(e.Verdict), string(e.PrevVerdict),
		cleanText(e.Note), undoes, dbTime{e.CreatedAt})
	if err != nil {
		return e, storeErr("record "+e.Kind, err)
	}
	return e, nil
}

func (it lockedItem) event(kind string, userID int64, at time.Time) grounding.VerdictEvent {
	return grounding.VerdictEvent{ItemID: it.ID, RunID: it.RunID, TrajectoryID: it.TrajectoryID, Ordinal: it.Ordinal,
		UserID: userID, Kind: kind, CreatedAt: at}
}

func validVerdict(v grounding.Verdict) bool {
	return v == grounding.VerdictPass || v == grounding.VerdictFail
}

// Submit records the user's verdict (pass: grounded, supervise it; fail:
// not inferable from what the agent saw) on an item they hold, with an
// optional note, and settles the item in the same transaction: k agreeing
// verdicts set the decision's human verdict, effective verdict, mask,
// decided_by and decided_at and move the trajectory and run counters; k
// that disagree send the item to review (conflict).
//
// Submitting again while the user's verdict on the item stands (a double
// click, a second tab) records nothing and returns that verdict with
// Repeated set. A claim that expired is taken again if the item still has a
// free slot; otherwise grounding.ErrClaimExpired. No claim:
// grounding.ErrNotClaimed; an item that no longer takes verdicts:
// grounding.ErrItemClosed; a verdict other than pass or fail, or a note
// over grounding.MaxNote: grounding.ErrInvalid.
func (db *DB) Submit(ctx context.Context, userID, itemID int64, verdict grounding.Verdict, note string, lease time.Duration) (grounding.SubmitResult, error) {
	res, _, _, err := db.submit(ctx, userID, itemID, verdict, note, lease, nil)
	return res, err
}

// SubmitNext is Submit followed by Next with filter f in the same
// transaction, as the review screen does on every key press: one commit
// instead of two. found is false when nothing is left for the user. When
// the verdict is refused nothing is claimed either.
func (db *DB) SubmitNext(ctx context.Context, userID, itemID int64, verdict grounding.Verdict, note string, f grounding.QueueFilter, lease time.Duration) (grounding.SubmitResult, grounding.Claim, bool, error) {
	return db.submit(ctx, userID, itemID, verdict, note, lease, &f)
}

func (db *DB) submit(ctx context.Context, userID, itemID int64, verdict grounding.Verdict, note string, lease time.Duration, next *grounding.QueueFilter) (grounding.SubmitResult, grounding.Claim, bool, error) {
	op := fmt.Sprintf("verdict of user %d on item %d", userID, itemID)
	fail := func(err error) (grounding.SubmitResult, grounding.Claim, bool, error) {
		return grounding.SubmitResult{}, grounding.Claim{}, false, err
	}
	if !validVerdict(verdict) {
		return fail(fmt.Errorf("store: %s: verdict %q is neither pass nor fail: %w", op, verdict, grounding.ErrInvalid))
	}
	note = strings.TrimSpace(note)
	if len(note) > grounding.MaxNote {
		return fail(fmt.Errorf("store: %s: the note is longer than %d bytes: %w", op, grounding.MaxNote, grounding.ErrInvalid))
	}
	lease = leaseOr(lease)
	tx, done, err := db.begin(ctx)
	if err != nil {
		return fail(storeErr(op, err))
	}
	defer done()
	q := db.q(tx)
	at := db.now()
	res, err := db.submitIn(ctx, q, userID, itemID, verdict, note, at, lease)
	if err != nil {
		return fail(err)
	}
	var c grounding.Claim
	found := false
	if next != nil {
		if c, found, err = db.next(ctx, q, userID, *next, at, lease); err != nil {
			return fail(storeErr(op+": next", err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(storeErr(op, err))
	}
	return res, c, found, nil
}

// submitIn records and settles a verdict inside the caller's transaction.
func (db *DB) submitIn(ctx context.Context, q txq, userID, itemID int64, verdict grounding.Verdict, note string, at time.Time, lease time.Duration) (grounding.SubmitResult, error) {
	op := fmt.Sprintf("verdict of user %d on item %d", userID, itemID)
	it, evs, err := db.lockItemEvents(ctx, q.tx, itemID, userID)
	if err != nil {
		return grounding.SubmitResult{}, err
	}
	c, err := db.holdClaim(ctx, q.tx, it, userID, at, lease)
	if err != nil {
		return grounding.SubmitResult{}, fmt.Errorf("store: %s: %w", op, err)
	}
	before := grounding.Settle(evs, it.Required)
	if c.Verdict != "" {
		// Already judged: report the standing verdict, record nothing.
		for _, v := range before.Verdicts {
			if v.UserID == userID {
				return grounding.SubmitResult{Event: v, Repeated: true, State: before.State, Human: before.Human,
					Closed: before.ClosedWithOthers(userID)}, nil
			}
		}
		return grounding.SubmitResult{}, fmt.Errorf("store: %s: claim says %q but no standing verdict", op, c.Verdict)
	}
	e := it.event(grounding.EventVerdict, userID, at)
	e.Verdict, e.PrevVerdict, e.Note = verdict, before.Human, note
	if db.d.recordVerdict != "" {
		err = q.get(ctx, &e.ID, db.d.recordVerdict, e.ItemID, e.RunID, e.TrajectoryID, e.Ordinal, e.UserID, e.Kind,
			string(e.Verdict), string(e.PrevVerdict), cleanText(e.Note), nil, dbTime{e.CreatedAt},
			string(verdict), dbTime{at}, it.ID, userID)
		if err != nil {
			return grounding.SubmitResult{}, storeErr(op, err)
		}
	} else {
		if e, err = q.addEvent(ctx, e); err != nil {
			return grounding.SubmitResult{}, err
		}
		if _, err := q.exec(ctx, `UPDATE claims SET verdict = ?, expires_at = ? WHERE item_id = ? AND user_id = ?`,
			string(verdict), dbTime{at}, it.ID, userID); err != nil {
			return grounding.SubmitResult{}, storeErr(op, err)
		}
	}
	after := grounding.Settle(append(evs, e), it.Required)
	if err := db.apply(ctx, q.tx, it, after, at); err != nil {
		return grounding.SubmitResult{}, err
	}
	return grounding.SubmitResult{Event: e, State: after.State, Human: after.Human, Closed: after.ClosedWithOthers(userID)}, nil
}

// Skip records that the user passes the item on: it is released for others
// and never handed to this user again in this round. Skipping an item the
// user already judged is grounding.ErrItemClosed (undo first); one they do
// not hold, grounding.ErrNotClaimed. Skipping twice records one skip.
func (db *DB) Skip(ctx context.Context, userID, itemID int64) error {
	op := fmt.Sprintf("skip of item %d by user %d", itemID, userID)
	tx, done, err := db.begin(ctx)
	if err != nil {
		return storeErr(op, err)
	}
	defer done()
	at := db.now()
	it, err := db.lockItem(ctx, tx, itemID)
	if err != nil {
		return err
	}
	var rows []claimRow
	if err := tx.SelectContext(ctx, &rows, tx.Rebind(`SELECT verdict, skipped, expires_at FROM claims WHERE item_id = ? AND user_id = ?`), itemID, userID); err != nil {
		return storeErr(op, err)
	}
	switch {
	case len(rows) == 0:
		return fmt.Errorf("store: %s: %w", op, grounding.ErrNotClaimed)
	case rows[0].Skipped:
		return nil // a repeated skip
	case rows[0].Verdict != "":
		return fmt.Errorf("store: %s: already judged: %w", op, grounding.ErrItemClosed)
	}
	if _, err := addEvent(ctx, tx, it.event(grounding.EventSkip, userID, at)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE claims SET skipped = ?, expires_at = ? WHERE item_id = ? AND user_id = ?`),
		true, dbTime{at}, itemID, userID); err != nil {
		return storeErr(op, err)
	}
	return storeErr(op, tx.Commit())
}

// Undo cancels the user's latest standing verdict, skip (or, for a lead,
// final verdict) with a new undo event; nothing is deleted. A skip taken
// back claims its item again, if it is still open and no one took its
// slot meanwhile (grounding.ErrItemClosed, grounding.ErrClaimExpired). eventID, when not 0,
// names the event the user's page offered to undo: if it is no longer the
// one (already undone, by a double press or another tab), nothing is
// recorded and grounding.ErrNothingToUndo comes back. The item is settled
// again, which restores the verdict it had before (the decision's human
// verdict, mask and counters follow), and an annotator holds the item again
// for lease so they can judge it anew; any other open claim of theirs is
// released. An annotator's verdict on an item a lead has since settled is
// grounding.ErrFinalized.
func (db *DB) Undo(ctx context.Context, userID, eventID int64, lease time.Duration) (grounding.VerdictEvent, error) {
	op := fmt.Sprintf("undo by user %d", userID)
	fail := func(err error) (grounding.VerdictEvent, error) { return grounding.VerdictEvent{}, err }
	tx, done, err := db.begin(ctx)
	if err != nil {
		return fail(storeErr(op, err))
	}
	defer done()
	at := db.now()
	var last []eventRow
	err = tx.SelectContext(ctx, &last, tx.Rebind(eventSelect+` WHERE e.user_id = ? AND e.kind IN (?, ?, ?) AND e.item_id IS NOT NULL
		AND NOT EXISTS (SELECT 1 FROM verdict_events x WHERE x.undoes = e.id) AND `+skipTakeBackSQL+`
		ORDER BY e.id DESC LIMIT 1`), append([]any{userID, grounding.EventVerdict, grounding.EventFinal, grounding.EventSkip}, skipTakeBackArgs(at)...)...)
	if err != nil {
		return fail(storeErr(op, err))
	}
	if len(last) == 0 || (eventID != 0 && last[0].ID != eventID) {
		// The page offered a skip that can no longer be taken back (its
		// item went to someone else meanwhile): say so, not "nothing".
		var kind []string
		if eventID != 0 {
			if err := tx.SelectContext(ctx, &kind, tx.Rebind(`SELECT e.kind FROM verdict_events e WHERE e.id = ? AND e.user_id = ?
				AND NOT EXISTS (SELECT 1 FROM verdict_events x WHERE x.undoes = e.id)`), eventID, userID); err != nil {
				return fail(storeErr(op, err))
			}
		}
		if len(kind) == 1 && kind[0] == grounding.EventSkip {
			return fail(fmt.Errorf("store: %s: skip %d: %w", op, eventID, grounding.ErrSkipTaken))
		}
		return fail(fmt.Errorf("store: %s: %w", op, grounding.ErrNothingToUndo))
	}
	target := last[0].event()
	it, err := db.lockItem(ctx, tx, target.ItemID)
	if err != nil {
		return fail(err)
	}
	// Under the item lock, read the events afresh: a concurrent undo of the
	// same event (two tabs) has committed by now and shows here.
	evs, err := itemEvents(ctx, tx, it.ID)
	if err != nil {
		return fail(err)
	}
	for _, e := range evs {
		if e.Kind == grounding.EventUndo && e.Undoes == target.ID {
			return fail(fmt.Errorf("store: %s: event %d: %w", op, target.ID, grounding.ErrNothingToUndo))
		}
	}
	before := grounding.Settle(evs, it.Required)
	if target.ID < before.Round {
		return fail(fmt.Errorf("store: %s: event %d belongs to an earlier round of item %d: %w", op, target.ID, it.ID, grounding.ErrNothingToUndo))
	}
	if target.Kind == grounding.EventVerdict && before.Final != nil {
		return fail(fmt.Errorf("store: %s: item %d: %w", op, it.ID, grounding.ErrFinalized))
	}
	if target.Kind == grounding.EventVerdict && before.ClosedWithOthers(userID) {
		return fail(fmt.Errorf("store: %s: item %d: %w", op, it.ID, grounding.ErrRoundClosed))
	}
	if target.Kind == grounding.EventSkip {
		// Taking a skip back claims the item again: it must still be open,
		// still skipped by this user, and have a slot no one else took.
		if it.State != grounding.QueueOpen {
			return fail(fmt.Errorf("store: %s: item %d: %w", op, it.ID, grounding.ErrSkipTaken))
		}
		var mine []claimRow
		if err := tx.SelectContext(ctx, &mine, tx.Rebind(`SELECT verdict, skipped, expires_at FROM claims WHERE item_id = ? AND user_id = ?`), it.ID, userID); err != nil {
			return fail(storeErr(op, err))
		}
		if len(mine) == 0 || !mine[0].Skipped {
			return fail(fmt.Errorf("store: %s: item %d: %w", op, it.ID, grounding.ErrNothingToUndo))
		}
		var held int
		if err := tx.GetContext(ctx, &held, tx.Rebind(`SELECT COUNT(*) FROM claims c WHERE c.item_id = ? AND c.user_id <> ?
			AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?))`), it.ID, userID, false, dbTime{at}); err != nil {
			return fail(storeErr(op, err))
		}
		if held >= it.Required {
			return fail(fmt.Errorf("store: %s: item %d: %w", op, it.ID, grounding.ErrSkipTaken))
		}
	}
	u := it.event(grounding.EventUndo, userID, at)
	u.Undoes = target.ID
	after := grounding.Settle(append(evs, u), it.Required)
	u.Verdict, u.PrevVerdict = after.Human, before.Human
	if u, err = addEvent(ctx, tx, u); err != nil {
		return fail(err)
	}
	u.UndoneKind = target.Kind
	if target.Kind == grounding.EventVerdict || target.Kind == grounding.EventSkip {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM claims WHERE user_id = ? AND verdict = '' AND skipped = ? AND item_id <> ?`),
			userID, false, it.ID); err != nil {
			return fail(storeErr(op, err))
		}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE claims SET verdict = '', skipped = ?, claimed_at = ?, expires_at = ?
			WHERE item_id = ? AND user_id = ?`), false, dbTime{at}, dbTime{at.Add(leaseOr(lease))}, it.ID, userID); err != nil {
			return fail(storeErr(op, err))
		}
	}
	if err := db.apply(ctx, tx, it, after, at); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(storeErr(op, err))
	}
	return u, nil
}

// skipTakeBackSQL keeps, of the user's events e, verdicts and finals and
// the skips that can still be taken back: the item is open, the user's
// claim on it is still the skip, and its slots are not all taken by
// others' verdicts and live claims. A skip that can no longer be taken
// back is passed over, so u undoes what came before it. Its arguments:
// skipTakeBackArgs.
const skipTakeBackSQL = `(e.kind <> ? OR EXISTS (SELECT 1 FROM queue_items q2 JOIN claims m ON m.item_id = q2.id AND m.user_id = e.user_id
	WHERE q2.id = e.item_id AND q2.state = ? AND m.skipped = ? AND m.verdict = ''
	AND (SELECT COUNT(*) FROM claims c WHERE c.item_id = q2.id AND c.user_id <> e.user_id
		AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?))) < q2.required))`

func skipTakeBackArgs(at time.Time) []any {
	return []any{grounding.EventSkip, grounding.QueueOpen, true, false, dbTime{at}}
}

// NotesBy returns the notes the user left on a decision, oldest first: the
// events of theirs that carry one, notes and the notes sent with a verdict
// (also one later undone). The review screen shows annotators their own
// notes (one read, where History is three).
func (db *DB) NotesBy(ctx context.Context, userID, trajectoryID int64, ordinal int) ([]grounding.VerdictEvent, error) {
	var rows []eventRow
	if err := db.sel(ctx, &rows, eventSelect+` WHERE e.trajectory_id = ? AND e.ordinal = ? AND e.user_id = ? AND e.note <> '' ORDER BY e.id`,
		trajectoryID, ordinal, userID); err != nil {
		return nil, storeErr(fmt.Sprintf("notes of user %d on decision %d of trajectory %d", userID, ordinal, trajectoryID), err)
	}
	out := make([]grounding.VerdictEvent, len(rows))
	for i, r := range rows {
		out[i] = r.event()
	}
	return out, nil
}

// Finalize records a lead's final verdict, with its reason, on an item in
// conflict, and settles it. The reason is required (grounding.ErrInvalid).
// An item that is not in conflict is grounding.ErrNotConflict, unless it is
// done by a final verdict of the same lead with the same verdict: that is a
// repeated submission and returns it with Repeated set.
func (db *DB) Finalize(ctx context.Context, leadID, itemID int64, verdict grounding.Verdict, reason string) (grounding.SubmitResult, error) {
	op := fmt.Sprintf("final verdict of user %d on item %d", leadID, itemID)
	fail := func(err error) (grounding.SubmitResult, error) { return grounding.SubmitResult{}, err }
	reason = strings.TrimSpace(reason)
	switch {
	case !validVerdict(verdict):
		return fail(fmt.Errorf("store: %s: verdict %q is neither pass nor fail: %w", op, verdict, grounding.ErrInvalid))
	case reason == "":
		return fail(fmt.Errorf("store: %s: a final verdict needs a reason: %w", op, grounding.ErrInvalid))
	case len(reason) > grounding.MaxNote:
		return fail(fmt.Errorf("store: %s: the reason is longer than %d bytes: %w", op, grounding.MaxNote, grounding.ErrInvalid))
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return fail(storeErr(op, err))
	}
	defer done()
	at := db.now()
	it, err := db.lockItem(ctx, tx, itemID)
	if err != nil {
		return fail(err)
	}
	evs, err := itemEvents(ctx, tx, it.ID)
	if err != nil {
		return fail(err)
	}
	before := grounding.Settle(evs, it.Required)
	if before.State != grounding.QueueConflict {
		if f := before.Final; f != nil && f.UserID == leadID && f.Verdict == verdict {
			return grounding.SubmitResult{Event: *f, Repeated: true, State: before.State, Human: before.Human}, nil
		}
		return fail(fmt.Errorf("store: %s: state %s: %w", op, before.State, grounding.ErrNotConflict))
	}
	e := it.event(grounding.EventFinal, leadID, at)
	e.Verdict, e.PrevVerdict, e.Note = verdict, before.Human, reason
	if e, err = addEvent(ctx, tx, e); err != nil {
		return fail(err)
	}
	after := grounding.Settle(append(evs, e), it.Required)
	if err := db.apply(ctx, tx, it, after, at); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(storeErr(op, err))
	}
	return grounding.SubmitResult{Event: e, State: after.State, Human: after.Human}, nil
}

// AddNote records a note by the user on the item. An empty note or one
// over grounding.MaxNote is grounding.ErrInvalid. The same note twice in a
// row by the same user on the same item is recorded once (Repeated).
func (db *DB) AddNote(ctx context.Context, userID, itemID int64, note string) (grounding.VerdictEvent, bool, error) {
	op := fmt.Sprintf("note of user %d on item %d", userID, itemID)
	note, err := checkNote(op, note)
	if err != nil {
		return grounding.VerdictEvent{}, false, err
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return grounding.VerdictEvent{}, false, storeErr(op, err)
	}
	defer done()
	at := db.now()
	it, err := db.lockItem(ctx, tx, itemID)
	if err != nil {
		return grounding.VerdictEvent{}, false, err
	}
	e := it.event(grounding.EventNote, userID, at)
	e.Note = note
	return addNoteOnce(ctx, tx, op, e, `e.item_id = ? AND e.user_id = ?`, itemID, userID)
}

// checkNote trims a note and refuses an empty one or one over
// grounding.MaxNote (grounding.ErrInvalid).
func checkNote(op, note string) (string, error) {
	note = strings.TrimSpace(note)
	if note == "" || len(note) > grounding.MaxNote {
		return "", fmt.Errorf("store: %s: a note has 1 to %d bytes: %w", op, grounding.MaxNote, grounding.ErrInvalid)
	}
	return note, nil
}

// addNoteOnce adds the note event e and commits, unless the user's latest
// event that where selects is the same note: that one is returned with
// repeated true (a double submission).
func addNoteOnce(ctx context.Context, tx *sqlx.Tx, op string, e grounding.VerdictEvent, where string, args ...any) (grounding.VerdictEvent, bool, error) {
	var prev []eventRow
	if err := tx.SelectContext(ctx, &prev, tx.Rebind(eventSelect+` WHERE `+where+` ORDER BY e.id DESC LIMIT 1`), args...); err != nil {
		return grounding.VerdictEvent{}, false, storeErr(op, err)
	}
	if len(prev) > 0 && prev[0].Kind == grounding.EventNote && prev[0].Note == cleanText(e.Note) {
		return prev[0].event(), true, nil
	}
	e, err := addEvent(ctx, tx, e)
	if err != nil {
		return e, false, err
	}
	return e, false, storeErr(op, tx.Commit())
}

// AddDecisionNote records a note by the user on a decision, on its queue
// item when it has one and on the decision alone when it has none (a
// recheck took an untouched item out of the queue while the annotator was
// writing): the review screen keeps a note whose item is gone this way,
// and NotesBy and History read it by decision. Empty, too long and
// repeated notes are as for AddNote; an unknown decision is
// grounding.ErrNotFound.
func (db *DB) AddDecisionNote(ctx context.Context, userID, trajectoryID int64, ordinal int, note string) (grounding.VerdictEvent, bool, error) {
	op := fmt.Sprintf("note of user %d on decision %d of trajectory %d", userID, ordinal, trajectoryID)
	note, err := checkNote(op, note)
	if err != nil {
		return grounding.VerdictEvent{}, false, err
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return grounding.VerdictEvent{}, false, storeErr(op, err)
	}
	defer done()
	var d struct {
		RunID  int64         `db:"run_id"`
		ItemID sql.NullInt64 `db:"item_id"`
	}
	if err := db.q(tx).get(ctx, &d, `SELECT d.run_id, (SELECT q.id FROM queue_items q WHERE q.trajectory_id = d.trajectory_id AND q.ordinal = d.ordinal) AS item_id
		FROM decisions d WHERE d.trajectory_id = ? AND d.ordinal = ?`, trajectoryID, ordinal); err != nil {
		return grounding.VerdictEvent{}, false, storeErr(op, err)
	}
	e := grounding.VerdictEvent{ItemID: d.ItemID.Int64, RunID: d.RunID, TrajectoryID: trajectoryID, Ordinal: ordinal,
		UserID: userID, Kind: grounding.EventNote, Note: note, CreatedAt: db.now()}
	return addNoteOnce(ctx, tx, op, e, `e.trajectory_id = ? AND e.ordinal = ? AND e.user_id = ?`, trajectoryID, ordinal, userID)
}

// Enqueue sends a decision to the queue by hand ("needs a human look"),
// with the lead's note, ahead of the run's open items. A decision without
// an item gets a manual one; one whose item is done gets a new round (its
// current human verdict stands until the round settles); one whose item is
// still open or in conflict is left alone and returned with created false.
// An unknown decision is grounding.ErrNotFound.
func (db *DB) Enqueue(ctx context.Context, leadID, trajectoryID int64, ordinal int, note string) (grounding.QueueItem, bool, error) {
	op := fmt.Sprintf("enqueue decision %d of trajectory %d", ordinal, trajectoryID)
	fail := func(err error) (grounding.QueueItem, bool, error) { return grounding.QueueItem{}, false, err }
	note = strings.TrimSpace(note)
	if len(note) > grounding.MaxNote {
		return fail(fmt.Errorf("store: %s: the note is longer than %d bytes: %w", op, grounding.MaxNote, grounding.ErrInvalid))
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return fail(storeErr(op, err))
	}
	defer done()
	at := db.now()
	// Lock the decision's item, if it has one, before reading the decision:
	// a settlement holding it may be changing the human verdict.
	var existing []lockedItem
	if err := tx.SelectContext(ctx, &existing, tx.Rebind(`SELECT id, run_id, trajectory_id, ordinal, required, state
		FROM queue_items WHERE trajectory_id = ? AND ordinal = ?`+db.d.forUpdate), trajectoryID, ordinal); err != nil {
		return fail(storeErr(op, err))
	}
	var d struct {
		RunID   int64  `db:"run_id"`
		Reasons []byte `db:"reasons"`
		Human   string `db:"human_verdict"`
		Overlap int    `db:"overlap"`
	}
	err = tx.GetContext(ctx, &d, tx.Rebind(`SELECT d.run_id, d.reasons, d.human_verdict, r.overlap
		FROM decisions d JOIN runs r ON r.id = d.run_id WHERE d.trajectory_id = ? AND d.ordinal = ?`), trajectoryID, ordinal)
	if err != nil {
		return fail(storeErr(op, err))
	}
	var reasons []string
	if err := decodeJSON(d.Reasons, &reasons); err != nil {
		return fail(fmt.Errorf("store: %s: decode reasons: %w", op, err))
	}
	why, err := encodeJSON(manualWhy{Note: note, Reasons: nonNil(reasons)})
	if err != nil {
		return fail(err)
	}
	var prio int
	if err := tx.GetContext(ctx, &prio, tx.Rebind(`SELECT COALESCE(MAX(priority), 0) + 1 FROM queue_items WHERE run_id = ? AND state = ?`),
		d.RunID, grounding.QueueOpen); err != nil {
		return fail(storeErr(op, err))
	}
	var it lockedItem
	switch {
	case len(existing) > 0 && existing[0].State != grounding.QueueDone:
		item, err := db.loadItem(ctx, tx, existing[0].ID, at)
		return item, false, err
	case len(existing) > 0:
		it = existing[0]
		it.Required, it.State = d.Overlap, grounding.QueueOpen
		// A new round: the claims of the last one are spent (the events
		// keep what they said).
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM claims WHERE item_id = ?`), it.ID); err != nil {
			return fail(storeErr(op, err))
		}
		_, err = tx.ExecContext(ctx, tx.Rebind(`UPDATE queue_items SET source = ?, why = ?, priority = ?, required = ?, state = ?, created_by = ?
			WHERE id = ?`), grounding.SourceManual, why, prio, d.Overlap, grounding.QueueOpen, leadID, it.ID)
		if err != nil {
			return fail(storeErr(op, err))
		}
	default:
		it = lockedItem{RunID: d.RunID, TrajectoryID: trajectoryID, Ordinal: ordinal, Required: d.Overlap, State: grounding.QueueOpen}
		err = tx.GetContext(ctx, &it.ID, tx.Rebind(`INSERT INTO queue_items
			(run_id, trajectory_id, ordinal, source, why, priority, required, state, created_at, created_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
			d.RunID, trajectoryID, ordinal, grounding.SourceManual, why, prio, d.Overlap, grounding.QueueOpen, dbTime{at}, leadID)
		if err != nil {
			return fail(storeErr(op, err))
		}
	}
	e := it.event(grounding.EventEnqueue, leadID, at)
	e.Note, e.PrevVerdict = note, grounding.Verdict(d.Human)
	if _, err := addEvent(ctx, tx, e); err != nil {
		return fail(err)
	}
	item, err := db.loadItem(ctx, tx, it.ID, at)
	if err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(storeErr(op, err))
	}
	return item, true, nil
}

// SetOverlap sets how many independent verdicts the run's items need (k,
// 1..grounding.MaxOverlap, else grounding.ErrInvalid). Open items take the
// new k at once; those that already hold k verdicts settle now. Settled
// items and conflicts keep theirs. An unknown run is grounding.ErrNotFound.
func (db *DB) SetOverlap(ctx context.Context, runID int64, k int) error {
	op := fmt.Sprintf("set overlap of run %d", runID)
	if !grounding.ValidOverlap(k) {
		return fmt.Errorf("store: %s: %d verdicts per item: want 1 to %d: %w", op, k, grounding.MaxOverlap, grounding.ErrInvalid)
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return storeErr(op, err)
	}
	defer done()
	at := db.now()
	res, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE runs SET overlap = ? WHERE id = ?`), k, runID)
	if err != nil {
		return storeErr(op, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = sql.ErrNoRows
		}
		return storeErr(op, err)
	}
	var ready []int64
	err = tx.SelectContext(ctx, &ready, tx.Rebind(`UPDATE queue_items SET required = ? WHERE run_id = ? AND state = ?
		AND required <> ? RETURNING id`), k, runID, grounding.QueueOpen, k)
	if err != nil {
		return storeErr(op, err)
	}
	slices.Sort(ready)
	for _, id := range ready {
		it, err := db.lockItem(ctx, tx, id)
		if err != nil {
			return err
		}
		evs, err := itemEvents(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := db.apply(ctx, tx, it, grounding.Settle(evs, it.Required), at); err != nil {
			return err
		}
	}
	return storeErr(op, tx.Commit())
}

// apply writes a settlement: the item's state, and when the human verdict
// or its author changed, the decision's human verdict, effective verdict
// and mask, decided_by/decided_at, and the trajectory and run counters,
// moved by the difference (increments stay right when two items of one
// trajectory settle at once, which a recount from a snapshot would not).
func (db *DB) apply(ctx context.Context, tx *sqlx.Tx, it lockedItem, s grounding.Settlement, at time.Time) error {
	op := fmt.Sprintf("settle item %d", it.ID)
	q := db.q(tx)
	if s.State != it.State && db.d.settleRead == "" {
		if _, err := q.exec(ctx, `UPDATE queue_items SET state = ? WHERE id = ?`, s.State, it.ID); err != nil {
			return storeErr(op, err)
		}
	}
	var d struct {
		Auto      string        `db:"auto_verdict"`
		Human     string        `db:"human_verdict"`
		Verdict   string        `db:"verdict"`
		Mask      int           `db:"mask"`
		G         int           `db:"g"`
		FlowOK    bool          `db:"flow_ok"`
		Queued    bool          `db:"queued"`
		Reasons   []byte        `db:"reasons"`
		DecidedBy sql.NullInt64 `db:"decided_by"`
	}
	var err error
	if db.d.settleRead != "" {
		err = q.get(ctx, &d, db.d.settleRead, s.State, it.ID, s.State, it.TrajectoryID, it.Ordinal)
	} else {
		err = q.get(ctx, &d, `SELECT auto_verdict, human_verdict, verdict, mask, g, flow_ok, queued, reasons, decided_by
			FROM decisions WHERE trajectory_id = ? AND ordinal = ?`+db.d.forUpdate, it.TrajectoryID, it.Ordinal)
	}
	if err != nil {
		return storeErr(op, err)
	}
	if d.Human == string(s.Human) && d.DecidedBy.Int64 == s.DecidedBy {
		return nil
	}
	var reasons []string
	if err := decodeJSON(d.Reasons, &reasons); err != nil {
		return fmt.Errorf("store: %s: decode reasons: %w", op, err)
	}
	verdict, mask := grounding.EffectiveCheck(grounding.Verdict(d.Auto), d.G, d.FlowOK, reasons, s.Human)
	var by, when any
	if s.Human != "" {
		by, when = s.DecidedBy, dbTime{cmpTime(s.DecidedAt, at)}
	}
	var delta counterDelta
	delta.verdict(grounding.Verdict(d.Verdict), -1)
	delta.verdict(verdict, +1)
	delta.supervised = mask - d.Mask
	if d.Queued && d.Human == "" {
		delta.queued--
	}
	if d.Queued && s.Human == "" {
		delta.queued++
	}
	if db.d.settleWrite != "" && delta != (counterDelta{}) {
		c := delta
		_, err = q.exec(ctx, db.d.settleWrite,
			string(s.Human), string(verdict), mask, by, when, it.TrajectoryID, it.Ordinal,
			c.pass, c.fail, c.ambiguous, c.queued, c.supervised, c.supervised, it.TrajectoryID,
			c.supervised,
			it.RunID,
			it.RunID, c.pass, c.fail, c.ambiguous, c.queued, c.supervised,
			it.RunID,
			c.pass, c.fail, c.ambiguous, c.queued, c.supervised)
		return storeErr(op, err)
	}
	_, err = q.exec(ctx, `UPDATE decisions SET human_verdict = ?, verdict = ?, mask = ?, decided_by = ?, decided_at = ?
		WHERE trajectory_id = ? AND ordinal = ?`, string(s.Human), string(verdict), mask, by, when, it.TrajectoryID, it.Ordinal)
	if err != nil {
		return storeErr(op, err)
	}
	return delta.write(ctx, q, it.TrajectoryID, it.RunID)
}

func cmpTime(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// counterDelta is how one decision's change moves its trajectory's and
// run's check counters.
type counterDelta struct{ pass, fail, ambiguous, queued, supervised int }

func (c *counterDelta) verdict(v grounding.Verdict, n int) {
	switch v {
	case grounding.VerdictPass:
		c.pass += n
	case grounding.VerdictFail:
		c.fail += n
	default:
		c.ambiguous += n
	}
}

func (c counterDelta) write(ctx context.Context, q txq, trajectoryID, runID int64) error {
	if c == (counterDelta{}) {
		return nil
	}
	op := fmt.Sprintf("count trajectory %d", trajectoryID)
	var t struct {
		Success    bool `db:"success"`
		WorkflowOK bool `db:"workflow_ok"`
		Supervised int  `db:"n_supervised"`
	}
	err := q.get(ctx, &t, `UPDATE trajectories SET n_pass = n_pass + ?, n_fail = n_fail + ?,
		n_ambiguous = n_ambiguous + ?, n_queued = n_queued + ?, n_supervised = n_supervised + ?,
		certified = (success AND workflow_ok AND n_supervised + ? > 0)
		WHERE id = ? RETURNING success, workflow_ok, n_supervised`,
		c.pass, c.fail, c.ambiguous, c.queued, c.supervised, c.supervised, trajectoryID)
	if err != nil {
		return storeErr(op, err)
	}
	certified := func(sup int) int {
		if t.Success && t.WorkflowOK && sup > 0 {
			return 1
		}
		return 0
	}
	dCert := certified(t.Supervised) - certified(t.Supervised-c.supervised)
	op = fmt.Sprintf("count run %d", runID)
	// Only SQLite comes here with a change (Postgres settles with
	// pgSettleWrite, which never waits for the run row): its writer is
	// alone, so the row is updated directly.
	_, err = q.exec(ctx, `UPDATE runs SET n_pass = n_pass + ?, n_fail = n_fail + ?, n_ambiguous = n_ambiguous + ?,
		n_queued = n_queued + ?, n_supervised = n_supervised + ?, n_certified = n_certified + ? WHERE id = ?`,
		c.pass, c.fail, c.ambiguous, c.queued, c.supervised, dCert, runID)
	return storeErr(op, err)
}

// History returns everything about one decision: its queue item, if it has
// one, and every event, oldest first. An unknown decision is
// grounding.ErrNotFound.
func (db *DB) History(ctx context.Context, trajectoryID int64, ordinal int) (grounding.DecisionHistory, error) {
	op := fmt.Sprintf("history of decision %d of trajectory %d", ordinal, trajectoryID)
	var h grounding.DecisionHistory
	var n int
	if err := db.get(ctx, &n, `SELECT COUNT(*) FROM decisions WHERE trajectory_id = ? AND ordinal = ?`, trajectoryID, ordinal); err != nil {
		return h, storeErr(op, err)
	}
	if n == 0 {
		return h, fmt.Errorf("store: %s: %w", op, grounding.ErrNotFound)
	}
	var rows []itemRow
	if err := db.sel(ctx, &rows, itemSelect+` WHERE q.trajectory_id = ? AND q.ordinal = ?`,
		false, dbTime{db.now()}, trajectoryID, ordinal); err != nil {
		return h, storeErr(op, err)
	}
	if len(rows) > 0 {
		it, err := rows[0].item()
		if err != nil {
			return h, fmt.Errorf("store: %s: %w", op, err)
		}
		h.Item = &it
	}
	var evs []eventRow
	if err := db.sel(ctx, &evs, eventSelect+` WHERE e.trajectory_id = ? AND e.ordinal = ? ORDER BY e.id`, trajectoryID, ordinal); err != nil {
		return h, storeErr(op, err)
	}
	for _, r := range evs {
		h.Events = append(h.Events, r.event())
	}
	return h, nil
}

// Conflicts lists the items in conflict matching f (its state ignored),
// best first, each with the standing verdicts and the notes of its current
// round.
func (db *DB) Conflicts(ctx context.Context, f grounding.QueueFilter) ([]grounding.ConflictItem, error) {
	f.State = grounding.QueueConflict
	page, err := db.Queue(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(page.Items) == 0 {
		return nil, nil
	}
	ids := make([]any, len(page.Items))
	for i, it := range page.Items {
		ids[i] = it.ID
	}
	var rows []eventRow
	err = db.x.SelectContext(ctx, &rows, db.x.Rebind(eventSelect+` WHERE e.item_id IN (?`+strings.Repeat(", ?", len(ids)-1)+`) ORDER BY e.id`), ids...)
	if err != nil {
		return nil, storeErr("conflict events", err)
	}
	byItem := map[int64][]grounding.VerdictEvent{}
	for _, r := range rows {
		byItem[r.ItemID.Int64] = append(byItem[r.ItemID.Int64], r.event())
	}
	out := make([]grounding.ConflictItem, len(page.Items))
	for i, it := range page.Items {
		evs := byItem[it.ID]
		s := grounding.Settle(evs, it.Required)
		c := grounding.ConflictItem{Item: it, Verdicts: s.Verdicts}
		for _, e := range evs {
			if e.Kind == grounding.EventNote && e.ID > s.Round {
				c.Notes = append(c.Notes, e)
			}
		}
		out[i] = c
	}
	return out, nil
}

// Progress returns the review screen's figures for the user under filter f:
// their verdicts since 00:00 UTC (undone ones excluded), the open items
// matching f, and the queue items of f's run (every run when none) by state.
func (db *DB) Progress(ctx context.Context, userID int64, f grounding.QueueFilter) (grounding.Progress, error) {
	q, args := db.progressSQL(userID, f)
	var r progressRow
	if err := db.get(ctx, &r, q, args...); err != nil {
		return grounding.Progress{}, storeErr(fmt.Sprintf("progress of user %d", userID), err)
	}
	return r.progress(), db.foldQueueCounts(ctx, r)
}

type progressRow struct {
	Mine      int `db:"mine"`
	Remaining int `db:"remaining"`
	Passed    int `db:"passed"`
	Items     int `db:"items"`
	Done      int `db:"done"`
	Conflicts int `db:"conflicts"`
	// CountRows and CountRuns are the queue_counts rows summed and the runs
	// they belong to: foldQueueCounts folds when they differ by many.
	CountRows int `db:"count_rows"`
	CountRuns int `db:"count_runs"`
}

func (r progressRow) progress() grounding.Progress {
	return grounding.Progress{MineToday: r.Mine, Remaining: r.Remaining, Yours: r.Remaining - r.Passed,
		Items: r.Items, Done: r.Done, Conflicts: r.Conflicts}
}

// progressSQL is Progress's statement and its arguments. The queue's
// figures come from queue_counts (kept by triggers, migration 00017): a few
// rows per run, where counting the items was a pass over the whole queue on
// every view. Only an open count narrowed by domain, tool or reason counts
// items.
func (db *DB) progressSQL(userID int64, f grounding.QueueFilter) (string, []any) {
	f.Decision = nil // the figures are the queue's, never one decision's
	at := db.now()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	args := []any{userID, dbTime{day}, grounding.EventVerdict, grounding.EventFinal}
	remaining := "c.n_open"
	if f.Domain != "" || f.Tool != "" || f.Reason != "" {
		where, fargs := queueWhere(f)
		remaining = `(SELECT COUNT(*) FROM queue_items q WHERE q.state = ?` + and(where) + `)`
		args = append(args, grounding.QueueOpen)
		args = append(args, fargs...)
	}
	// passed: the open items matching f this user has judged or skipped in
	// their current round, which Next will not offer them again. Read from
	// the user's claims (claims_user_idx), each joined to its item.
	where, fargs := queueWhere(f)
	passed := `(SELECT COUNT(*) FROM claims m JOIN queue_items q ON q.id = m.item_id
			WHERE m.user_id = ? AND (m.verdict <> '' OR m.skipped <> ?) AND q.state = ?` + and(where) + `)`
	args = append(args, userID, false, grounding.QueueOpen)
	args = append(args, fargs...)
	run := ""
	if f.RunID != 0 {
		run = " WHERE run_id = ?"
		args = append(args, f.RunID)
	}
	return `SELECT
		(SELECT COUNT(*) FROM verdict_events e WHERE e.user_id = ? AND e.created_at >= ? AND e.kind IN (?, ?)
			AND NOT EXISTS (SELECT 1 FROM verdict_events x WHERE x.undoes = e.id)) AS mine,
		` + remaining + ` AS remaining, ` + passed + ` AS passed,
		c.n_open + c.n_conflict + c.n_done AS items, c.n_done AS done, c.n_conflict AS conflicts,
		c.count_rows, c.count_runs
		FROM (SELECT COALESCE(SUM(n_open), 0) AS n_open, COALESCE(SUM(n_conflict), 0) AS n_conflict,
			COALESCE(SUM(n_done), 0) AS n_done, COUNT(*) AS count_rows, COUNT(DISTINCT run_id) AS count_runs
			FROM queue_counts` + run + `) c`, args
}

// foldAfter is how many rows of differences queue_counts may hold beyond
// one per run before a reader folds them.
const foldAfter = 64

// foldQueueCounts folds the rows of differences a progress read summed
// into one row per run, when many have gathered (Postgres; SQLite's rows are
// one per run already). Each row is taken by one folder only (SKIP LOCKED:
// two readers folding at once take disjoint rows, and neither waits), and
// the rows it deletes and the sum it inserts are one statement, so every
// reader sees the same totals before and after.
func (db *DB) foldQueueCounts(ctx context.Context, r progressRow) error {
	if db.d.name != "postgres" || r.CountRows-r.CountRuns <= foldAfter {
		return nil
	}
	_, err := db.x.ExecContext(ctx, `WITH gone AS (DELETE FROM queue_counts WHERE id IN
			(SELECT id FROM queue_counts FOR UPDATE SKIP LOCKED)
			RETURNING run_id, n_open, n_conflict, n_done)
		INSERT INTO queue_counts (run_id, n_open, n_conflict, n_done)
		SELECT run_id, SUM(n_open), SUM(n_conflict), SUM(n_done) FROM gone GROUP BY run_id`)
	return storeErr("fold queue counts", err)
}

// Standing is the user's Progress and the latest verdict, skip or final
// verdict an Undo would cancel, in one read: the review screen shows both
// on every view, and each statement costs a round trip. last is nil when
// nothing can be undone (also when the latest verdict closed its round
// with other annotators' verdicts: ErrRoundClosed); of it, ID, ItemID,
// Ordinal, Kind, Verdict and ExtID are set (what the undo offer shows).
func (db *DB) Standing(ctx context.Context, userID int64, f grounding.QueueFilter) (p grounding.Progress, last *grounding.VerdictEvent, err error) {
	pq, args := db.progressSQL(userID, f)
	// The select list's placeholders come before the FROM's: last_closed's
	// (a verdict in a round closed with others' verdicts is not offered:
	// Undo would refuse it, ErrRoundClosed), then progressSQL's, then l's.
	args = append([]any{grounding.EventVerdict, grounding.QueueOpen, userID}, args...)
	args = append(args, userID, grounding.EventVerdict, grounding.EventFinal, grounding.EventSkip)
	args = append(args, skipTakeBackArgs(db.now())...)
	var r struct {
		progressRow
		LastID      sql.NullInt64  `db:"last_id"`
		LastItem    sql.NullInt64  `db:"last_item"`
		LastOrdinal sql.NullInt64  `db:"last_ordinal"`
		LastKind    sql.NullString `db:"last_kind"`
		LastVerdict sql.NullString `db:"last_verdict"`
		LastTraj    sql.NullString `db:"last_traj"`
		LastClosed  int            `db:"last_closed"`
	}
	err = db.get(ctx, &r, `SELECT p.mine, p.remaining, p.passed, p.items, p.done, p.conflicts, p.count_rows, p.count_runs,
		l.id AS last_id, l.item_id AS last_item, l.ordinal AS last_ordinal, l.kind AS last_kind, l.verdict AS last_verdict,
		(SELECT t.ext_id FROM trajectories t WHERE t.id = l.trajectory_id) AS last_traj,
		CASE WHEN l.kind = ? AND EXISTS (SELECT 1 FROM queue_items q WHERE q.id = l.item_id AND q.state <> ?)
			AND EXISTS (SELECT 1 FROM claims c WHERE c.item_id = l.item_id AND c.user_id <> ? AND c.verdict <> '')
			THEN 1 ELSE 0 END AS last_closed
		FROM (`+pq+`) p LEFT JOIN (SELECT e.id, e.item_id, e.trajectory_id, e.ordinal, e.kind, e.verdict FROM verdict_events e
			WHERE e.user_id = ? AND e.kind IN (?, ?, ?) AND e.item_id IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM verdict_events x WHERE x.undoes = e.id) AND `+skipTakeBackSQL+`
			ORDER BY e.id DESC LIMIT 1) l ON 1 = 1`, args...)
	if err != nil {
		return p, nil, storeErr(fmt.Sprintf("standing of user %d", userID), err)
	}
	if err := db.foldQueueCounts(ctx, r.progressRow); err != nil {
		return p, nil, err
	}
	if r.LastID.Valid && r.LastClosed == 0 {
		last = &grounding.VerdictEvent{ID: r.LastID.Int64, ItemID: r.LastItem.Int64, Ordinal: int(r.LastOrdinal.Int64),
			UserID: userID, Kind: r.LastKind.String, Verdict: grounding.Verdict(r.LastVerdict.String), ExtID: r.LastTraj.String}
	}
	return r.progress(), last, nil
}

// Agreement returns the agreement of the annotators of a run (every run
// when runID is 0) over the standing verdicts of each item's current round,
// and the names of the annotators it mentions.
func (db *DB) Agreement(ctx context.Context, runID int64) (grounding.AgreementReport, map[int64]string, error) {
	op := fmt.Sprintf("agreement of run %d", runID)
	q := `SELECT c.item_id, c.user_id, u.name, c.verdict FROM claims c
		JOIN queue_items q ON q.id = c.item_id JOIN users u ON u.id = c.user_id WHERE c.verdict <> ''`
	var args []any
	if runID != 0 {
		q += ` AND q.run_id = ?`
		args = append(args, runID)
	}
	var rows []struct {
		Item    int64  `db:"item_id"`
		User    int64  `db:"user_id"`
		Name    string `db:"name"`
		Verdict string `db:"verdict"`
	}
	if err := db.x.SelectContext(ctx, &rows, db.x.Rebind(q), args...); err != nil {
		return grounding.AgreementReport{}, nil, storeErr(op, err)
	}
	names := map[int64]string{}
	ratings := make([]grounding.Rating, len(rows))
	for i, r := range rows {
		names[r.User] = r.Name
		ratings[i] = grounding.Rating{Item: r.Item, Rater: r.User, Label: r.Verdict}
	}
	return grounding.Agreement(ratings), names, nil
}

// Overlap returns the run's k.
func (db *DB) Overlap(ctx context.Context, runID int64) (int, error) {
	var k int
	err := db.x.GetContext(ctx, &k, db.x.Rebind(`SELECT overlap FROM runs WHERE id = ?`), runID)
	return k, storeErr(fmt.Sprintf("overlap of run %d", runID), err)
}

// AnnotatorWork returns, per person with a standing verdict, final verdict
// or skip in the run (every run when runID is 0), or a claim held now, what
// they did: the lead's view of who works on what. Two reads: the events
// grouped by user (verdict_events_user_idx is no help across users; a
// run's events are read once), and the live claims. Ordered by name.
func (db *DB) AnnotatorWork(ctx context.Context, runID int64) ([]grounding.AnnotatorWork, error) {
	op := fmt.Sprintf("annotator work of run %d", runID)
	at := db.now()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	week := at.Add(-7 * 24 * time.Hour)
	args := []any{grounding.VerdictPass, grounding.EventFinal, dbTime{day}, dbTime{week}, grounding.EventSkip,
		grounding.EventVerdict, grounding.EventFinal, grounding.EventSkip}
	run := ""
	if runID != 0 {
		run = " AND e.run_id = ?"
		args = append(args, runID)
	}
	var rows []struct {
		UserID   int64    `db:"user_id"`
		Verdicts int      `db:"verdicts"`
		Passed   int      `db:"passed"`
		Finals   int      `db:"finals"`
		Today    int      `db:"today"`
		Week     int      `db:"week"`
		Skips    int      `db:"skips"`
		Last     nullTime `db:"last"`
	}
	// Verdict and final events carry their verdict, skips none: the
	// verdict figures count the events with one.
	err := db.sel(ctx, &rows, `SELECT e.user_id,
		COALESCE(SUM(CASE WHEN e.verdict <> '' THEN 1 ELSE 0 END), 0) AS verdicts,
		COALESCE(SUM(CASE WHEN e.verdict = ? THEN 1 ELSE 0 END), 0) AS passed,
		COALESCE(SUM(CASE WHEN e.kind = ? THEN 1 ELSE 0 END), 0) AS finals,
		COALESCE(SUM(CASE WHEN e.verdict <> '' AND e.created_at >= ? THEN 1 ELSE 0 END), 0) AS today,
		COALESCE(SUM(CASE WHEN e.verdict <> '' AND e.created_at >= ? THEN 1 ELSE 0 END), 0) AS week,
		COALESCE(SUM(CASE WHEN e.kind = ? THEN 1 ELSE 0 END), 0) AS skips,
		MAX(e.created_at) AS last
		FROM verdict_events e
		WHERE e.kind IN (?, ?, ?)`+run+`
		AND NOT EXISTS (SELECT 1 FROM verdict_events x WHERE x.undoes = e.id)
		GROUP BY e.user_id`, args...)
	if err != nil {
		return nil, storeErr(op, err)
	}
	cargs := []any{dbTime{at}, false}
	if runID != 0 {
		run = " AND q.run_id = ?"
		cargs = append(cargs, runID)
	}
	var holding []struct {
		UserID int64 `db:"user_id"`
		N      int   `db:"n"`
	}
	if err := db.sel(ctx, &holding, `SELECT c.user_id, COUNT(*) AS n FROM claims c JOIN queue_items q ON q.id = c.item_id
		WHERE c.expires_at > ? AND c.verdict = '' AND c.skipped = ?`+run+` GROUP BY c.user_id`, cargs...); err != nil {
		return nil, storeErr(op, err)
	}
	byUser := map[int64]*grounding.AnnotatorWork{}
	for _, r := range rows {
		byUser[r.UserID] = &grounding.AnnotatorWork{UserID: r.UserID, Verdicts: r.Verdicts, Passed: r.Passed, Finals: r.Finals,
			Today: r.Today, Week: r.Week, Skips: r.Skips, Last: r.Last.Time}
	}
	for _, h := range holding {
		w := byUser[h.UserID]
		if w == nil {
			w = &grounding.AnnotatorWork{UserID: h.UserID}
			byUser[h.UserID] = w
		}
		w.Holding = h.N
	}
	if len(byUser) == 0 {
		return nil, nil
	}
	users, err := db.Users(ctx)
	if err != nil {
		return nil, err
	}
	var out []grounding.AnnotatorWork
	for _, u := range users {
		if w := byUser[u.ID]; w != nil {
			w.Name, w.Role, w.Disabled = u.Name, u.Role, u.Disabled
			out = append(out, *w)
		}
	}
	slices.SortFunc(out, func(a, b grounding.AnnotatorWork) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}
