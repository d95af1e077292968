package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

// DefaultLease is how long a claim lasts when the caller passes no lease.
const DefaultLease = 15 * time.Minute

// SetClock makes the adjudication methods (leases, event times, "today")
// read c instead of the wall clock; nil restores the wall clock. Tests use
// it to expire leases without sleeping.
func (db *DB) SetClock(c func() time.Time) {
	if c == nil {
		db.clock.Store(nil)
		return
	}
	db.clock.Store(&c)
}

// now is the adjudication clock, truncated like the package's now.
func (db *DB) now() time.Time {
	if c := db.clock.Load(); c != nil {
		return (*c)().UTC().Truncate(time.Microsecond)
	}
	return now()
}

func leaseOr(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultLease
	}
	return d
}

type itemRow struct {
	ID           int64  `db:"id"`
	RunID        int64  `db:"run_id"`
	TrajectoryID int64  `db:"trajectory_id"`
	Ordinal      int    `db:"ordinal"`
	Source       string `db:"source"`
	Why          []byte `db:"why"`
	Priority     int    `db:"priority"`
	Required     int    `db:"required"`
	State        string `db:"state"`
	CreatedAt    dbTime `db:"created_at"`
	RunName      string `db:"run_name"`
	ExtID        string `db:"ext_id"`
	Domain       string `db:"domain"`
	Tool         string `db:"tool"`
	Question     []byte `db:"question"`
	Human        string `db:"human_verdict"`
	Verdicts     int    `db:"n_verdicts"`
	Holders      int    `db:"n_holders"`
}

// manualWhy is the why column of an item a lead queued by hand; automatic
// items hold the reason codes alone, as a JSON array.
type manualWhy struct {
	Note    string   `json:"note"`
	Reasons []string `json:"reasons"`
}

func (r itemRow) item() (grounding.QueueItem, error) {
	it := grounding.QueueItem{
		ID: r.ID, RunID: r.RunID, TrajectoryID: r.TrajectoryID, Ordinal: r.Ordinal,
		RunName: r.RunName, ExtID: r.ExtID, Domain: r.Domain, Tool: r.Tool, Source: r.Source,
		Priority: r.Priority, Required: r.Required, State: r.State,
		Verdicts: r.Verdicts, Holders: r.Holders, Human: grounding.Verdict(r.Human), CreatedAt: r.CreatedAt.Time,
	}
	if len(r.Why) > 0 && r.Why[0] == '{' {
		var m manualWhy
		if err := decodeJSON(r.Why, &m); err != nil {
			return it, fmt.Errorf("item %d: decode why: %w", r.ID, err)
		}
		it.Note, it.Why = m.Note, m.Reasons
	} else if len(r.Why) > 0 {
		if err := decodeJSON(r.Why, &it.Why); err != nil {
			return it, fmt.Errorf("item %d: decode why: %w", r.ID, err)
		}
	}
	if len(r.Question) > 0 {
		if err := decodeJSON(r.Question, &it.Args); err != nil {
			return it, fmt.Errorf("item %d: decode evidence: %w", r.ID, err)
		}
	}
	return it, nil
}

// itemSelect reads queue items with what a list or the review screen shows.
// Its two placeholders (skipped = false, expires_at > now) come first. Of
// the decision's evidence it reads only the arguments in question
// (decisions.question, migration 00012): decoding all of it had been 40% of
// the queue page's CPU.
const (
	itemSelect  = `SELECT ` + itemColumns + itemFrom
	itemColumns = `q.id, q.run_id, q.trajectory_id, q.ordinal, q.source, q.why, q.priority, q.required,
	q.state, q.created_at, r.name AS run_name, t.ext_id, t.domain, d.tool, d.question, d.human_verdict,
	(SELECT COUNT(*) FROM claims c WHERE c.item_id = q.id AND c.verdict <> '') AS n_verdicts,
	(SELECT COUNT(*) FROM claims c WHERE c.item_id = q.id AND c.verdict = '' AND c.skipped = ? AND c.expires_at > ?) AS n_holders`
	itemFrom = `
	FROM queue_items q
	JOIN runs r ON r.id = q.run_id
	JOIN trajectories t ON t.id = q.trajectory_id
	JOIN decisions d ON d.trajectory_id = q.trajectory_id AND d.ordinal = q.ordinal`
)

