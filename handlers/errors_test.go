package handlers

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"groundwork/grounding"
)

// TestFailStatusesAndLog: what a failed request answers and how loudly it
// is logged. Only the server's own errors are logged as errors and hide
// their text; a busy database says to try again; a client that went away
// is no error at all.
func TestFailStatusesAndLog(t *testing.T) {
	for _, tt := range []struct {
		err        error
		status     int
		says       string
		level      string
		retryAfter string
	}{
		{fmt.Errorf("store: import a.jsonl: disk I/O error"), 500, "Internal error", "ERROR", ""},
		{fmt.Errorf("store: verdict: %w: database is locked", grounding.ErrBusy), 503, "busy with an import", "WARN", "5"},
		{fmt.Errorf("store: import a.jsonl: %w", context.Canceled), 499, "canceled", "INFO", ""},
		{fmt.Errorf("store: enqueue: the note is too long: %w", grounding.ErrInvalid), 422, "The note is too long.", "WARN", ""},
	} {
		var logs bytes.Buffer
		log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		rec := httptest.NewRecorder()
		fail(log, rec, httptest.NewRequest("POST", "/import", nil), tt.err)
		if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.says) || rec.Header().Get("Retry-After") != tt.retryAfter {
			t.Errorf("fail(%v) = %d, Retry-After %q, body %.200q; want %d saying %q", tt.err, rec.Code, rec.Header().Get("Retry-After"), rec.Body.String(), tt.status, tt.says)
		}
		if !strings.Contains(logs.String(), "level="+tt.level) {
			t.Errorf("fail(%v) logged %q; want level %s", tt.err, logs.String(), tt.level)
		}
	}
}
