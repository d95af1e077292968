package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // registers driver "postgres"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers driver "sqlite"

	"groundwork/grounding"
	"groundwork/migrations"
)

func init() {
	// sqlx knows mattn's "sqlite3" but not modernc's "sqlite"; without this,
	// Rebind would leave ? alone by accident rather than by design.
	sqlx.BindDriver("sqlite", sqlx.QUESTION)
}

// dialect is everything that differs between the two databases. Methods
// read these fields instead of branching on the dialect name.
type dialect struct {
	name   string        // what DB.Dialect reports
	driver string        // database/sql driver name
	goose  goose.Dialect // goose's name for the SQL flavor
	dir    string        // migration folder in migrations.FS
	// maxParams is the most bind parameters one statement may carry
	// (SQLITE_MAX_VARIABLE_NUMBER; Postgres' int16 parameter count).
	maxParams int
	// extIDContains is the case-insensitive substring filter on ext_id; its
	// parameter is a LIKE pattern escaped with backslash.
	extIDContains string
	// migrationLock serializes concurrent migrators (several app instances
	// starting against one Postgres). SQLite needs none: its write lock does it.
	migrationLock func() ([]goose.ProviderOption, error)
	// bulk writes the messages and decisions of an import (trajectories
	// need RETURNING ids, so they always use multi-row INSERT).
	bulk bulkInserter
	// forUpdate ends a SELECT whose rows the transaction will change, and
	// skipLocked one that hands out queue items: Postgres locks the rows
	// (skipping those another claimer holds); SQLite needs neither, since a
	// write transaction there is BEGIN IMMEDIATE and so already exclusive.
	forUpdate, skipLocked string
	// Single-statement forms of the adjudication hot path (hotpath_pg.go);
	// "" runs the portable statements one by one.
	recordVerdict, settleRead, settleWrite, claimItem string
	// writers is how many adjudication write transactions may run at once
	// (DB.begin): 1 on SQLite, whose writer is alone anyway; on Postgres a
	// few per core.
	writers int
}

var dialects = map[string]dialect{
	"sqlite": {
		name:          "sqlite",
		driver:        "sqlite",
		goose:         goose.DialectSQLite3,
		dir:           "sqlite",
		maxParams:     32766,
		extIDContains: `t.ext_id LIKE ? ESCAPE '\'`, // LIKE folds ASCII case in SQLite
		migrationLock: func() ([]goose.ProviderOption, error) { return nil, nil },
		bulk:          insertValues,
		writers:       1,
	},
	"postgres": {
		name:          "postgres",
		driver:        "postgres",
		goose:         goose.DialectPostgres,
		dir:           "postgres",
		maxParams:     65535,
		extIDContains: `t.ext_id ILIKE ? ESCAPE '\'`,
		migrationLock: func() ([]goose.ProviderOption, error) {
			l, err := lock.NewPostgresSessionLocker()
			if err != nil {
				return nil, err
			}
			return []goose.ProviderOption{goose.WithSessionLocker(l)}, nil
		},
		// COPY measured 10-20% faster than multi-row INSERT with 40% fewer
		// client allocations (BenchmarkImport); SQLite has no COPY.
		bulk:       copyIn,
		forUpdate:  " FOR UPDATE",
		skipLocked: " FOR UPDATE SKIP LOCKED",

		recordVerdict: pgRecordVerdict,
		settleRead:    pgSettleRead,
		settleWrite:   pgSettleWrite,
		claimItem:     pgClaimItem,
		writers:       8,
	},
}

// maxIdleConns is how many idle connections the pool keeps for the next
// requests (see Open).
const maxIdleConns = 32

// DB is groundwork's database, SQLite or PostgreSQL. It is safe for
// concurrent use.
type DB struct {
	x *sqlx.DB
	d dialect
	// clock, when set, replaces the wall clock for adjudication (leases,
	// event times): tests move time instead of sleeping.
	clock atomic.Pointer[func() time.Time]
	// prep caches the statements of the adjudication hot path, prepared on
	// the pool (query → *sqlx.Stmt): parsing and planning them on every
	// verdict cost more than running them (see prepared.go).
	prep sync.Map
	// writers admits this process's adjudication write transactions, at
	// most dialect.writers at a time (see DB.begin).
	writers     chan struct{}
	writersOnce sync.Once
	// background counts the statement preparations txq.stmt started in
	// goroutines; Close waits for them, and none start once closed is set,
	// so no connection opens (creating SQLite's -wal and -shm files) after
	// Close returns.
	background sync.WaitGroup
	bgMu       sync.Mutex
	closed     bool
}