// pageSelect reads a page of queue items as itemSelect does, but picks the
// page first and counts its claims in one grouped read: the two counting
// subqueries per row were 0.4 of the 0.85 ms Postgres spent on a queue
// page of 51 items. Its placeholders: those of conds, then skipped = false
// and expires_at > now.
func pageSelect(conds string, limit int) string {
	return `WITH p AS MATERIALIZED (SELECT q.id, q.run_id, q.trajectory_id, q.ordinal, q.source, q.why, q.priority, q.required,
		q.state, q.created_at FROM queue_items q WHERE 1 = 1` + conds + `
		ORDER BY q.priority DESC, q.created_at, q.id` + limitSQL(limit) + `),
	n AS (SELECT c.item_id, COUNT(*) FILTER (WHERE c.verdict <> '') AS n_verdicts,
		COUNT(*) FILTER (WHERE c.verdict = '' AND c.skipped = ? AND c.expires_at > ?) AS n_holders
		FROM claims c WHERE c.item_id IN (SELECT id FROM p) GROUP BY c.item_id)
	SELECT p.id, p.run_id, p.trajectory_id, p.ordinal, p.source, p.why, p.priority, p.required, p.state, p.created_at,
		r.name AS run_name, t.ext_id, t.domain, d.tool, d.question, d.human_verdict,
		COALESCE(n.n_verdicts, 0) AS n_verdicts, COALESCE(n.n_holders, 0) AS n_holders
	FROM p
	JOIN runs r ON r.id = p.run_id
	JOIN trajectories t ON t.id = p.trajectory_id
	JOIN decisions d ON d.trajectory_id = p.trajectory_id AND d.ordinal = p.ordinal
	LEFT JOIN n ON n.item_id = p.id
	ORDER BY p.priority DESC, p.created_at, p.id`
}

// queueWhere turns a filter into conditions on queue_items q (the state
// aside).
func queueWhere(f grounding.QueueFilter) ([]string, []any) {
	var where []string
	var args []any
	if f.RunID != 0 {
		where = append(where, "q.run_id = ?")
		args = append(args, f.RunID)
	}
	if f.Domain != "" {
		where = append(where, "EXISTS (SELECT 1 FROM trajectories t2 WHERE t2.id = q.trajectory_id AND t2.domain = ?)")
		args = append(args, f.Domain)
	}
	if f.Tool != "" {
		where = append(where, "EXISTS (SELECT 1 FROM decisions d2 WHERE d2.trajectory_id = q.trajectory_id AND d2.ordinal = q.ordinal AND d2.tool = ?)")
		args = append(args, f.Tool)
	}
	if f.Reason != "" {
		where = append(where, "EXISTS (SELECT 1 FROM decision_reasons dr WHERE dr.trajectory_id = q.trajectory_id AND dr.ordinal = q.ordinal AND dr.reason = ?)")
		args = append(args, f.Reason)
	}
	if f.Decision != nil {
		where = append(where, "q.trajectory_id = ? AND q.ordinal = ?")
		args = append(args, f.Decision.TrajectoryID, f.Decision.Ordinal)
	}
	return where, args
}

func and(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " AND " + strings.Join(conds, " AND ")
}

// queueCursor is the keyset position after an item: its priority, creation
// time and id, the queue's order.
func queueCursor(it grounding.QueueItem) string {
	return strconv.Itoa(it.Priority) + "." + strconv.FormatInt(it.CreatedAt.UnixMicro(), 10) + "." + strconv.FormatInt(it.ID, 10)
}

