package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/alexedwards/scs/v2"

	"groundwork/grounding"
)

// sessionStore keeps scs sessions in the sessions table. It implements
// scs.Store, scs.CtxStore, scs.IterableStore and scs.IterableCtxStore.
type sessionStore struct {
	db     *DB
	userOf func(data []byte) int64
}

var (
	_ scs.CtxStore         = sessionStore{}
	_ scs.IterableStore    = sessionStore{}
	_ scs.IterableCtxStore = sessionStore{}
)

// SessionStore returns an scs session store backed by the sessions table.
// Expired rows are never found; DeleteExpiredSessions removes them.
//
// userOf reads the signed-in user's id from a session's data (0 for none;
// nil: never). The store keeps that id beside the data, and a lookup made
// with a context from WithSessionUser reads the user's current row in the
// same statement (SessionUser returns it): the request needs no second
// round trip for its user, and a changed role or a deleted account takes
// effect on the next request as before.
func (db *DB) SessionStore(userOf func(data []byte) int64) scs.Store {
	return sessionStore{db: db, userOf: userOf}
}

type sessionUserKey struct{}

type sessionUserSlot struct {
	user grounding.User
	ok   bool
}

// WithSessionUser returns ctx with room for the user that the session
// lookup of this request finds (see SessionStore).
func WithSessionUser(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionUserKey{}, &sessionUserSlot{})
}

// SessionUser returns the user read with the request's session, and false
// when none was: no session, no user id kept with it, an account that no
// longer exists, or no room made by WithSessionUser.
func SessionUser(ctx context.Context) (grounding.User, bool) {
	slot, _ := ctx.Value(sessionUserKey{}).(*sessionUserSlot)
	if slot == nil || !slot.ok {
		return grounding.User{}, false
	}
	return slot.user, true
}

// DeleteExpiredSessions removes sessions whose expiry has passed and returns
// how many it removed. Run it periodically.
func (db *DB) DeleteExpiredSessions(ctx context.Context) (int64, error) {
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`DELETE FROM sessions WHERE expiry <= ?`), dbTime{now()})
	if err != nil {
		return 0, storeErr("delete expired sessions", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, storeErr("delete expired sessions", err)
	}
	return n, nil
}

func (s sessionStore) Find(token string) ([]byte, bool, error) {
	return s.FindCtx(context.Background(), token)
}

func (s sessionStore) Commit(token string, b []byte, expiry time.Time) error {
	return s.CommitCtx(context.Background(), token, b, expiry)
}

func (s sessionStore) Delete(token string) error {
	return s.DeleteCtx(context.Background(), token)
}

func (s sessionStore) All() (map[string][]byte, error) {
	return s.AllCtx(context.Background())
}

// FindCtx returns the session's data; an unknown or expired token is not
// found, without error. The user kept with the session is read too, into
// ctx's room from WithSessionUser.
func (s sessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var r struct {
		Data    []byte         `db:"data"`
		UserID  sql.NullInt64  `db:"u_id"`
		Name    sql.NullString `db:"u_name"`
		Role    sql.NullString `db:"u_role"`
		Hash    []byte         `db:"u_password_hash"`
		Created nullTime       `db:"u_created_at"`
		Off     nullTime       `db:"u_disabled_at"`
	}
	err := s.db.get(ctx, &r, `SELECT s.data, u.id AS u_id, u.name AS u_name, u.role AS u_role,
		u.password_hash AS u_password_hash, u.created_at AS u_created_at, u.disabled_at AS u_disabled_at
		FROM sessions s LEFT JOIN users u ON u.id = s.user_id
		WHERE s.token = ? AND s.expiry > ?`, token, dbTime{now()})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storeErr("find session", err)
	}
	if slot, _ := ctx.Value(sessionUserKey{}).(*sessionUserSlot); slot != nil && r.UserID.Valid {
		slot.user = grounding.User{ID: r.UserID.Int64, Name: r.Name.String, Role: r.Role.String, PasswordHash: r.Hash, CreatedAt: r.Created.Time,
			Disabled: !r.Off.IsZero()}
		slot.ok = true
	}
	return r.Data, true, nil
}

// CommitCtx inserts or replaces the session, with the user id its data
// holds.
func (s sessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if b == nil {
		b = []byte{} // data is NOT NULL
	}
	var user sql.NullInt64
	if s.userOf != nil {
		if id := s.userOf(b); id != 0 {
			user = sql.NullInt64{Int64: id, Valid: true}
		}
	}
	_, err := s.db.x.ExecContext(ctx, s.db.x.Rebind(
		`INSERT INTO sessions (token, data, expiry, user_id) VALUES (?, ?, ?, ?)
		 ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry, user_id = excluded.user_id`),
		token, b, dbTime{expiry}, user)
	return storeErr("commit session", err)
}

// DeleteCtx removes the session; an unknown token is not an error.
func (s sessionStore) DeleteCtx(ctx context.Context, token string) error {
	_, err := s.db.x.ExecContext(ctx, s.db.x.Rebind(`DELETE FROM sessions WHERE token = ?`), token)
	return storeErr("delete session", err)
}

// AllCtx returns every unexpired session by token.
func (s sessionStore) AllCtx(ctx context.Context) (map[string][]byte, error) {
	rows, err := s.db.x.QueryContext(ctx, s.db.x.Rebind(`SELECT token, data FROM sessions WHERE expiry > ?`), dbTime{now()})
	if err != nil {
		return nil, storeErr("list sessions", err)
	}
	defer rows.Close()
	all := make(map[string][]byte)
	for rows.Next() {
		var token string
		var data []byte
		if err := rows.Scan(&token, &data); err != nil {
			return nil, storeErr("list sessions", err)
		}
		all[token] = data
	}
	return all, storeErr("list sessions", rows.Err())
}
