package store

import (
	"database/sql/driver"
	"fmt"
	"time"
)

// timeLayout is how SQLite stores times: UTC with a fixed-width microsecond
// fraction, so comparing the text compares the instants (sessions expire by
// "expiry > ?"). Postgres stores the same instants in TIMESTAMPTZ columns and
// parses this text for parameters; both keep microseconds.
const timeLayout = "2006-01-02T15:04:05.000000Z"

// dbTime is the single representation of a time in the database, hidden here.
// It writes UTC text and reads either that text (SQLite) or a time.Time
// (lib/pq), always returning UTC.
type dbTime struct{ time.Time }

// Value implements driver.Valuer.
func (t dbTime) Value() (driver.Value, error) {
	return t.UTC().Format(timeLayout), nil
}

// Scan implements sql.Scanner.
func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		t.Time = v.UTC()
		return nil
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	default:
		return fmt.Errorf("store: scan time from %T", src)
	}
}

func (t *dbTime) parse(s string) error {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("store: scan time %q: %w", s, err)
	}
	t.Time = v.UTC()
	return nil
}

// now is the time a transaction or statement uses, truncated to what both
// databases keep so values read back compare equal to values written.
func now() time.Time {
	return time.Now().UTC().Truncate(time.Microsecond)
}

// nullTime is a dbTime that may be NULL (the zero time).
type nullTime struct{ dbTime }

// Scan implements sql.Scanner.
func (t *nullTime) Scan(src any) error {
	if src == nil {
		t.Time = time.Time{}
		return nil
	}
	return t.dbTime.Scan(src)
}
