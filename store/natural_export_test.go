package store

// NaturalKey is naturalKey, for the migration tests of package store_test.
var NaturalKey = naturalKey
