package store_test

import (
	"testing"

	"groundwork/store"
	"groundwork/store/storetest"
)

// TestPostgres runs the contract suite on Postgres when TEST_DATABASE_URL is
// set, each test in its own database cloned by pgtestdb from a migrated
// template. Unset, it skips, or fails under CI=true.
func TestPostgres(t *testing.T) {
	storetest.PostgresURL(t)
	storetest.Run(t, func(t *testing.T) *store.DB { return storetest.OpenPostgres(t) })
}
