package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"groundwork/grounding"
)

func TestParseDSN(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a", "g.db")
	tests := []struct {
		dsn, name, driverDSN string
	}{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres", "postgres://u@h:5432/db?sslmode=disable"},
		{"postgresql://u@h/db", "postgres", "postgresql://u@h/db"},
		{"sqlite://" + p, "sqlite", p + "?" + sqliteParams},
		{"file:" + p + "?mode=ro", "sqlite", p + "?" + sqliteParams},
		{p, "sqlite", p + "?" + sqliteParams},
	}
	for _, tt := range tests {
		name, driverDSN, err := parseDSN(tt.dsn)
		if err != nil || name != tt.name || driverDSN != tt.driverDSN {
			t.Errorf("parseDSN(%q) = %q, %q, %v; want %q, %q", tt.dsn, name, driverDSN, err, tt.name, tt.driverDSN)
		}
	}
	for _, bad := range []string{"", "sqlite://", "file:?x=1"} {
		if _, _, err := parseDSN(bad); !errors.Is(err, grounding.ErrInvalid) {
			t.Errorf("parseDSN(%q) error = %v, want ErrInvalid", bad, err)
		}
	}
	if !strings.Contains(sqliteParams, "_txlock=immediate") {
		t.Error("SQLite write transactions must begin IMMEDIATE")
	}
}
