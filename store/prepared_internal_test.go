package store

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestCloseWaitsForBackgroundPreparation: a statement txq.stmt hands to a
// goroutine for caching may still be waiting for a connection when Close
// is called. Close must wait for it, so that no connection is open (and no
// SQLite -wal or -shm file is being created) once Close has returned: the
// contract suite's temporary directories failed to be removed otherwise.
func TestCloseWaitsForBackgroundPreparation(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	db.x.SetMaxOpenConns(1)
	tx, err := db.x.BeginTxx(ctx, nil) // holds the only connection
	if err != nil {
		t.Fatal(err)
	}
	db.prepareLater("SELECT 1")
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while its background preparation still waited for a connection", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if n := db.x.Stats().OpenConnections; n != 0 {
		t.Errorf("%d connections open after Close, want 0", n)
	}
	db.prepareLater("SELECT 2") // after Close: must not start anything
	db.background.Wait()
	if _, ok := db.prep.Load("SELECT 2"); ok {
		t.Error("a statement was prepared after Close")
	}
}
