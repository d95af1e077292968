package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peterldowns/pgtestdb"
	"github.com/pressly/goose/v3"

	"groundwork/grounding"
	"groundwork/migrations"
	"groundwork/store"
	"groundwork/store/storetest"
)

func migrationFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := fs.ReadDir(migrations.FS, dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestMigrationFolders checks that both dialects have the same migrations,
// numbered 1, 2, 3... and annotated for goose.
func TestMigrationFolders(t *testing.T) {
	lite, pg := migrationFiles(t, "sqlite"), migrationFiles(t, "postgres")
	if !slices.Equal(lite, pg) {
		t.Fatalf("migration files differ:\nsqlite   %v\npostgres %v", lite, pg)
	}
	if len(lite) == 0 {
		t.Fatal("no migrations")
	}
	for i, name := range lite {
		v, err := goose.NumericComponent(name)
		if err != nil || v != int64(i+1) {
			t.Errorf("migration %q has version %d (%v), want %d", name, v, err, i+1)
		}
		for _, dir := range []string{"sqlite", "postgres"} {
			b, err := fs.ReadFile(migrations.FS, dir+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []string{"-- +goose Up", "-- +goose Down"} {
				if !strings.Contains(string(b), a) {
					t.Errorf("%s/%s lacks %q", dir, name, a)
				}
			}
		}
	}
}

// gooseProvider is a goose provider over a raw connection of its own to the
// database, closed when the test ends.
func gooseProvider(t *testing.T, dialect goose.Dialect, dir string, raw func() (*sql.DB, error)) *goose.Provider {
	t.Helper()
	sqldb, err := raw()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqldb.Close() })
	sub, _ := fs.Sub(migrations.FS, dir)
	p, err := goose.NewProvider(dialect, sqldb, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// upDownUp migrates an empty database up through store.Open, then all the
// way down and up again with goose, so every Down section is exercised.
func upDownUp(t *testing.T, dsn string, dialect goose.Dialect, dir string, raw func() (*sql.DB, error)) {
	t.Helper()
	ctx := context.Background()
	want := int64(len(migrationFiles(t, dir)))
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("store.Open on an empty database: %v", err)
	}
	if v, err := db.Version(ctx); err != nil || v != want {
		t.Errorf("Version() = %d, %v; want %d", v, err, want)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	p := gooseProvider(t, dialect, dir, raw)
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down to 0: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}

func TestMigrationsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "m.db") // parent directories are created
	upDownUp(t, "sqlite://"+path, goose.DialectSQLite3, "sqlite", func() (*sql.DB, error) {
		return sql.Open("sqlite", path+"?_pragma=foreign_keys(1)")
	})
}

