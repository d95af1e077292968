package grounding

import "errors"

// Sentinel errors the store returns and handlers map to HTTP statuses.
var (
	// ErrNotFound: the requested entity does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the write would violate a uniqueness rule (a user name,
	// a trajectory id within a run, ...).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the input is not acceptable; the wrapped message says why.
	ErrInvalid = errors.New("invalid input")
	// ErrBusy: the database could not take the write in time because
	// another holds its lock (SQLite, while an import runs); nothing was
	// written and the same request may succeed later.
	ErrBusy = errors.New("database busy")
)
