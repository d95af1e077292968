package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/alexedwards/scs/v2"
)

// sessionStore keeps scs sessions in the sessions table. It implements
// scs.Store, scs.CtxStore, scs.IterableStore and scs.IterableCtxStore.
type sessionStore struct{ db *DB }

var (
	_ scs.CtxStore         = sessionStore{}
	_ scs.IterableStore    = sessionStore{}
	_ scs.IterableCtxStore = sessionStore{}
)

// SessionStore returns an scs session store backed by the sessions table.
// Expired rows are never found; DeleteExpiredSessions removes them.
func (db *DB) SessionStore() scs.Store {
	return sessionStore{db: db}
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
// found, without error.
func (s sessionStore) FindCtx(ctx context.Context, token string) ([]byte, bool, error) {
	var data []byte
	err := s.db.get(ctx, &data,
		`SELECT data FROM sessions WHERE token = ? AND expiry > ?`, token, dbTime{now()})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storeErr("find session", err)
	}
	return data, true, nil
}

// CommitCtx inserts or replaces the session.
func (s sessionStore) CommitCtx(ctx context.Context, token string, b []byte, expiry time.Time) error {
	if b == nil {
		b = []byte{} // data is NOT NULL
	}
	_, err := s.db.x.ExecContext(ctx, s.db.x.Rebind(
		`INSERT INTO sessions (token, data, expiry) VALUES (?, ?, ?)
		 ON CONFLICT (token) DO UPDATE SET data = excluded.data, expiry = excluded.expiry`),
		token, b, dbTime{expiry})
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
