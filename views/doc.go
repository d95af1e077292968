// Package views holds groundwork's templ components and their view models.
//
// View-model fields are already formatted for display: views do no lookups,
// no I/O and no domain logic, and import neither net/http nor the store nor
// grounding. Everything that comes from a log is untrusted and reaches the
// page only through templ's escaping; nothing here uses templ.Raw.
package views
