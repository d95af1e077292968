package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
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
	case len(password) < minPassword:
		form.Error = "The password needs at least 8 characters."
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

func (h *Users) page(w http.ResponseWriter, r *http.Request, status int, form views.UserForm) {
	users, err := h.store.Users(r.Context())
	if err != nil {
		fail(h.log, w, r, err)
		return
	}
	p := views.UsersPage{Form: form}
	for _, u := range users {
		p.Rows = append(p.Rows, views.UserRow{Name: u.Name, Role: u.Role, Created: dateTime(u.CreatedAt)})
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
