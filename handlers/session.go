package handlers

import (
	"context"

	"groundwork/grounding"
)

// SessionUserID is the session key holding the logged-in user's id.
const SessionUserID = "user_id"

// sessionManager is what login and logout need from the session manager
// (*scs.SessionManager satisfies it).
type sessionManager interface {
	RenewToken(ctx context.Context) error
	Put(ctx context.Context, key string, val any)
	Destroy(ctx context.Context) error
}

type userKey struct{}

// WithUser returns ctx carrying the logged-in user. The login middleware in
// web sets it; it is the one value groundwork keeps in a request context,
// because every page's navigation shows who is logged in.
func WithUser(ctx context.Context, u grounding.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// CurrentUser returns the user WithUser stored, if any.
func CurrentUser(ctx context.Context) (grounding.User, bool) {
	u, ok := ctx.Value(userKey{}).(grounding.User)
	return u, ok
}

// CanImport reports whether role may import files.
func CanImport(role string) bool {
	return role == grounding.RoleAdmin || role == grounding.RoleResearcher
}
