package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5/middleware"

	"groundwork/grounding"
	"groundwork/views"
)

// httpError is an error whose status and message are meant for the user.
type httpError struct {
	status  int
	message string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.status, e.message) }

// Error returns an error that fail answers with status and message, shown
// to the user as is. Use it for 4xx answers only.
func Error(status int, message string) error { return &httpError{status: status, message: message} }

func badRequest(message string) error { return Error(http.StatusBadRequest, message) }

// Fail answers r with err (see fail). web's middleware uses it so refusals
// (login required, forbidden, cross-origin) look like every other error.
func Fail(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	fail(log, w, r, err)
}

// fail is the only place that turns an error into a status and a message.
// It logs once: 5xx as errors, 4xx as warnings. A 5xx body never contains
// err.Error(), only the request id to find the log line. A partial htmx
// request gets views.Alert retargeted to #alerts; anything else gets a full
// error page.
func fail(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	status, message := classify(err)
	level := failLevel(w, status)
	if level == slog.LevelError {
		message = "Internal error (request id " + requestID(r) + ")"
	}
	if log == nil {
		log = slog.Default()
	}
	log.LogAttrs(r.Context(), level, "request failed",
		slog.String("request_id", requestID(r)),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Any("err", err),
	)
	if isPartial(r) {
		w.Header().Set(HXRetarget, "#alerts")
		w.Header().Set(HXReswap, "innerHTML")
		renderFragment(w, r, status, views.Alert(message))
		return
	}
	render(w, r, status, page{title: http.StatusText(status), body: views.ErrorPage(status, message)})
}

// statusClientClosed is nginx's 499 "client closed request": logged for a
// request whose client went away, never seen by anyone.
const statusClientClosed = 499

// busyMessage answers a write the database could not take in time (SQLite
// while an import holds its lock).
const busyMessage = "The database is busy with an import and could not take this change in time; nothing was recorded. Try again in a moment."

// failLevel is the log level of a failed request with status, and sets
// Retry-After on a 503 (a busy database: the same request may succeed
// soon). Only errors of the server are logged as errors, and their
// messages are replaced by the request id.
func failLevel(w http.ResponseWriter, status int) slog.Level {
	switch {
	case status == statusClientClosed:
		return slog.LevelInfo
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
		return slog.LevelWarn
	case status >= 500:
		return slog.LevelError
	}
	return slog.LevelWarn
}

// classify maps err to a status and a user-facing message (ignored for
// 5xx but 503).
func classify(err error) (int, string) {
	var he *httpError
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &he):
		return he.status, he.message
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "the request is too large"
	case errors.Is(err, grounding.ErrNotFound):
		return http.StatusNotFound, "Not found."
	case errors.Is(err, grounding.ErrConflict):
		return http.StatusConflict, "This conflicts with existing data."
	case errors.Is(err, grounding.ErrInvalid):
		// Validation errors say what is wrong in words for the user.
		return http.StatusUnprocessableEntity, userMessage(err)
	case errors.Is(err, grounding.ErrBusy):
		return http.StatusServiceUnavailable, busyMessage
	case errors.Is(err, context.Canceled):
		// The client went away (closed the tab, cancelled an upload):
		// nothing failed on the server, and nobody reads the answer.
		return statusClientClosed, "The request was canceled."
	default:
		return http.StatusInternalServerError, ""
	}
}

// userMessage is the text of a validation or conflict error as a user
// should read it: "store: enqueue decision 0 of trajectory 13: the note is
// longer than 4000 bytes: invalid input" becomes "The note is longer than
// 4000 bytes." The store's "store: OPERATION: " prefix and the sentinel's
// name say nothing to a user; what is left is the store's or the domain's
// own sentence.
func userMessage(err error) string {
	msg := err.Error()
	for _, s := range []error{grounding.ErrInvalid, grounding.ErrConflict, grounding.ErrNotFound} {
		msg = strings.TrimSuffix(msg, ": "+s.Error())
	}
	if i := strings.LastIndex(msg, "store: "); i >= 0 {
		msg = msg[i+len("store: "):]
		if j := strings.Index(msg, ": "); j >= 0 {
			msg = msg[j+2:]
		}
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "The request is not valid."
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

// requestID is chi's request id of r, or "-" outside the middleware.
func requestID(r *http.Request) string {
	if id := middleware.GetReqID(r.Context()); id != "" {
		return id
	}
	return "-"
}
