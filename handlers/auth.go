package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/views"
)

// userFinder is what logging in needs from storage.
type userFinder interface {
	// UserByName returns grounding.ErrNotFound for an unknown name.
	UserByName(ctx context.Context, name string) (grounding.User, error)
}

// Auth logs users in and out.
type Auth struct {
	log      *slog.Logger
	users    userFinder
	sessions sessionManager
	throttle *loginThrottle
}

// NewAuth returns the login handlers.
func NewAuth(log *slog.Logger, users userFinder, sessions sessionManager) *Auth {
	return &Auth{log: log, users: users, sessions: sessions, throttle: newLoginThrottle()}
}

const wrongCredentials = "Wrong name or password."

// LoginForm shows the login form, or sends a logged-in user on to next.
func (h *Auth) LoginForm(w http.ResponseWriter, r *http.Request) {
	next := SafeNext(r.URL.Query().Get("next"))
	if _, ok := CurrentUser(r.Context()); ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	f := views.LoginForm{Next: next}
	render(w, r, http.StatusOK, page{title: "Log in", body: views.LoginPage(f)})
}

// Login checks the name and password. On success it renews the session
// token (so a token planted before login is useless) and redirects to the
// safe next path; on failure it re-renders the form with one generic
// message, 422, whether the name or the password was wrong.
func (h *Auth) Login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the login form"))
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	password := r.PostForm.Get("password")
	next := SafeNext(r.PostForm.Get("next"))

	adm, d := h.throttle.admit(name, r.RemoteAddr)
	if adm == nil {
		secs := int(d.Round(time.Second) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
		h.log.Warn("login throttled", "request_id", requestID(r), "status", http.StatusTooManyRequests)
		f := views.LoginForm{Name: name, Next: next, Error: "Too many failed logins. Try again in " + plural(max(secs, 1), "second") + "."}
		render(w, r, http.StatusTooManyRequests, page{title: "Log in", body: views.LoginPage(f)})
		return
	}
	u, err := h.users.UserByName(r.Context(), name)
	switch {
	case errors.Is(err, grounding.ErrNotFound):
		// Spend the same time as a real comparison so response times do
		// not reveal which names exist.
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
		h.refuse(w, r, name, next)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	if bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(password)) != nil {
		h.refuse(w, r, name, next)
		return
	}
	adm.succeeded()
	if u.Disabled { // said only to whoever knows the password
		h.refuseWith(w, r, name, next, "This account is disabled. Ask an admin to enable it.")
		return
	}
	if err := h.sessions.RenewToken(r.Context()); err != nil {
		h.fail(w, r, err)
		return
	}
	h.sessions.Put(r.Context(), SessionUserID, u.ID)
	h.log.Info("login", "request_id", requestID(r), "user", u.Name)
	redirect(w, r, next)
}

func (h *Auth) refuse(w http.ResponseWriter, r *http.Request, name, next string) {
	h.refuseWith(w, r, name, next, wrongCredentials)
}

func (h *Auth) refuseWith(w http.ResponseWriter, r *http.Request, name, next, why string) {
	h.log.Warn("login refused", "request_id", requestID(r), "status", http.StatusUnprocessableEntity)
	f := views.LoginForm{Name: name, Next: next, Error: why}
	render(w, r, http.StatusUnprocessableEntity, page{title: "Log in", body: views.LoginPage(f)})
}

// Logout ends the session and returns to the login page.
func (h *Auth) Logout(w http.ResponseWriter, r *http.Request) {
	if err := h.sessions.Destroy(r.Context()); err != nil {
		h.fail(w, r, err)
		return
	}
	redirect(w, r, "/login")
}

func (h *Auth) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// redirect ends a successful POST: 303 for a plain request, HX-Redirect (a
// full page load, since the navigation changes) for an htmx one.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	w.Header().Add("Vary", HXRequest)
	if IsHTMX(r) {
		w.Header().Set(HXRedirect, to)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// SafeNext returns next when it is a local path ("/runs?x=1"), else "/runs".
// It refuses absolute URLs, scheme-relative "//host" and "/\host" (which
// browsers treat like "//"), and anything with control characters.
func SafeNext(next string) string {
	const home = "/runs"
	if next == "" || next[0] != '/' || len(next) > 2048 {
		return home
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return home
	}
	for _, c := range next {
		if c < 0x20 || c == 0x7f || c == '\\' {
			return home
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return home
	}
	return next
}

var (
	dummyOnce sync.Once
	dummy     []byte
)

// dummyHash is a bcrypt hash of nothing anyone knows, at the default cost.
func dummyHash() []byte {
	dummyOnce.Do(func() {
		dummy, _ = bcrypt.GenerateFromPassword([]byte("groundwork: no such user"), bcrypt.DefaultCost)
	})
	return dummy
}
