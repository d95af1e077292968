package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"groundwork/grounding"
)

// TokenPrefix starts every API token, so a leaked one is easy to recognize
// (and to grep for).
const TokenPrefix = "gw_"

// tokenShown is how many characters of a token its prefix keeps: "gw_" and
// six of the 43 random ones, which tell tokens apart without helping anyone
// guess the rest.
const tokenShown = len(TokenPrefix) + 6

// maxTokenName is the longest token label, in bytes.
const maxTokenName = 100

type tokenRow struct {
	ID         int64    `db:"id"`
	UserID     int64    `db:"user_id"`
	Name       string   `db:"name"`
	Prefix     string   `db:"prefix"`
	CreatedAt  dbTime   `db:"created_at"`
	LastUsedAt nullTime `db:"last_used_at"`
	RevokedAt  nullTime `db:"revoked_at"`
}

func (r tokenRow) token() grounding.APIToken {
	return grounding.APIToken{ID: r.ID, UserID: r.UserID, Name: r.Name, Prefix: r.Prefix,
		CreatedAt: r.CreatedAt.Time, LastUsedAt: r.LastUsedAt.Time, RevokedAt: r.RevokedAt.Time}
}

const tokenColumns = `t.id, t.user_id, t.name, t.prefix, t.created_at, t.last_used_at, t.revoked_at`

// hashToken is what the database keeps of a token.
func hashToken(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// CreateAPIToken makes a new token for the user and returns it with its
// secret, which is not stored and cannot be shown again. The secret is
// "gw_" and 32 random bytes in unpadded base64url. An empty or overlong name
// is grounding.ErrInvalid; an unknown user, grounding.ErrNotFound.
func (db *DB) CreateAPIToken(ctx context.Context, userID int64, name string) (grounding.APIToken, string, error) {
	op := fmt.Sprintf("create API token for user %d", userID)
	name = strings.TrimSpace(name)
	if name == "" || len(name) > maxTokenName {
		return grounding.APIToken{}, "", fmt.Errorf("store: %s: the name must have 1 to %d bytes: %w", op, maxTokenName, grounding.ErrInvalid)
	}
	u, err := db.User(ctx, userID)
	if err != nil {
		return grounding.APIToken{}, "", err
	}
	if u.Disabled {
		// It would be refused on every use; say so now, not at 401.
		return grounding.APIToken{}, "", fmt.Errorf("store: %s: the account %q is disabled; enable it first: %w", op, u.Name, grounding.ErrInvalid)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	secret := TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	t := grounding.APIToken{UserID: userID, Name: name, Prefix: secret[:tokenShown], CreatedAt: now()}
	err = db.x.QueryRowxContext(ctx, db.x.Rebind(
		`INSERT INTO api_tokens (user_id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?) RETURNING id`),
		userID, name, t.Prefix, hashToken(secret), dbTime{t.CreatedAt}).Scan(&t.ID)
	if err != nil {
		return grounding.APIToken{}, "", storeErr(op, err)
	}
	return t, secret, nil
}

// APITokens lists the user's tokens, newest first, revoked ones included.
func (db *DB) APITokens(ctx context.Context, userID int64) ([]grounding.APIToken, error) {
	var rows []tokenRow
	err := db.x.SelectContext(ctx, &rows, db.x.Rebind(`SELECT `+tokenColumns+` FROM api_tokens t
		WHERE t.user_id = ? ORDER BY t.created_at DESC, t.id DESC`), userID)
	if err != nil {
		return nil, storeErr(fmt.Sprintf("API tokens of user %d", userID), err)
	}
	out := make([]grounding.APIToken, len(rows))
	for i, r := range rows {
		out[i] = r.token()
	}
	return out, nil
}

// APITokenUser returns the token whose secret this is and its owner. An
// unknown secret is grounding.ErrNotFound; a revoked token,
// grounding.ErrTokenRevoked. The lookup is by the secret's hash, so the
// secret is never compared byte by byte.
func (db *DB) APITokenUser(ctx context.Context, secret string) (grounding.APIToken, grounding.User, error) {
	var r struct {
		tokenRow
		U userRow `db:"u"`
	}
	err := db.x.GetContext(ctx, &r, db.x.Rebind(`SELECT `+tokenColumns+`,
		u.id AS "u.id", u.name AS "u.name", u.role AS "u.role", u.password_hash AS "u.password_hash", u.created_at AS "u.created_at",
		u.disabled_at AS "u.disabled_at"
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`), hashToken(secret))
	if err != nil {
		return grounding.APIToken{}, grounding.User{}, storeErr("API token", err)
	}
	t := r.token()
	if t.Revoked() || r.U.user().Disabled { // disabling revokes; the check keeps it so
		return t, grounding.User{}, fmt.Errorf("store: API token %s: %w", t.Prefix, grounding.ErrTokenRevoked)
	}
	return t, r.U.user(), nil
}

// TouchAPIToken records that the token was used at. It writes only when the
// recorded time is older than a minute, so a script's burst of requests
// costs one write.
func (db *DB) TouchAPIToken(ctx context.Context, id int64, at time.Time) error {
	_, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE api_tokens SET last_used_at = ?
		WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`), dbTime{at}, id, dbTime{at.Add(-time.Minute)})
	return storeErr(fmt.Sprintf("touch API token %d", id), err)
}

// RevokeAPIToken revokes the user's token id. Revoking twice keeps the
// first time. A token that is not the user's is grounding.ErrNotFound.
func (db *DB) RevokeAPIToken(ctx context.Context, userID, id int64) error {
	op := fmt.Sprintf("revoke API token %d of user %d", id, userID)
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?)
		WHERE id = ? AND user_id = ?`), dbTime{now()}, id, userID)
	if err != nil {
		return storeErr(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return storeErr(op, err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s: %w", op, grounding.ErrNotFound)
	}
	return nil
}