func parseQueueCursor(s string) (prio int, at time.Time, id int64, err error) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return 0, time.Time{}, 0, fmt.Errorf("store: queue cursor %q: %w", s, grounding.ErrInvalid)
	}
	p, err1 := strconv.Atoi(parts[0])
	us, err2 := strconv.ParseInt(parts[1], 10, 64)
	id, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, time.Time{}, 0, fmt.Errorf("store: queue cursor %q: %w", s, grounding.ErrInvalid)
	}
	return p, time.UnixMicro(us).UTC(), id, nil
}

// Queue returns one page of queue items matching f, best first: priority
// descending, then oldest, then id. State "" lists open items, "all" every
// state (but conflicts with NoConflicts). Paging is keyset; a malformed After is grounding.ErrInvalid.
func (db *DB) Queue(ctx context.Context, f grounding.QueueFilter) (grounding.QueuePage, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = defaultPageSize
	}
	limit = min(limit, maxPageSize)
	at := db.now()
	where, args := queueWhere(f)
	switch f.State {
	case "":
		where = append(where, "q.state = ?")
		args = append(args, grounding.QueueOpen)
	case "all":
	case grounding.QueueOpen, grounding.QueueConflict, grounding.QueueDone:
		where = append(where, "q.state = ?")
		args = append(args, f.State)
	default:
		return grounding.QueuePage{}, fmt.Errorf("store: queue: state %q: %w", f.State, grounding.ErrInvalid)
	}
	if f.NoConflicts {
		where = append(where, "q.state <> ?")
		args = append(args, grounding.QueueConflict)
	}
	if f.After != "" {
		p, ct, id, err := parseQueueCursor(f.After)
		if err != nil {
			return grounding.QueuePage{}, err
		}
		where = append(where, "(q.priority < ? OR (q.priority = ? AND (q.created_at > ? OR (q.created_at = ? AND q.id > ?))))")
		args = append(args, p, p, dbTime{ct}, dbTime{ct}, id)
	}
	q := pageSelect(and(where), limit+1)
	args = append(args, false, dbTime{at})
	// Sized up front: grown row by row, these slices of wide rows were a
	// quarter of the queue page's allocations.
	rows := make([]itemRow, 0, limit+1)
	if err := db.sel(ctx, &rows, q, args...); err != nil {
		return grounding.QueuePage{}, storeErr("list queue", err)
	}
	page := grounding.QueuePage{Items: make([]grounding.QueueItem, 0, len(rows))}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	for _, r := range rows {
		it, err := r.item()
		if err != nil {
			return grounding.QueuePage{}, fmt.Errorf("store: list queue: %w", err)
		}
		page.Items = append(page.Items, it)
	}
	if more {
		page.Next = queueCursor(page.Items[len(page.Items)-1])
	}
	return page, nil
}

// QueueItem returns the item with this id, or grounding.ErrNotFound.
func (db *DB) QueueItem(ctx context.Context, id int64) (grounding.QueueItem, error) {
	return db.loadItem(ctx, db.x, id, db.now())
}

// item is loadItem inside a transaction, prepared.
func (t txq) item(ctx context.Context, id int64, at time.Time) (grounding.QueueItem, error) {
	op := fmt.Sprintf("queue item %d", id)
	var r itemRow
	if err := t.get(ctx, &r, itemSelect+` WHERE q.id = ?`, false, dbTime{at}, id); err != nil {
		return grounding.QueueItem{}, storeErr(op, err)
	}
	it, err := r.item()
	if err != nil {
		return grounding.QueueItem{}, fmt.Errorf("store: %s: %w", op, err)
	}
	return it, nil
}

