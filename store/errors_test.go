package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/lib/pq"

	"groundwork/grounding"
)

// sqliteErrors returns real errors from modernc's driver for a unique, a
// primary-key and a check violation.
func sqliteErrors(t *testing.T) (unique, pk, check error) {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	for _, q := range []string{
		`CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT UNIQUE, n INTEGER CHECK (n > 0))`,
		`INSERT INTO u VALUES (1, 'a', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	_, unique = db.Exec(`INSERT INTO u VALUES (2, 'a', 1)`)
	_, pk = db.Exec(`INSERT INTO u VALUES (1, 'b', 1)`)
	_, check = db.Exec(`INSERT INTO u VALUES (3, 'c', 0)`)
	if unique == nil || pk == nil || check == nil {
		t.Fatalf("sqlite did not fail: %v, %v, %v", unique, pk, check)
	}
	return unique, pk, check
}

func TestStoreErr(t *testing.T) {
	unique, pk, check := sqliteErrors(t)
	other := errors.New("connection reset")
	tests := []struct {
		name     string
		in       error
		sentinel error // nil: neither ErrNotFound nor ErrConflict
		keep     error // still reachable with errors.Is
		msg      string
	}{
		{"no rows", sql.ErrNoRows, grounding.ErrNotFound, nil, "store: op: not found"},
		{"wrapped no rows", fmt.Errorf("scan: %w", sql.ErrNoRows), grounding.ErrNotFound, nil, "store: op: not found"},
		{"postgres unique", &pq.Error{Code: "23505", Message: "duplicate key"}, grounding.ErrConflict, nil, "store: op: conflict: "},
		{"postgres foreign key", &pq.Error{Code: "23503", Message: "fk"}, nil, nil, "store: op: "},
		{"postgres check", &pq.Error{Code: "23514", Message: "check"}, nil, nil, "store: op: "},
		{"sqlite unique", unique, grounding.ErrConflict, unique, "store: op: conflict: "},
		{"sqlite primary key", pk, grounding.ErrConflict, pk, "store: op: conflict: "},
		{"sqlite check", check, nil, check, "store: op: "},
		{"other", other, nil, other, "store: op: connection reset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := storeErr("op", tt.in)
			if got == nil {
				t.Fatalf("storeErr(%v) = nil", tt.in)
			}
			for _, s := range []error{grounding.ErrNotFound, grounding.ErrConflict} {
				if errors.Is(got, s) != (s == tt.sentinel) {
					t.Errorf("storeErr(%v) = %v; errors.Is(%v) = %v", tt.in, got, s, !(s == tt.sentinel))
				}
			}
			if tt.keep != nil && !errors.Is(got, tt.keep) {
				t.Errorf("storeErr(%v) = %v, lost the driver error", tt.in, got)
			}
			if !strings.HasPrefix(got.Error(), tt.msg) {
				t.Errorf("storeErr(%v) = %q, want prefix %q", tt.in, got, tt.msg)
			}
		})
	}
	if err := storeErr("op", nil); err != nil {
		t.Errorf("storeErr(nil) = %v, want nil", err)
	}
}
