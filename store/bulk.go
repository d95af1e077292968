package store

import (
	"context"
	"strings"

	"github.com/jmoiron/sqlx"
)

// A bulkInserter writes rows into table inside tx. args holds the rows one
// after the other, len(cols) values each.
type bulkInserter func(ctx context.Context, tx *sqlx.Tx, d *dialect, table string, cols []string, args []any) error

// maxRowsPerInsert caps one multi-row INSERT below the parameter limit too:
// past a few hundred rows a longer statement only costs more to parse.
const maxRowsPerInsert = 1000

// insertValues writes rows with multi-row INSERT ... VALUES statements,
// chunked under the dialect's parameter limit: one round trip per chunk
// instead of one per row.
func insertValues(ctx context.Context, tx *sqlx.Tx, d *dialect, table string, cols []string, args []any) error {
	n := len(cols)
	per := min(d.maxParams/n, maxRowsPerInsert)
	for len(args) > 0 {
		rows := min(len(args)/n, per)
		chunk := args[:rows*n]
		args = args[rows*n:]
		if _, err := tx.ExecContext(ctx, tx.Rebind(valuesSQL(table, cols, rows)), chunk...); err != nil {
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