func (db *DB) loadItem(ctx context.Context, q queryer, id int64, at time.Time) (grounding.QueueItem, error) {
	op := fmt.Sprintf("queue item %d", id)
	var r itemRow
	if err := sqlx.GetContext(ctx, q, &r, q.Rebind(itemSelect+` WHERE q.id = ?`), false, dbTime{at}, id); err != nil {
		return grounding.QueueItem{}, storeErr(op, err)
	}
	it, err := r.item()
	if err != nil {
		return grounding.QueueItem{}, fmt.Errorf("store: %s: %w", op, err)
	}
	return it, nil
}

// Next hands the user an item to adjudicate and returns the claim, leased
// for lease (DefaultLease when 0).
//
// A user holds at most one open claim: if they already hold a live one on
// an open item matching f it is renewed and returned (a reload, a second
// tab); any other open claim of theirs is released. Otherwise the best open
// item matching f is claimed among those the user has neither judged nor
// skipped in its current round and whose standing verdicts plus live claims
// of others are fewer than its k. Claiming is atomic: on Postgres the
// candidate row is locked with FOR UPDATE SKIP LOCKED and the claim is
// inserted only if a recount of its holders, made under the lock, leaves a
// slot; on SQLite the whole call is one immediate write transaction. No item
// is handed to more annotators than its k, nor twice to the same one.
// grounding.ErrNotFound means nothing is left for this user.
func (db *DB) Next(ctx context.Context, userID int64, f grounding.QueueFilter, lease time.Duration) (grounding.Claim, error) {
	op := fmt.Sprintf("next item for user %d", userID)
	if c, ok, err := db.held(ctx, userID, f, db.now(), leaseOr(lease)); err != nil || ok {
		return c, storeErr(op, err)
	}
	tx, done, err := db.begin(ctx)
	if err != nil {
		return grounding.Claim{}, storeErr(op, err)
	}
	defer done()
	c, found, err := db.next(ctx, db.q(tx), userID, f, db.now(), leaseOr(lease))
	if err != nil {
		return grounding.Claim{}, storeErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		return grounding.Claim{}, storeErr(op, err)
	}
	if !found {
		return grounding.Claim{}, fmt.Errorf("store: %s: queue empty: %w", op, grounding.ErrNotFound)
	}
	return c, nil
}

// held is Next's path for the common case, without a write transaction:
// the user holds exactly one claim, live on an open item matching f and
// renewed within renewEvery, so there is nothing to release, claim or
// renew, only the claim to read. ok is false whenever Next has more to do.
// (A reload or the next key press on the review screen; on Postgres the
// write transaction had cost a BEGIN, a wait among the writers and a
// commit per view.)
func (db *DB) held(ctx context.Context, userID int64, f grounding.QueueFilter, at time.Time, lease time.Duration) (grounding.Claim, bool, error) {
	fwhere, fargs := queueWhere(f)
	var mine []struct {
		itemRow
		claimFit
	}
	// The user's open claims with their items, in one read (the claims and
	// then the item were two round trips of every review view).
	args := append([]any{false, dbTime{at}, grounding.QueueOpen, dbTime{at}}, fargs...)
	args = append(args, userID, false)
	if err := db.sel(ctx, &mine, `SELECT `+itemColumns+`, `+claimFitColumns(fwhere)+itemFrom+`
		JOIN claims c ON c.item_id = q.id`+openClaimsOf, args...); err != nil {
		return grounding.Claim{}, false, err
	}
	if len(mine) != 1 || !mine[0].Fits || mine[0].ExpiresAt.Time.Sub(at) <= lease-renewEvery(lease) {
		return grounding.Claim{}, false, nil
	}
	m := mine[0]
	it, err := m.item()
	if err != nil {
		return grounding.Claim{}, false, err
	}
	return grounding.Claim{Item: it, UserID: userID, ClaimedAt: m.ClaimedAt.Time, ExpiresAt: m.ExpiresAt.Time}, true, nil
}

// claimFit is one open claim of a user and whether it still fits a filter.
type claimFit struct {
	ItemID    int64  `db:"item_id"`
	ClaimedAt dbTime `db:"claimed_at"`
	ExpiresAt dbTime `db:"expires_at"`
	Fits      bool   `db:"fits"`
}

