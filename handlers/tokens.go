package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"groundwork/grounding"
	"groundwork/views"
)

// tokenStore is what the API token page needs from storage.
type tokenStore interface {
	APITokens(ctx context.Context, userID int64) ([]grounding.APIToken, error)
	// CreateAPIToken returns the token and its secret, shown once.
	CreateAPIToken(ctx context.Context, userID int64, name string) (grounding.APIToken, string, error)
	// RevokeAPIToken returns grounding.ErrNotFound for a token that is not
	// the user's.
	RevokeAPIToken(ctx context.Context, userID, id int64) error
}

// Tokens serves the logged-in user's API tokens: list, create, revoke.
type Tokens struct {
	log   *slog.Logger
	store tokenStore
	// Base is the address people reach the app at ("https://gw.example.org"),
	// for the example command a new token comes with; "" means the
	// request's own host and scheme (which a TLS proxy in front hides).
	Base string
}

// NewTokens returns the API token handlers.
func NewTokens(log *slog.Logger, store tokenStore) *Tokens { return &Tokens{log: log, store: store} }

// List renders the user's tokens.
func (h *Tokens) List(w http.ResponseWriter, r *http.Request) {
	h.show(w, r, http.StatusOK, views.TokenForm{}, nil)
}

// Create makes a token and shows its secret once, in the response itself:
// no redirect, so the secret never travels through a URL or the session.
func (h *Tokens) Create(w http.ResponseWriter, r *http.Request) {
	u, _ := CurrentUser(r.Context())
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the token form"))
		return
	}
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if name == "" || len(name) > 100 {
		h.show(w, r, http.StatusUnprocessableEntity, views.TokenForm{Name: name, Error: "Give the token a name of 1 to 100 characters."}, nil)
		return
	}
	t, secret, err := h.store.CreateAPIToken(r.Context(), u.ID, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("api token created", "request_id", requestID(r), "user", u.Name, "token", t.Prefix)
	base := strings.TrimSuffix(h.Base, "/")
	if base == "" {
		base = "http://" + r.Host
		if r.TLS != nil {
			base = "https://" + r.Host
		}
	}
	h.show(w, r, http.StatusCreated, views.TokenForm{}, &views.NewToken{
		Name:   t.Name,
		Secret: secret,
		Curl:   fmt.Sprintf(`curl -fS -H "Authorization: Bearer %s" -o sft.jsonl '%s/api/export/RUN/sft.jsonl'`, secret, base),
	})
}

// Revoke revokes one of the user's tokens: 303 back to the list, or the
// list itself for htmx.
func (h *Tokens) Revoke(w http.ResponseWriter, r *http.Request) {
	u, _ := CurrentUser(r.Context())
	id, ok := intParam(r, "tokenID")
	if !ok {
		h.fail(w, r, badRequest("token id must be a number"))
		return
	}
	err := h.store.RevokeAPIToken(r.Context(), u.ID, id)
	if errors.Is(err, grounding.ErrNotFound) {
		h.fail(w, r, Error(http.StatusNotFound, "You have no such token."))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.log.Info("api token revoked", "request_id", requestID(r), "user", u.Name, "token_id", id)
	if !isPartial(r) {
		http.Redirect(w, r, "/tokens", http.StatusSeeOther)
		return
	}
	h.show(w, r, http.StatusOK, views.TokenForm{}, nil)
}

func (h *Tokens) show(w http.ResponseWriter, r *http.Request, status int, form views.TokenForm, created *views.NewToken) {
	u, _ := CurrentUser(r.Context())
	ts, err := h.store.APITokens(r.Context(), u.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.TokensPage{Form: form, New: created, ExportURL: "/export"}
	for _, t := range ts {
		row := views.TokenRow{Name: t.Name, Prefix: t.Prefix + "…", Created: dateTime(t.CreatedAt), LastUsed: "never"}
		if !t.LastUsedAt.IsZero() {
			row.LastUsed = dateTime(t.LastUsedAt)
		}
		if t.Revoked() {
			row.Revoked = dateTime(t.RevokedAt)
		} else {
			row.RevokeURL = "/tokens/" + strconv.FormatInt(t.ID, 10) + "/revoke"
		}
		p.Rows = append(p.Rows, row)
	}
	render(w, r, status, page{title: "API tokens", section: "export", body: views.Tokens(p), fragment: views.TokenList(p)})
}

func (h *Tokens) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }
