package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/peterldowns/pgtestdb"
	"github.com/peterldowns/pgtestdb/migrators/common"

	"groundwork/migrations"
	"groundwork/store"
)

// SkipPostgres is the reason given when TEST_DATABASE_URL is unset.
const SkipPostgres = "TEST_DATABASE_URL not set: skipping the Postgres contract suite"

// OpenSQLite returns a store on a fresh SQLite file under t.TempDir(),
// closed when the test ends.
func OpenSQLite(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "groundwork.db"))
	if err != nil {
		t.Fatalf("store.Open(sqlite): %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// PostgresURL returns TEST_DATABASE_URL. When it is unset the test is
// skipped, except under CI=true, where a missing Postgres fails it.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("TEST_DATABASE_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal(SkipPostgres)
		}
		t.Skip(SkipPostgres)
	}
	return u
}

// OpenPostgres returns a store on a database of its own, cloned by pgtestdb
// from a template migrated once by Migrator, and dropped when the test ends
// (kept if it failed, for inspection). It skips or fails as PostgresURL does.
func OpenPostgres(t testing.TB) *store.DB {
	t.Helper()
	conf, err := PgtestdbConfig(PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	inst := pgtestdb.Custom(t, conf, Migrator{})
	db, err := store.Open(context.Background(), inst.URL())
	if err != nil {
		t.Fatalf("store.Open(postgres): %v", err)
	}
	// Registered after pgtestdb's cleanup, so it runs first: the database
	// can only be dropped once our connections are closed.
	t.Cleanup(func() { db.Close() })
	return db
}

// PgtestdbConfig turns a postgres:// URL into a pgtestdb configuration using
// lib/pq, the driver the store uses.
func PgtestdbConfig(rawURL string) (pgtestdb.Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return pgtestdb.Config{}, fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	pass, _ := u.User.Password()
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	db := u.Path
	if len(db) > 0 && db[0] == '/' {
		db = db[1:]
	}
	if db == "" {
		db = "postgres"
	}
	return pgtestdb.Config{
		DriverName: "postgres",
		Host:       u.Hostname(),
		Port:       port,
		User:       u.User.Username(),
		Password:   pass,
		Database:   db,
		Options:    u.RawQuery,
	}, nil
}

// Migrator is a pgtestdb.Migrator over groundwork's embedded goose
// migrations (pgtestdb's goosemigrator module is not a dependency). It
// migrates a template by opening it with store.Open, the production path.
type Migrator struct{}

var _ pgtestdb.Migrator = Migrator{}

// Hash identifies the migrated schema: the Postgres migration files, and how
// they are applied.
func (Migrator) Hash() (string, error) {
	h := common.NewRecursiveHash(common.Field("migrator", "groundwork store.Open v1"))
	if err := h.AddDirs(migrations.FS, "*.sql", "postgres"); err != nil {
		return "", err
	}
	return h.String(), nil
}

// Migrate runs the migrations on the empty template database.
func (Migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	db, err := store.Open(ctx, conf.URL())
	if err != nil {
		return err
	}
	return db.Close()
}