// mineSQL lists a user's open claims and whether each fits the filter
// conditions fwhere. Arguments: open, now, the filter's, user, false.
func mineSQL(fwhere []string) string {
	return `SELECT ` + claimFitColumns(fwhere) + `
		FROM claims c JOIN queue_items q ON q.id = c.item_id` + openClaimsOf
}

// claimFitColumns are claimFit's columns of claims c and queue_items q.
// Arguments: open, now, the filter's.
func claimFitColumns(fwhere []string) string {
	return `c.item_id, c.claimed_at, c.expires_at, (q.state = ? AND c.expires_at > ?` + and(fwhere) + `) AS fits`
}

// openClaimsOf keeps one user's open claims, oldest first. Arguments:
// user, false.
const openClaimsOf = `
		WHERE c.user_id = ? AND c.verdict = '' AND c.skipped = ?
		ORDER BY c.claimed_at, c.item_id`

// next is Next inside the caller's transaction; found is false when nothing
// is left for the user.
func (db *DB) next(ctx context.Context, q txq, userID int64, f grounding.QueueFilter, at time.Time, lease time.Duration) (grounding.Claim, bool, error) {
	fwhere, fargs := queueWhere(f)
	// 1. The open claims this user holds, and whether each still fits.
	var mine []claimFit
	args := append([]any{grounding.QueueOpen, dbTime{at}}, fargs...)
	args = append(args, userID, false)
	err := q.sel(ctx, &mine, mineSQL(fwhere), args...)
	if err != nil {
		return grounding.Claim{}, false, err
	}
	var itemID int64
	claimedAt, expiresAt := at, at.Add(lease)
	renew := true
	for _, m := range mine {
		if m.Fits && itemID == 0 {
			itemID, claimedAt = m.ItemID, m.ClaimedAt.Time
			// Renewed moments ago (a reload, the next key press): the
			// lease stands. Writing it again on every view of the review
			// screen was a commit per page on Postgres.
			if m.ExpiresAt.Time.Sub(at) > lease-renewEvery(lease) {
				renew, expiresAt = false, m.ExpiresAt.Time
			}
		}
	}
	if len(mine) > 1 || (len(mine) == 1 && itemID == 0) {
		// 2. Release whatever else this user held.
		if _, err := q.exec(ctx, `DELETE FROM claims WHERE user_id = ? AND verdict = '' AND skipped = ? AND item_id <> ?`,
			userID, false, itemID); err != nil {
			return grounding.Claim{}, false, err
		}
	}
	var claimed *grounding.QueueItem
	if itemID != 0 {
		if renew {
			_, err = q.exec(ctx, `UPDATE claims SET expires_at = ? WHERE item_id = ? AND user_id = ?`, dbTime{expiresAt}, itemID, userID)
		}
	} else {
		// 3. Claim anew.
		itemID, claimed, err = db.claimNext(ctx, q, userID, fwhere, fargs, at, lease)
	}
	if err != nil || itemID == 0 {
		return grounding.Claim{}, false, err
	}
	if claimed == nil {
		it, err := q.item(ctx, itemID, at)
		if err != nil {
			return grounding.Claim{}, false, err
		}
		claimed = &it
	}
	return grounding.Claim{Item: *claimed, UserID: userID, ClaimedAt: claimedAt, ExpiresAt: expiresAt}, true, nil
}

// renewEvery is how long after its last renewal opening a claimed item
// again renews the lease: a minute, or a tenth of a shorter lease.
func renewEvery(lease time.Duration) time.Duration { return min(time.Minute, lease/10) }

// holdersSQL counts an item's taken slots: standing verdicts and live
// claims not skipped. Placeholders: skipped = false, expires_at > now.
const holdersSQL = `(SELECT COUNT(*) FROM claims c WHERE c.item_id = q.id AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?)))`

