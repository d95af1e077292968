package handlers

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/views"
)

// accountStore is what the accounts page needs from storage.
type accountStore interface {
	Users(ctx context.Context) ([]grounding.User, error)
	// CreateUser returns grounding.ErrConflict for a taken name and
	// grounding.ErrInvalid for an empty name or an unknown role.
	CreateUser(ctx context.Context, name, role string, passwordHash []byte) (grounding.User, error)
	User(ctx context.Context, id int64) (grounding.User, error)
	// SetPassword and SetDisabled end the user's sessions (SetDisabled when
	// disabling, and it revokes the API tokens too). SetDisabled refuses to
	// disable the last enabled admin with grounding.ErrInvalid.
	SetPassword(ctx context.Context, userID int64, hash []byte) error
	SetDisabled(ctx context.Context, userID int64, disabled bool) error
}

// Users is the admins' accounts page: list, and add with a role.
type Users struct {
	log   *slog.Logger
	store accountStore
	cost  int // bcrypt cost
}

// NewUsers returns the accounts handlers.
func NewUsers(log *slog.Logger, store accountStore) *Users {
	return &Users{log: log, store: store, cost: bcrypt.DefaultCost}
}

// minPassword is the shortest password an account may get (as `groundwork
// user add` demands).
const minPassword = 8

// maxPassword is the longest: bcrypt reads 72 bytes and refuses more.
const maxPassword = 72

// PasswordProblem says what is wrong with a new password, "" when nothing
// is. The accounts page and `groundwork user` use it.
func PasswordProblem(p string) string {
	switch {
	case len(p) < minPassword:
		return "The password needs at least 8 characters."
	case len(p) > maxPassword:
		return "The password has at most 72 bytes (bcrypt reads no further)."
	}
	return ""
}

// NewPassword is a random password of 20 URL-safe characters (120 bits),
// for a first start or a reset by an admin; it is shown once.
func NewPassword() string {
	b := make([]byte, 15)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(b)
}

// List shows every account and the form to add one.
func (h *Users) List(w http.ResponseWriter, r *http.Request) {
	h.page(w, r, http.StatusOK, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator)})
}

// Create adds an account from the form (name, role, password); errors
// re-render the form with 422 (409 for a taken name).
func (h *Users) Create(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		fail(h.log, w, r, badRequest("could not read the form"))
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	role := r.PostForm.Get("role")
	password := r.PostForm.Get("password")
	form := views.UserForm{Name: name, Roles: roleOptions(role)}
	switch {
	case name == "" || len(name) > 100:
		form.Error = "A name has 1 to 100 characters."
	case !grounding.ValidAccountRole(role):
		form.Error = "Choose a role: admin, researcher or annotator."
	default:
		form.Error = PasswordProblem(password)
	}
	if form.Error != "" {
		h.page(w, r, http.StatusUnprocessableEntity, form)
		return
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), h.cost)
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	u, err := h.store.CreateUser(r.Context(), name, role, hash)
	if errors.Is(err, grounding.ErrConflict) {
		form.Error = "An account named " + name + " already exists."
		h.page(w, r, http.StatusConflict, form)
		return
	}
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	h.page(w, r, http.StatusOK, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator), Created: "Created " + u.Role + " " + u.Name + "."})
}

// Disable disables an account: it can no longer log in, its sessions end
// and its API tokens are revoked. Admins cannot disable themselves (and
// the store keeps one enabled admin).
func (h *Users) Disable(w http.ResponseWriter, r *http.Request) { h.setDisabled(w, r, true) }

// Enable lets a disabled account log in again (its revoked tokens stay
// revoked).
func (h *Users) Enable(w http.ResponseWriter, r *http.Request) { h.setDisabled(w, r, false) }

func (h *Users) setDisabled(w http.ResponseWriter, r *http.Request, disabled bool) {
	u, ok := h.target(w, r)
	if !ok {
		return
	}
	if me, _ := CurrentUser(r.Context()); disabled && me.ID == u.ID {
		h.page(w, r, http.StatusUnprocessableEntity, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator),
			Error: "You cannot disable your own account."})
		return
	}
	err := h.store.SetDisabled(r.Context(), u.ID, disabled)
	if errors.Is(err, grounding.ErrInvalid) {
		h.page(w, r, http.StatusUnprocessableEntity, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator),
			Error: u.Name + " is the last enabled admin and cannot be disabled."})
		return
	}
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	done := "Enabled " + u.Name + ": the account can log in again; its revoked API tokens stay revoked."
	if disabled {
		done = "Disabled " + u.Name + ": logged out everywhere, API tokens revoked, and no new login."
	}
	h.log.Info("account changed", "request_id", requestID(r), "user", u.Name, "disabled", disabled)
	h.page(w, r, http.StatusOK, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator), Created: done})
}

// ResetPassword gives an account a new random password, shown once to the
// admin, and ends the account's sessions.
func (h *Users) ResetPassword(w http.ResponseWriter, r *http.Request) {
	u, ok := h.target(w, r)
	if !ok {
		return
	}
	password := NewPassword()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), h.cost)
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	if err := h.store.SetPassword(r.Context(), u.ID, hash); err != nil {
		fail(h.log, w, r, err)
		return
	}
	h.log.Info("password reset", "request_id", requestID(r), "user", u.Name)
	h.page(w, r, http.StatusOK, views.UserForm{Roles: roleOptions(grounding.RoleAnnotator),
		Created: "New password for " + u.Name + " (shown once; their sessions were ended):", Password: password})
}

// target reads the account named by the route's id; it has answered
// (400, 404) when ok is false.
func (h *Users) target(w http.ResponseWriter, r *http.Request) (grounding.User, bool) {
	id, ok := intParam(r, "userID")
	if !ok {
		fail(h.log, w, r, badRequest("user id must be a number"))
		return grounding.User{}, false
	}
	u, err := h.store.User(r.Context(), id)
	if err != nil {
		fail(h.log, w, r, err)
		return grounding.User{}, false
	}
	return u, true
}

func (h *Users) page(w http.ResponseWriter, r *http.Request, status int, form views.UserForm) {
	users, err := h.store.Users(r.Context())
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	me, _ := CurrentUser(r.Context())
	p := views.UsersPage{Form: form}
	for _, u := range users {
		id := strconv.FormatInt(u.ID, 10)
		p.Rows = append(p.Rows, views.UserRow{Name: u.Name, Role: u.Role, Created: dateTime(u.CreatedAt),
			Disabled: u.Disabled, You: u.ID == me.ID,
			DisableURL: "/admin/users/" + id + "/disable", EnableURL: "/admin/users/" + id + "/enable",
			PasswordURL: "/admin/users/" + id + "/password"})
	}
	render(w, r, status, page{title: "Accounts", section: "users", body: views.Users(p)})
}

func roleOptions(selected string) []views.Option {
	var out []views.Option
	for _, r := range []string{grounding.RoleAnnotator, grounding.RoleResearcher, grounding.RoleAdmin} {
		out = append(out, views.Option{Value: r, Label: r, Selected: r == selected})
	}
	return out
}
