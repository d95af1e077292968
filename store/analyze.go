package store

import (
	"context"
	"slices"
	"strings"

	"github.com/lib/pq"
)

// analyzeGrown refreshes the Postgres planner statistics of the tables a
// bulk write changed by more than autovacuum's own threshold: 50 rows plus
// 10% of the rows the table's statistics knew of (pg_class.reltuples).
// changed maps each table to the rows written. Autovacuum would do the
// same a minute or more after a bulk import, if it runs at all; until then
// plans are built for the empty tables of before (the queue page joined all
// 2,376 queued items of a fresh 35,000-trajectory run before keeping 50:
// 20 ms instead of 1). The log payload columns carry statistics target 0
// (migration 00011), so this samples only the keys queries filter on: 0.8 s
// after importing 35,000 trajectories. The counts come from the caller, not
// from pg_stat_user_tables, whose counters reach the view up to seconds
// after a commit.
//
// SQLite plans from its indexes alone; there it does nothing. It runs after
// the write's commit, on its own connection: a failure leaves the import in
// place and is returned for the caller to report or ignore.
func (db *DB) analyzeGrown(ctx context.Context, changed map[string]int) error {
	if db.d.name != "postgres" || len(changed) == 0 {
		return nil
	}
	tables := make([]string, 0, len(changed))
	for t := range changed {
		tables = append(tables, t)
	}
	var known []struct {
		Table string  `db:"relname"`
		Rows  float64 `db:"reltuples"`
	}
	err := db.x.SelectContext(ctx, &known, `
		SELECT relname, GREATEST(reltuples, 0)::float8 AS reltuples FROM pg_class
		WHERE relname = ANY($1) AND relkind = 'r' AND relnamespace = current_schema()::regnamespace`,
		pq.Array(tables))
	if err != nil {
		return storeErr("analyze", err)
	}
	var grown []string
	for _, k := range known {
		if float64(changed[k.Table]) > 50+0.1*k.Rows {
			grown = append(grown, pq.QuoteIdentifier(k.Table))
		}
	}
	if len(grown) == 0 {
		return nil
	}
	slices.Sort(grown)
	if _, err := db.x.ExecContext(ctx, "ANALYZE "+strings.Join(grown, ", ")); err != nil {
		return storeErr("analyze", err)
	}
	return nil
}