// maxClaimAttempts bounds how many candidates one Next tries when
// concurrent claimers keep filling them (Postgres only).
const maxClaimAttempts = 32

// claimNext claims the best available item for the user and returns its id,
// 0 when none is left, and the item itself when it came back with the claim.
func (db *DB) claimNext(ctx context.Context, q txq, userID int64, fwhere []string, fargs []any, at time.Time, lease time.Duration) (int64, *grounding.QueueItem, error) {
	var tried []int64
	for range maxClaimAttempts {
		args := []any{grounding.QueueOpen, userID, false, false, dbTime{at}}
		args = append(args, fargs...)
		excl := ""
		if len(tried) > 0 {
			excl = " AND q.id NOT IN (?" + strings.Repeat(", ?", len(tried)-1) + ")"
			for _, id := range tried {
				args = append(args, id)
			}
		}
		// The holder count in the WHERE uses the statement's snapshot; a
		// claimer that committed after it is seen by the INSERT below, a new
		// statement run once this transaction holds the row lock.
		query := `SELECT q.id, q.required FROM queue_items q
			WHERE q.state = ?
			AND NOT EXISTS (SELECT 1 FROM claims m WHERE m.item_id = q.id AND m.user_id = ? AND (m.verdict <> '' OR m.skipped <> ?))
			AND ` + holdersSQL + ` < q.required` + and(fwhere) + excl + `
			ORDER BY q.priority DESC, q.created_at, q.id LIMIT 1` + db.d.skipLocked
		var cand []struct {
			ID       int64 `db:"id"`
			Required int   `db:"required"`
		}
		var err error
		if len(tried) == 0 {
			err = q.sel(ctx, &cand, query, args...)
		} else { // a one-off exclusion list: not worth a prepared statement
			err = q.tx.SelectContext(ctx, &cand, q.tx.Rebind(query), args...)
		}
		if err != nil {
			return 0, nil, err
		}
		if len(cand) == 0 {
			return 0, nil, nil
		}
		c := cand[0]
		if db.d.claimItem != "" {
			var rows []itemRow
			err := q.sel(ctx, &rows, db.d.claimItem, c.ID, userID, dbTime{at}, dbTime{at.Add(lease)}, false,
				c.ID, false, dbTime{at}, c.Required, false, dbTime{at})
			if err != nil {
				return 0, nil, err
			}
			if len(rows) == 0 {
				tried = append(tried, c.ID)
				continue
			}
			it, err := rows[0].item()
			if err != nil {
				return 0, nil, err
			}
			it.Holders++ // the claim just made, not in the statement's snapshot
			return c.ID, &it, nil
		}
		// SQLite needs the WHERE to tell INSERT … SELECT from the upsert.
		res, err := q.exec(ctx, `INSERT INTO claims (item_id, user_id, claimed_at, expires_at, verdict, skipped)
			SELECT ?, ?, ?, ?, '', ?
			WHERE (SELECT COUNT(*) FROM claims c WHERE c.item_id = ? AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?))) < ?
			ON CONFLICT (item_id, user_id) DO UPDATE SET claimed_at = excluded.claimed_at, expires_at = excluded.expires_at`,
			c.ID, userID, dbTime{at}, dbTime{at.Add(lease)}, false, c.ID, false, dbTime{at}, c.Required)
		if err != nil {
			return 0, nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, nil, err
		} else if n == 0 {
			tried = append(tried, c.ID)
			continue
		}
		return c.ID, nil, nil
	}
	return 0, nil, nil
}

