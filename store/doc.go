// Package store persists groundwork's domain (package grounding) in SQLite or
// PostgreSQL through sqlx: it opens the database, picks the dialect, runs the
// embedded goose migrations (package migrations), holds every SQL statement,
// and maps driver errors to grounding's sentinel errors in one place
// (errors.go).
//
// Queries are written once with ? placeholders and rebound for Postgres; the
// few statements that differ between dialects live in the dialects map in
// db.go. Row structs stay unexported: methods return grounding types. Every
// public method owns its transaction, if it needs one.
//
// The package does not import net/http, handlers, views or web. Its behavior
// is pinned by the contract suite in store/storetest, which runs against both
// dialects.
package store
