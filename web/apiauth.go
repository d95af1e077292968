package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/alexedwards/scs/v2"

	"groundwork/grounding"
	"groundwork/handlers"
	"groundwork/store"
)

// exportRoles may download exports; annotators may not.
var exportRoles = []string{grounding.RoleAdmin, grounding.RoleResearcher}

// exportAuth authenticates the export API: a request with an Authorization
// header must carry a valid Bearer token (and gets no session at all); one
// without uses the browser session. Either way the user needs an export
// role. Refusals are plain-text 401/403 for scripts, never a redirect to
// the login page, whose 200 a script could save as its data. The API is GET
// only, so the session's cookie raises no CSRF question (the cross-origin
// check covers unsafe methods) and a token, which browsers never send by
// themselves, raises none either.
func exportAuth(log *slog.Logger, db *store.DB, sessions *scs.SessionManager) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		withRole := requireExportRole(log, next)
		viaSession := sessions.LoadAndSave(loadUser(log, db, sessions)(withRole))
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			header := r.Header.Get("Authorization")
			if header == "" {
				viaSession.ServeHTTP(w, r)
				return
			}
			scheme, secret, _ := strings.Cut(header, " ")
			secret = strings.TrimSpace(secret)
			if !strings.EqualFold(scheme, "Bearer") || secret == "" {
				unauthorized(log, w, r, "invalid_request", "Send the API token as Authorization: Bearer TOKEN.")
				return
			}
			tok, u, err := db.APITokenUser(r.Context(), secret)
			switch {
			case errors.Is(err, grounding.ErrNotFound):
				unauthorized(log, w, r, "invalid_token", "The API token is not valid.")
				return
			case errors.Is(err, grounding.ErrTokenRevoked):
				unauthorized(log, w, r, "invalid_token", "The API token was revoked.")
				return
			case err != nil:
				handlers.APIFail(log, w, r, err)
				return
			}
			if time.Since(tok.LastUsedAt) > time.Minute {
				// Off the request path: on SQLite a long import holds the
				// write lock, and a download must not wait for it.
				go touchToken(log, db, tok.ID)
			}
			withRole.ServeHTTP(w, r.WithContext(handlers.WithUser(r.Context(), u)))
		})
	}
}

func touchToken(log *slog.Logger, db *store.DB, id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.TouchAPIToken(ctx, id, time.Now()); err != nil {
		log.Warn("record API token use", "token_id", id, "err", err)
	}
}

// requireExportRole answers 401 without a user and 403 for a role that may
// not export.
func requireExportRole(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := handlers.CurrentUser(r.Context())
		switch {
		case !ok:
			unauthorized(log, w, r, "", "Log in, or send an API token: Authorization: Bearer TOKEN.")
		case !slices.Contains(exportRoles, u.Role):
			handlers.APIFail(log, w, r, handlers.Error(http.StatusForbidden,
				"Your role ("+u.Role+") cannot export; it needs a researcher or admin account."))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// unauthorized answers 401 with the Bearer challenge of RFC 6750.
func unauthorized(log *slog.Logger, w http.ResponseWriter, r *http.Request, code, message string) {
	challenge := `Bearer realm="groundwork"`
	if code != "" {
		challenge += `, error="` + code + `"`
	}
	w.Header().Set("WWW-Authenticate", challenge)
	handlers.APIFail(log, w, r, handlers.Error(http.StatusUnauthorized, message))
}
