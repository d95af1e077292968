package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// pinger is what the health check needs from storage.
type pinger interface {
	Ping(ctx context.Context) error
}

// Health answers load balancers and uptime checks.
type Health struct {
	log *slog.Logger
	db  pinger
}

// NewHealth returns the health handler over db.
func NewHealth(log *slog.Logger, db pinger) *Health { return &Health{log: log, db: db} }

// Show answers 200 "ok" when the database answers a ping within two
// seconds, 503 otherwise. It needs no login and renders no HTML.
func (h *Health) Show(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := h.db.Ping(ctx); err != nil {
		h.log.Warn("health check failed", "request_id", requestID(r), "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("database unavailable\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}
