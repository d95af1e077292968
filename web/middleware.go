package web

import (
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/klauspost/compress/gzip"

	"groundwork/grounding"
	"groundwork/handlers"
	"groundwork/static"
	"groundwork/store"
)

// requestLogger logs one line per request: id, method, path, status, size
// and duration. It never logs query strings, form bodies, cookies or
// headers, so no password or session token can reach the log.
func requestLogger(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			next.ServeHTTP(ww, r)
			level := slog.LevelInfo
			if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/") {
				level = slog.LevelDebug
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			log.LogAttrs(r.Context(), level, "request",
				slog.String("request_id", middleware.GetReqID(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Duration("duration", time.Since(start)),
			)
		})
	}
}

// contentSecurityPolicy allows only this origin's scripts and styles (no
// inline script or style, so the app's JS lives in static files and htmx's
// indicator styles are switched off), and no framing.
const contentSecurityPolicy = "default-src 'self'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"

// hstsPolicy asks browsers to reach this host over HTTPS only, for a year.
// Not for subdomains: the app does not know what else runs under its
// domain.
const hstsPolicy = "max-age=31536000"

// securityHeaders sets the headers every response carries, and
// Strict-Transport-Security when the request came over TLS or https is true
// (the app is reached at an https:// base URL, behind a TLS proxy). A
// plain-HTTP deployment never gets it: browsers would then refuse the site.
func securityHeaders(https bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Security-Policy", contentSecurityPolicy)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("X-Frame-Options", "DENY")
			if https || r.TLS != nil {
				h.Set("Strict-Transport-Security", hstsPolicy)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// compressLevel is gzip's level for pages. Level 1 rather than the usual
// 5: pages are rendered per request, and under 16 concurrent clients level
// 5 took 0.2-0.4 ms of server CPU more per page for 15-20% fewer bytes (a
// 47 KB trajectory page gzips to 5.5 KB instead of 4.7 KB).
const compressLevel = 1

// compress gzips pages, stylesheets and scripts with klauspost/compress
// rather than compress/gzip: the same format at a fraction of the CPU (a
// 47 KB trajectory page at level 5: 0.23 ms with compress/gzip, 0.09 ms
// with klauspost; the 170 KB coverage page 1.0 ms against 0.31 ms). Under
// 16 concurrent clients compress/gzip had been a quarter of the server's
// time on a trajectory page.
func compress() func(http.Handler) http.Handler {
	c := middleware.NewCompressor(compressLevel, "text/html", "text/css", "text/javascript", "application/javascript")
	c.SetEncoder("gzip", func(w io.Writer, level int) io.Writer {
		gz, err := gzip.NewWriterLevel(w, level)
		if err != nil { // only for a level out of range, which compressLevel is not
			panic(err)
		}
		return gz
	})
	return c.Handler
}

// noStore keeps pages (which may show hidden collector context) out of
// shared and back-button caches.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// crossOrigin refuses unsafe cross-origin browser requests (CSRF) with Go's
// Sec-Fetch-Site/Origin check: no tokens to thread through every form and
// htmx request, and nothing to leak.
func crossOrigin(log *slog.Logger) func(http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handlers.Fail(log, w, r, handlers.Error(http.StatusForbidden, "Cross-origin request refused."))
	}))
	return cop.Handler
}

// roomForSessionUser lets the session lookup that follows read the
// session's user in the same statement (store.SessionStore).
func roomForSessionUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(store.WithSessionUser(r.Context())))
	})
}

// sessionUserID is the signed-in user's id in a session's stored data (0
// for none), for the session store to keep beside it.
func sessionUserID(data []byte) int64 {
	_, values, err := sessionCodec{}.Decode(data)
	if err != nil {
		return 0
	}
	id, _ := values[handlers.SessionUserID].(int64)
	return id
}

// loadUser puts the session's user, if any, into the request context: the
// one read with the session when it is the session's user, else read now.
// A session whose user no longer exists or is disabled is treated as
// logged out (disabling deletes the sessions; this covers a race with it).
func loadUser(log *slog.Logger, db *store.DB, sessions *scs.SessionManager) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			id := sessions.GetInt64(r.Context(), handlers.SessionUserID)
			if id == 0 {
				next.ServeHTTP(w, r)
				return
			}
			u, ok := store.SessionUser(r.Context())
			if !ok || u.ID != id {
				var err error
				u, err = db.User(r.Context(), id)
				if errors.Is(err, grounding.ErrNotFound) {
					u.Disabled = true // gone: logged out like a disabled account
				} else if err != nil {
					handlers.Fail(log, w, r, err)
					return
				}
			}
			if u.Disabled {
				sessions.Remove(r.Context(), handlers.SessionUserID)
				next.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r.WithContext(handlers.WithUser(r.Context(), u)))
		})
	}
}

// requireLogin lets logged-in users through. Others are sent to the login
// page with next set to where they were going: a 303 for a page request, a
// 401 with HX-Redirect for an htmx request (whose next is the page the
// browser shows, from HX-Current-URL).
func requireLogin(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := handlers.CurrentUser(r.Context()); ok {
				next.ServeHTTP(w, r)
				return
			}
			if handlers.IsHTMX(r) {
				back := "/runs"
				if u, err := url.Parse(r.Header.Get(handlers.HXCurrentURL)); err == nil && u.Path != "" {
					back = u.RequestURI()
				}
				w.Header().Set(handlers.HXRedirect, loginURL(back))
				handlers.Fail(log, w, r, handlers.Error(http.StatusUnauthorized, "Your session has ended: log in again."))
				return
			}
			back := "/runs"
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				back = r.URL.RequestURI()
			}
			http.Redirect(w, r, loginURL(back), http.StatusSeeOther)
		})
	}
}

func loginURL(next string) string {
	next = handlers.SafeNext(next)
	if next == "/runs" {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(next)
}

// requireRole lets through users with one of roles, and answers others 403.
// It runs after requireLogin.
func requireRole(log *slog.Logger, roles ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u, ok := handlers.CurrentUser(r.Context())
			if ok && slices.Contains(roles, u.Role) {
				next.ServeHTTP(w, r)
				return
			}
			handlers.Fail(log, w, r, handlers.Error(http.StatusForbidden,
				"Your role ("+u.Role+") cannot open this page; it needs a "+strings.Join(roles, " or ")+" account."))
		})
	}
}

// staticFiles serves the embedded CSS and JS. Their URLs carry a content
// hash (static.URL), so browsers may keep them for a year.
func staticFiles() http.Handler {
	files := http.StripPrefix("/static/", http.FileServerFS(static.FS))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/static/")
		if fi, err := fs.Stat(static.FS, name); err != nil || fi.IsDir() {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		files.ServeHTTP(w, r)
	})
}
