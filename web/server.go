package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"groundwork/grounding"
	"groundwork/handlers"
	"groundwork/store"
)

// Config tunes the HTTP handler. The zero value works.
type Config struct {
	// MaxUploadBytes caps one uploaded log file; 0 means 1 GiB.
	MaxUploadBytes int64
	// UploadDir holds uploads while they are imported; "" means os.TempDir().
	UploadDir string
	// SecureCookies marks the session cookie Secure (serve over HTTPS); a
	// BaseURL starting with https:// implies it.
	SecureCookies bool
	// BaseURL is the address people reach the app at, e.g.
	// https://gw.example.org behind a TLS proxy; "" when unknown.
	BaseURL string
	// ProxyHops is how many reverse proxies stand in front of the app,
	// each appending to X-Forwarded-For; the login throttle then counts a
	// client under the address the outermost of them saw. 0 (the default)
	// trusts no header and counts the connection's address.
	ProxyHops int
	// Logger receives request and error logs; nil means slog.Default().
	Logger *slog.Logger
	// ClaimLease is how long an annotator's claim on a queue item lasts
	// without activity; 0 means store.DefaultLease (15 minutes).
	ClaimLease time.Duration
}

// DefaultMaxUploadBytes is the upload cap when Config leaves it 0.
const DefaultMaxUploadBytes int64 = 1 << 30

// ImportFiler imports one file; the upload page calls it (Importer
// implements it, as does a test fake).
type ImportFiler interface {
	// ImportFile imports the file at path (already fully written to disk)
	// into run runName ("" = derive from displayName), displayName being the
	// user's file name used in messages. All or nothing; duplicate content
	// gives Duplicate=true. Bad content gives an error wrapping
	// grounding.ErrInvalid, a trajectory id clash one wrapping
	// grounding.ErrConflict; both Error() texts are user-facing.
	ImportFile(ctx context.Context, runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error)
}

// NewHandler returns groundwork's whole HTTP surface (routes.go) over db,
// with imp serving uploads.
func NewHandler(cfg Config, db *store.DB, imp ImportFiler) (http.Handler, error) {
	if db == nil {
		return nil, errors.New("web: NewHandler needs a database")
	}
	if imp == nil {
		return nil, errors.New("web: NewHandler needs an importer")
	}
	if cfg.MaxUploadBytes < 0 {
		return nil, fmt.Errorf("web: MaxUploadBytes %d is negative", cfg.MaxUploadBytes)
	}
	if cfg.MaxUploadBytes == 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.ProxyHops < 0 {
		return nil, fmt.Errorf("web: ProxyHops %d is negative", cfg.ProxyHops)
	}
	if cfg.UploadDir != "" {
		fi, err := os.Stat(cfg.UploadDir)
		if err != nil {
			return nil, fmt.Errorf("web: upload dir: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("web: upload dir %s is not a directory", cfg.UploadDir)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return routes(cfg, db, newSessions(cfg, db), imp), nil
}

// newSessions configures scs over the database's session table. scs rather
// than gorilla/sessions: server-side sessions (a cookie holds only a random
// token, so logout and expiry really end a session, and nothing about the
// user travels in the cookie), token renewal on login against fixation, and
// a store interface the database implements for both dialects.
func newSessions(cfg Config, db *store.DB) *scs.SessionManager {
	s := scs.New()
	s.Store = db.SessionStore(sessionUserID)
	s.Codec = sessionCodec{}
	// No IdleTimeout: with one, scs rewrites the session row on every
	// request, and on SQLite a long import holds the write lock, so page
	// views would queue behind it. A session is written at login and logout
	// only, and lives for a working week.
	s.Lifetime = 7 * 24 * time.Hour
	s.Cookie.Name = "groundwork_session"
	s.Cookie.HttpOnly = true
	s.Cookie.SameSite = http.SameSiteLaxMode
	s.Cookie.Secure = cfg.SecureCookies || strings.HasPrefix(cfg.BaseURL, "https://")
	s.Cookie.Path = "/"
	s.ErrorFunc = func(w http.ResponseWriter, r *http.Request, err error) {
		handlers.Fail(cfg.Logger, w, r, fmt.Errorf("web: session: %w", err))
	}
	return s
}
