package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"groundwork/grounding"
)

// storeErr is the one place driver errors become what callers branch on:
//
//   - sql.ErrNoRows                          → grounding.ErrNotFound
//   - a unique or primary-key violation
//     (Postgres 23505, SQLite 2067 / 1555)   → grounding.ErrConflict, the
//     driver error kept in the chain for its constraint name
//   - SQLite busy or locked (5, 6 and their
//     extended codes), after busy_timeout    → grounding.ErrBusy
//   - anything else                          → wrapped as is
//
// op says what the store was doing ("create user \"ann\""); the result reads
// "store: <op>: <cause>". nil stays nil.
func storeErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("store: %s: %w", op, grounding.ErrNotFound)
	case isUniqueViolation(err):
		return fmt.Errorf("store: %s: %w: %w", op, grounding.ErrConflict, err)
	case isBusy(err):
		return fmt.Errorf("store: %s: %w: %w", op, grounding.ErrBusy, err)
	default:
		return fmt.Errorf("store: %s: %w", op, err)
	}
}

// isBusy reports whether err is SQLite's "database is locked": another
// connection held the write lock past busy_timeout (an import's
// transaction, which holds it for the whole file).
func isBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}

// isUniqueViolation reports whether err is a driver's uniqueness error.
func isUniqueViolation(err error) bool {
	if pq.As(err, pqerror.UniqueViolation) != nil {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return true
		}
	}
	return false
}