func TestMigrationsPostgres(t *testing.T) {
	conf, err := storetest.PgtestdbConfig(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	empty := pgtestdb.Custom(t, conf, pgtestdb.NoopMigrator{})
	upDownUp(t, empty.URL(), goose.DialectPostgres, "postgres", empty.Connect)
}

// questionBackfill imports queued decisions, then takes the database back
// below migration 00012 and up again: the backfill must give every queue
// item the arguments in question grounding.InQuestion picks from its
// stored evidence, as the import itself does.
func questionBackfill(t *testing.T, db *store.DB, dialect goose.Dialect, dir string, raw func() (*sql.DB, error)) {
	t.Helper()
	ctx := context.Background()
	var ts []*grounding.Trajectory
	for i := range 6 {
		ts = append(ts, storetest.Ambiguous("bf", i))
	}
	if _, err := db.ImportTrajectories(ctx, "bf", storetest.FileMeta("bf.jsonl"), storetest.Seq(ts...)); err != nil {
		t.Fatal(err)
	}
	p := gooseProvider(t, dialect, dir, raw)
	if _, err := p.DownTo(ctx, 11); err != nil {
		t.Fatalf("down to 11: %v", err)
	}
	if _, err := p.UpTo(ctx, 12); err != nil {
		t.Fatalf("up to 12: %v", err)
	}
	page, err := db.Queue(ctx, grounding.QueueFilter{State: "all", Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) == 0 {
		t.Fatal("no queue items to check")
	}
	for _, it := range page.Items {
		ds, err := db.Decisions(ctx, it.TrajectoryID, it.Ordinal, 1)
		if err != nil || len(ds) != 1 {
			t.Fatalf("Decisions(%d, %d) = %v, %v", it.TrajectoryID, it.Ordinal, ds, err)
		}
		want, _ := json.Marshal(grounding.InQuestion(ds[0].Args))
		got, _ := json.Marshal(it.Args)
		if len(it.Args) == 0 || string(got) != string(want) {
			t.Errorf("%s d%d after the backfill: arguments in question\n got %s\nwant %s", it.ExtID, it.Ordinal, got, want)
		}
	}
}

func TestQuestionBackfillSQLite(t *testing.T)   { onSQLite(t, questionBackfill) }
func TestQuestionBackfillPostgres(t *testing.T) { onPostgres(t, questionBackfill) }

// backfillTest takes a migrated database and replays a migration on it
// through a raw connection of its own (see gooseProvider).
type backfillTest func(t *testing.T, db *store.DB, dialect goose.Dialect, dir string, raw func() (*sql.DB, error))

// onSQLite runs a backfill test on a new SQLite database.
func onSQLite(t *testing.T, test backfillTest) {
	path := filepath.Join(t.TempDir(), "b.db")
	db, err := store.Open(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	test(t, db, goose.DialectSQLite3, "sqlite", func() (*sql.DB, error) {
		return sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)")
	})
}

// onPostgres runs a backfill test on a new Postgres database.
func onPostgres(t *testing.T, test backfillTest) {
	conf, err := storetest.PgtestdbConfig(storetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	empty := pgtestdb.Custom(t, conf, pgtestdb.NoopMigrator{})
	db, err := store.Open(context.Background(), empty.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	test(t, db, goose.DialectPostgres, "postgres", empty.Connect)
}

// naturalKeyBackfill imports trajectories with awkward ids, takes the
// database below migration 00021 and up again: the SQL backfill must write
// the key store.NaturalKey writes at import, for every id.
func naturalKeyBackfill(t *testing.T, db *store.DB, dialect goose.Dialect, dir string, raw func() (*sql.DB, error)) {
	t.Helper()
	ctx := context.Background()
	ids := []string{"task10-trial0", "task2-trial1", "7", "x", "0", "000", "a1b22c333", "é12ü3", "trial" + strings.Repeat("9", 25) + "x1",
		"gpt-4o-airline-task0-trial0", "12345678901234567890", "1234567890123456789", "-_-", "9-9-9-9-9-9-9"}
	var ts []*grounding.Trajectory
	for _, id := range ids {
		ts = append(ts, storetest.Simple(id, "d", true, "t"))
	}
	if _, err := db.ImportTrajectories(ctx, "nat", storetest.FileMeta("nat.jsonl"), storetest.Seq(ts...)); err != nil {
		t.Fatal(err)
	}
	p := gooseProvider(t, dialect, dir, raw)
	if _, err := p.DownTo(ctx, 20); err != nil {
		t.Fatalf("down to 20: %v", err)
	}
	if _, err := p.UpTo(ctx, 21); err != nil {
		t.Fatalf("up to 21: %v", err)
	}
	sqldb, err := raw()
	if err != nil {
		t.Fatal(err)
	}
	defer sqldb.Close()
	rows, err := sqldb.QueryContext(ctx, `SELECT ext_id, sort_key FROM trajectories`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id, key string
		if err := rows.Scan(&id, &key); err != nil {
			t.Fatal(err)
		}
		n++
		if want := store.NaturalKey(id); key != want {
			t.Errorf("%q: backfilled key %q, want %q", id, key, want)
		}
	}
	if err := rows.Err(); err != nil || n != len(ids) {
		t.Fatalf("read %d keys (%v), want %d", n, err, len(ids))
	}
}

func TestNaturalKeyBackfillSQLite(t *testing.T)   { onSQLite(t, naturalKeyBackfill) }
func TestNaturalKeyBackfillPostgres(t *testing.T) { onPostgres(t, naturalKeyBackfill) }
