package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/jmoiron/sqlx"
)

// stmts prepares each distinct statement once per transaction and reuses
// it: a full chunk of a multi-row INSERT is the same text every time, and
// parsing it again would cost more than executing it (SQLite) or an extra
// round trip (Postgres).
type stmts struct {
	tx *sqlx.Tx
	m  map[string]*sql.Stmt
}

func newStmts(tx *sqlx.Tx) *stmts { return &stmts{tx: tx, m: make(map[string]*sql.Stmt)} }

// get returns the prepared form of query (already rebound).
func (s *stmts) get(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := s.m[query]; ok {
		return st, nil
	}
	st, err := s.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.m[query] = st
	return st, nil
}

// close releases every prepared statement.
func (s *stmts) close() {
	for _, st := range s.m {
		st.Close()
	}
}

// A bulkInserter writes rows into table inside the transaction of s. args
// holds the rows one after the other, len(cols) values each.
type bulkInserter func(ctx context.Context, s *stmts, d *dialect, table string, cols []string, args []any) error

// rowsPerInsert is the chunk of one multi-row INSERT. Measured on SQLite
// (BenchmarkImport): 200 to 1000 rows perform alike, one row per statement
// is about 30% slower.
const rowsPerInsert = 500

// insertValues writes rows with multi-row INSERT ... VALUES statements,
// chunked under the dialect's parameter limit: one round trip per chunk
// instead of one per row.
func insertValues(ctx context.Context, s *stmts, d *dialect, table string, cols []string, args []any) error {
	n := len(cols)
	per := min(d.maxParams/n, rowsPerInsert)
	for len(args) > 0 {
		rows := min(len(args)/n, per)
		chunk := args[:rows*n]
		args = args[rows*n:]
		st, err := s.get(ctx, s.tx.Rebind(valuesSQL(table, cols, rows)))
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, chunk...); err != nil {
			return err
		}
	}
	return nil
}

// valuesSQL returns "INSERT INTO table (cols) VALUES (?, ...), ..." for rows rows.
func valuesSQL(table string, cols []string, rows int) string {
	tuple := "(?" + strings.Repeat(", ?", len(cols)-1) + ")"
	var b strings.Builder
	b.Grow(len(table) + 32 + 8*len(cols) + rows*(len(tuple)+2))
	b.WriteString("INSERT INTO ")
	b.WriteString(table)
	b.WriteString(" (")
	b.WriteString(strings.Join(cols, ", "))
	b.WriteString(") VALUES ")
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	return b.String()
}

// copyIn writes rows with Postgres COPY FROM STDIN (lib/pq streams them in
// the text format, no statement text per row and no parameter limit).
func copyIn(ctx context.Context, s *stmts, _ *dialect, table string, cols []string, args []any) error {
	st, err := s.tx.PrepareContext(ctx, "COPY "+table+" ("+strings.Join(cols, ", ")+") FROM STDIN")
	if err != nil {
		return err
	}
	defer st.Close()
	n := len(cols)
	for i := 0; i < len(args); i += n {
		if _, err := st.ExecContext(ctx, args[i:i+n]...); err != nil {
			return err
		}
	}
	_, err = st.ExecContext(ctx)
	return err
}
