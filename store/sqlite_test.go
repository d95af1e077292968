package store_test

import (
	"testing"

	"groundwork/store"
	"groundwork/store/storetest"
)

// TestSQLite runs the contract suite on a fresh SQLite file per test.
func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) *store.DB { return storetest.OpenSQLite(t) })
}
