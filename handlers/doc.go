// Package handlers turns HTTP requests into calls on narrow storage
// interfaces and renders views. Each resource is one struct holding a logger
// and the interface it needs (declared beside it), so handlers never see the
// concrete store and their tests use hand-written fakes.
//
// render (render.go) picks full page or htmx fragment in one place; fail
// (errors.go) is the only place that maps an error to a status and logs it.
package handlers