// Renew extends the user's claim on the item by lease (DefaultLease when
// 0), as the review screen does while its annotator is active. A claim that
// already expired is taken again when the item still has a free slot.
// grounding.ErrNotClaimed, ErrClaimExpired or ErrItemClosed say why not;
// an unknown item is grounding.ErrNotFound.
func (db *DB) Renew(ctx context.Context, userID, itemID int64, lease time.Duration) (time.Time, error) {
	op := fmt.Sprintf("renew claim of user %d on item %d", userID, itemID)
	lease = leaseOr(lease)
	tx, done, err := db.begin(ctx)
	if err != nil {
		return time.Time{}, storeErr(op, err)
	}
	defer done()
	at := db.now()
	it, err := db.lockItemFor(ctx, tx, itemID, userID)
	if err != nil {
		return time.Time{}, err
	}
	c, err := db.holdClaim(ctx, tx, it, userID, at, lease)
	if err != nil {
		return time.Time{}, fmt.Errorf("store: %s: %w", op, err)
	}
	if c.Verdict != "" {
		return time.Time{}, fmt.Errorf("store: %s: already judged: %w", op, grounding.ErrItemClosed)
	}
	if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE claims SET expires_at = ? WHERE item_id = ? AND user_id = ?`),
		dbTime{at.Add(lease)}, itemID, userID); err != nil {
		return time.Time{}, storeErr(op, err)
	}
	if err := tx.Commit(); err != nil {
		return time.Time{}, storeErr(op, err)
	}
	return at.Add(lease), nil
}

// ReleaseExpired deletes the expired claims that carry neither a verdict nor
// a skip (those items are already available again: an expired claim never
// counts) and returns how many it deleted. It only keeps the table small.
func (db *DB) ReleaseExpired(ctx context.Context) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM claims WHERE verdict = '' AND skipped = ? AND expires_at <= ?`),
		false, dbTime{db.now()})
	if err != nil {
		return 0, storeErr("release expired claims", err)
	}
	n, err := res.RowsAffected()
	return n, storeErr("release expired claims", err)
}

// lockedItem is the part of a queue item the write paths need, read with
// the item's row lock held (Postgres) until the transaction ends, and the
// acting user's claim on it, if any.
type lockedItem struct {
	ID           int64  `db:"id"`
	RunID        int64  `db:"run_id"`
	TrajectoryID int64  `db:"trajectory_id"`
	Ordinal      int    `db:"ordinal"`
	Required     int    `db:"required"`
	State        string `db:"state"`

	Claimed bool     `db:"-"`
	Claim   claimRow `db:"-"`
}

func (db *DB) lockItem(ctx context.Context, tx *sqlx.Tx, id int64) (lockedItem, error) {
	var it lockedItem
	err := db.q(tx).get(ctx, &it, `SELECT id, run_id, trajectory_id, ordinal, required, state
		FROM queue_items WHERE id = ?`+db.d.forUpdate, id)
	if err != nil {
		return it, storeErr(fmt.Sprintf("queue item %d", id), err)
	}
	return it, nil
}

// lockItemFor locks item id, then reads userID's claim on it. The claim
// is read by a second statement on purpose: on Postgres a statement that
// waited for the row lock still sees the rows of other tables as they were
// when it started, so a claim read with the lock would miss what the
// transaction that held it (the same user's other tab, a double click) did.
func (db *DB) lockItemFor(ctx context.Context, tx *sqlx.Tx, id, userID int64) (lockedItem, error) {
	it, err := db.lockItem(ctx, tx, id)
	if err != nil {
		return it, err
	}
	var rows []claimRow
	err = db.q(tx).sel(ctx, &rows, `SELECT verdict, skipped, expires_at FROM claims WHERE item_id = ? AND user_id = ?`, id, userID)
	if err != nil {
		return it, storeErr(fmt.Sprintf("claim on queue item %d", id), err)
	}
	if len(rows) > 0 {
		it.Claimed, it.Claim = true, rows[0]
	}
	return it, nil
}

