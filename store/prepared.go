package store

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// prepared returns query (already rebound) prepared on the pool, preparing
// it once. database/sql then prepares it lazily on each connection and keeps
// it there, so Postgres plans a hot query once per connection instead of on
// every call (planning the next-item query measured 2 ms against 0.2 ms to
// run it), and SQLite parses it once.
func (db *DB) prepared(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := db.prep.Load(query); ok {
		return st.(*sqlx.Stmt), nil
	}
	st, err := db.x.PreparexContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.prep.LoadOrStore(query, st); loaded {
		st.Close()
		return prev.(*sqlx.Stmt), nil
	}
	return st, nil
}

// txq runs the adjudication statements of one transaction through the
// prepared-statement cache. Queries are written with ? and rebound here.
type txq struct {
	db *DB
	tx *sqlx.Tx
}

func (db *DB) q(tx *sqlx.Tx) txq { return txq{db: db, tx: tx} }

func (t txq) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	query = t.tx.Rebind(query)
	if t.db == nil {
		return t.tx.PreparexContext(ctx, query)
	}
	if st, ok := t.db.prep.Load(query); ok {
		return t.tx.StmtxContext(ctx, st.(*sqlx.Stmt)), nil
	}
	// Not cached yet: prepare it on this transaction's connection for now.
	// Preparing on the pool here would need a second connection while this
	// transaction holds one, which deadlocks a pool capped below the number
	// of concurrent transactions; a goroutine caches it once a connection
	// is free.
	t.db.prepareLater(query)
	return t.tx.PreparexContext(ctx, query)
}

// prepareLater caches query on the pool in a goroutine Close waits for.
func (db *DB) prepareLater(query string) {
	db.bgMu.Lock()
	defer db.bgMu.Unlock()
	if db.closed {
		return
	}
	db.background.Add(1)
	go func() {
		defer db.background.Done()
		_, _ = db.prepared(context.Background(), query)
	}()
}

func (t txq) get(ctx context.Context, dest any, query string, args ...any) error {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return err
	}
	return st.GetContext(ctx, dest, args...)
}

func (t txq) sel(ctx context.Context, dest any, query string, args ...any) error {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return err
	}
	return st.SelectContext(ctx, dest, args...)
}

func (t txq) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := t.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// begin starts an adjudication write transaction; done rolls it back if it
// was not committed and lets the next writer in. Writers of this process
// queue in Go before BEGIN, at most dialect.writers at once:
//
//   - SQLite admits one writer at a time anyway, and its busy handler lets
//     waiters poll with sleeps of up to 100 ms, so under 32 annotators some
//     waited seconds while others went first (p99 1.5 s against a p50 of
//     1 ms); a queue in Go hands the lock on at once and in arrival order.
//   - On Postgres, 32 backends working at once on 2 cores were descheduled
//     while holding row locks and buffer locks, and everyone behind them
//     waited a scheduling slice: at 500 verdicts/s, p50 3 ms but p95
//     230 ms. With 8 at a time the others wait their turn in Go instead.
//
// A transaction begun here never needs a second connection (see
// txq.stmt), so the queue cannot deadlock against the pool.
func (db *DB) begin(ctx context.Context) (tx *sqlx.Tx, done func(), err error) {
	db.writersOnce.Do(func() { db.writers = make(chan struct{}, max(db.d.writers, 1)) })
	select {
	case db.writers <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	release := func() { <-db.writers }
	tx, err = db.x.BeginTxx(ctx, nil)
	if err != nil {
		release()
		return nil, nil, err
	}
	return tx, func() { _ = tx.Rollback(); release() }, nil
}

// get runs a read outside any transaction through the prepared-statement
// cache: the reads every page makes (session, user, run, trajectory
// windows, queue lists) and the figures the review screen reads on every
// verdict. Planning them was a third of Postgres' time per page under 16
// clients (the queue list: 1.2 ms to plan, 0.9 ms to run). Only queries
// whose text comes from a bounded set belong here (filter combinations
// yes, an IN list as long as its input no): each text stays prepared on
// every connection of the pool.
func (db *DB) get(ctx context.Context, dest any, query string, args ...any) error {
	st, err := db.prepared(ctx, db.x.Rebind(query))
	if err != nil {
		return err
	}
	return st.GetContext(ctx, dest, args...)
}

func (db *DB) sel(ctx context.Context, dest any, query string, args ...any) error {
	st, err := db.prepared(ctx, db.x.Rebind(query))
	if err != nil {
		return err
	}
	return st.SelectContext(ctx, dest, args...)
}

// preparedIn is the longest IN list selIn prepares.
const preparedIn = 8

// selIn is sel for a query whose text grows with an IN list of n items:
// prepared (planned once per connection) up to preparedIn items, which
// bounds how many such statements each connection keeps; planned on every
// call beyond. Unprepared, the coverage page's three small reads spent
// 0.45 ms a view in Postgres' planner.
func (db *DB) selIn(ctx context.Context, dest any, n int, query string, args ...any) error {
	if n <= preparedIn {
		return db.sel(ctx, dest, query, args...)
	}
	return db.x.SelectContext(ctx, dest, db.x.Rebind(query), args...)
}
