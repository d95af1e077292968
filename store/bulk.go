package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"
)

// stmts prepares each distinct statement once per transaction and reuses
// it: a full chunk of a multi-row INSERT is the same text every time, and
// parsing it again would cost more than executing it (SQLite) or an extra
// round trip (Postgres).
type stmts struct {
	tx *sqlx.Tx
	// conn is the connection tx runs on, for copyIn: database/sql hands
	// out the driver's connection of a sql.Conn (Raw), never of a Tx.
	conn *sql.Conn
	m    map[string]*sql.Stmt
}

func newStmts(conn *sqlx.Conn, tx *sqlx.Tx) *stmts {
	return &stmts{tx: tx, conn: conn.Conn, m: make(map[string]*sql.Stmt)}
}

// beginBulk begins a write transaction for bulk writes on a connection of
// its own (see stmts.conn). The caller rolls tx back or commits it, then
// closes conn, which returns the connection to the pool.
func (db *DB) beginBulk(ctx context.Context) (*sqlx.Conn, *sqlx.Tx, error) {
	conn, err := db.x.Connx(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx, err := conn.BeginTxx(ctx, nil)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, tx, nil
}

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
//
// It hands the rows to lib/pq's COPY statement itself, on the connection
// of the transaction: through database/sql, each row's values went through
// its argument conversion (driver checks, reflection, a slice of named
// values per row), a twentieth of an import's CPU. The transaction stays
// the one COPY runs in: Raw holds the connection's lock as every statement
// of tx does, and lib/pq refuses COPY outside a transaction, so rows can
// never land beside it, even after a cancelled context rolled it back.
func copyIn(ctx context.Context, s *stmts, _ *dialect, table string, cols []string, args []any) error {
	q := "COPY " + table + " (" + strings.Join(cols, ", ") + ") FROM STDIN"
	return s.conn.Raw(func(dc any) error {
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if err != nil {
			return err
		}
		defer st.Close()
		n := len(cols)
		row := make([]driver.Value, n) // lib/pq encodes a row as Exec gets it
		for i := 0; i < len(args); i += n {
			if err := ctx.Err(); err != nil {
				return err
			}
			for j, v := range args[i : i+n] {
				if row[j], err = copyValue(v); err != nil {
					return fmt.Errorf("column %s: %w", cols[j], err)
				}
			}
			if _, err := st.Exec(row); err != nil { //nolint:staticcheck // lib/pq's COPY has no ExecContext
				return err
			}
		}
		_, err = st.Exec(nil) //nolint:staticcheck // ends the COPY, reporting its errors
		return err
	})
}

// copyValue converts a value of a bulk row to what database/sql would have
// handed lib/pq for it: the types the rows hold by a type switch, anything
// else as database/sql converts it.
func copyValue(v any) (driver.Value, error) {
	switch v := v.(type) {
	case nil, int64, string, bool:
		return v, nil
	case int:
		return int64(v), nil
	case dbTime:
		return v.Value()
	}
	return driver.DefaultParameterConverter.ConvertValue(v)
}
