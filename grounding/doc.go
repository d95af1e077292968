// Package grounding holds groundwork's domain: the canonical trajectory, the
// importers that turn agent logs into it, decisions and their agent-visible
// projection, and the sentinel errors other layers branch on.
//
// It performs no network or database I/O and imports neither net/http nor
// database/sql: importers read from an io.Reader handed to them.
package grounding