// lockItemEvents is lockItemFor that also reads the item's events, with
// the claim, in the one statement after the lock.
func (db *DB) lockItemEvents(ctx context.Context, tx *sqlx.Tx, id, userID int64) (lockedItem, []grounding.VerdictEvent, error) {
	it, err := db.lockItem(ctx, tx, id)
	if err != nil {
		return it, nil, err
	}
	var rows []struct {
		CVerdict sql.NullString `db:"c_verdict"`
		CSkipped sql.NullBool   `db:"c_skipped"`
		CExpires nullTime       `db:"c_expires"`
		Claimed  bool           `db:"claimed"`
		EID      sql.NullInt64  `db:"e_id"`
		eventRow
	}
	err = db.q(tx).sel(ctx, &rows, `SELECT c.verdict AS c_verdict, c.skipped AS c_skipped, c.expires_at AS c_expires,
		c.item_id IS NOT NULL AS claimed, e.id AS e_id,
		COALESCE(e.id, 0) AS id, e.item_id, COALESCE(e.run_id, 0) AS run_id, COALESCE(e.trajectory_id, 0) AS trajectory_id,
		COALESCE(e.ordinal, 0) AS ordinal, COALESCE(e.user_id, 0) AS user_id, COALESCE(u.name, '') AS user_name,
		COALESCE(e.kind, '') AS kind, COALESCE(e.verdict, '') AS verdict, COALESCE(e.prev_verdict, '') AS prev_verdict,
		COALESCE(e.note, '') AS note, e.undoes, COALESCE(e.created_at, q.created_at) AS created_at
		FROM queue_items q
		LEFT JOIN claims c ON c.item_id = q.id AND c.user_id = ?
		LEFT JOIN verdict_events e ON e.item_id = q.id
		LEFT JOIN users u ON u.id = e.user_id
		WHERE q.id = ? ORDER BY e.id`, userID, id)
	if err != nil {
		return it, nil, storeErr(fmt.Sprintf("events of queue item %d", id), err)
	}
	var evs []grounding.VerdictEvent
	for i, r := range rows {
		if i == 0 && r.Claimed {
			it.Claimed = true
			it.Claim = claimRow{Verdict: r.CVerdict.String, Skipped: r.CSkipped.Bool, ExpiresAt: r.CExpires.dbTime}
		}
		if r.EID.Valid {
			evs = append(evs, r.event())
		}
	}
	return it, evs, nil
}

type claimRow struct {
	Verdict   string `db:"verdict"`
	Skipped   bool   `db:"skipped"`
	ExpiresAt dbTime `db:"expires_at"`
}

// holdClaim checks that the user may act on the item, locked by
// lockItemFor: they hold a claim on it that is live, or expired while a slot
// is still free (then it is taken again for lease, so no work is lost to a
// coffee break). A claim that carries a verdict is returned as is: the
// caller decides what a repeated action means.
func (db *DB) holdClaim(ctx context.Context, tx *sqlx.Tx, it lockedItem, userID int64, at time.Time, lease time.Duration) (claimRow, error) {
	if !it.Claimed || it.Claim.Skipped {
		return claimRow{}, grounding.ErrNotClaimed
	}
	c := it.Claim
	if c.Verdict != "" {
		return c, nil
	}
	if it.State != grounding.QueueOpen {
		return c, grounding.ErrItemClosed
	}
	if c.ExpiresAt.After(at) {
		return c, nil
	}
	q := db.q(tx)
	var others int
	err := q.get(ctx, &others, `SELECT COUNT(*) FROM claims c WHERE c.item_id = ? AND c.user_id <> ?
		AND (c.verdict <> '' OR (c.skipped = ? AND c.expires_at > ?))`, it.ID, userID, false, dbTime{at})
	if err != nil {
		return c, storeErr("count holders", err)
	}
	if others >= it.Required {
		return c, grounding.ErrClaimExpired
	}
	c.ExpiresAt = dbTime{at.Add(lease)}
	_, err = q.exec(ctx, `UPDATE claims SET expires_at = ? WHERE item_id = ? AND user_id = ?`, c.ExpiresAt, it.ID, userID)
	return c, storeErr("retake claim", err)
}
