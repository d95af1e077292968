package store

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	"groundwork/grounding"
)

// TestStoreErrBusy: SQLite's "database is locked", which a write meets
// while an import holds the lock past busy_timeout, becomes ErrBusy so the
// pages can say "try again" instead of "internal error".
func TestStoreErrBusy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "busy.db")
	holder, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(ctx, `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	tx, err := holder.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.BeginTx(ctx, nil)
	if err == nil {
		t.Fatal("a second writer got the lock")
	}
	if got := storeErr("verdict", err); !errors.Is(got, grounding.ErrBusy) {
		t.Errorf("storeErr(%v) = %v; want ErrBusy", err, got)
	}
	if got := storeErr("verdict", errors.New("disk I/O error")); errors.Is(got, grounding.ErrBusy) {
		t.Errorf("another error became ErrBusy: %v", got)
	}
}