// sqliteParams are the connection settings of every SQLite connection:
// foreign keys enforced; WAL so readers never wait for the writer; a busy
// timeout so a second writer waits instead of failing at once; synchronous
// NORMAL, which is durable enough under WAL and much faster; and BEGIN
// IMMEDIATE for write transactions, so two transactions never both read and
// then deadlock upgrading to the write lock (the busy timeout cannot help
// there). Read-only transactions still begin DEFERRED.
const sqliteParams = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"

// Open connects to dsn and runs the pending migrations.
//
// A dsn starting with postgres:// or postgresql:// opens PostgreSQL through
// lib/pq. Anything else names a SQLite file, opened through modernc.org/sqlite:
// "sqlite://PATH", "file:PATH" or a plain PATH; a query string after PATH is
// ignored (the store sets its own pragmas) and the parent directory is
// created. An empty dsn is grounding.ErrInvalid.
//
// No error it returns holds the dsn's password: they reach logs and the
// command line (see redactDSN).
func Open(ctx context.Context, dsn string) (*DB, error) {
	db, err := open(ctx, dsn)
	if err != nil {
		return nil, redactErr(err, dsn)
	}
	return db, nil
}

func open(ctx context.Context, dsn string) (*DB, error) {
	name, driverDSN, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	d := dialects[name]
	var x *sqlx.DB
	if name == "postgres" {
		x, err = openPostgres(driverDSN)
	} else {
		x, err = sqlx.Open(d.driver, driverDSN)
	}
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", name, err)
	}
	// database/sql keeps 2 idle connections by default: with a team
	// working in bursts, every other request opened a new connection (a
	// Postgres backend, a TLS-less handshake, and the hot statements
	// prepared again on it). Measured on the adjudication benchmark at
	// 250 verdicts/s from 32 annotators: p50 233 ms with the default, see
	// BENCHMARKS.md. Idle connections close after a few minutes instead.
	x.SetMaxIdleConns(maxIdleConns)
	x.SetConnMaxIdleTime(5 * time.Minute)
	db := &DB{x: x, d: d}
	if err := db.Ping(ctx); err != nil {
		x.Close()
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		x.Close()
		return nil, err
	}
	return db, nil
}

// parseDSN returns the dialect name and the driver's data source name.
func parseDSN(dsn string) (name, driverDSN string, err error) {
	switch {
	case dsn == "":
		return "", "", fmt.Errorf("store: open: empty dsn: %w", grounding.ErrInvalid)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn, nil
	}
	path := dsn
	for _, prefix := range []string{"sqlite://", "file:"} {
		if strings.HasPrefix(path, prefix) {
			path = strings.TrimPrefix(path, prefix)
			break
		}
	}
	path, _, _ = strings.Cut(path, "?")
	if path == "" {
		return "", "", fmt.Errorf("store: open %q: no file path: %w", dsn, grounding.ErrInvalid)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", "", fmt.Errorf("store: open %q: %w", dsn, err)
	}
	return "sqlite", path + "?" + sqliteParams, nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.bgMu.Lock()
	db.closed = true
	db.bgMu.Unlock()
	db.background.Wait()
	db.prep.Range(func(_, st any) bool {
		st.(*sqlx.Stmt).Close()
		return true
	})
	return db.x.Close()
}

// Dialect returns "sqlite" or "postgres".
func (db *DB) Dialect() string {
	return db.d.name
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	return storeErr("ping", db.x.PingContext(ctx))
}

// provider returns a goose provider over this dialect's migration folder.
func (db *DB) provider() (*goose.Provider, error) {
	dir, err := fs.Sub(migrations.FS, db.d.dir)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	opts, err := db.d.migrationLock()
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	// Only the embedded SQL files: Go migrations registered globally by some
	// other package must never run against this database.
	opts = append(opts, goose.WithDisableGlobalRegistry(true))
	p, err := goose.NewProvider(db.d.goose, db.x.DB, dir, opts...)
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return p, nil
}

// Version returns the current migration version of the database.
func (db *DB) Version(ctx context.Context) (int64, error) {
	p, err := db.provider()
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: migration version: %w", err)
	}
	return v, nil
}

// Migrate applies the pending migrations and returns their versions, in
// order; none pending returns an empty slice. Open already migrates; this is
// for `groundwork migrate`.
func (db *DB) Migrate(ctx context.Context) ([]int64, error) {
	p, err := db.provider()
	if err != nil {
		return nil, err
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate %s: %w", db.d.name, err)
	}
	applied := make([]int64, 0, len(results))
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}
