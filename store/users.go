package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jmoiron/sqlx"

	"groundwork/grounding"
)

type userRow struct {
	ID           int64    `db:"id"`
	Name         string   `db:"name"`
	Role         string   `db:"role"`
	PasswordHash []byte   `db:"password_hash"`
	CreatedAt    dbTime   `db:"created_at"`
	DisabledAt   nullTime `db:"disabled_at"`
}

func (r userRow) user() grounding.User {
	return grounding.User{ID: r.ID, Name: r.Name, Role: r.Role, PasswordHash: r.PasswordHash, CreatedAt: r.CreatedAt.Time,
		Disabled: !r.DisabledAt.IsZero()}
}

const userColumns = `id, name, role, password_hash, created_at, disabled_at`

// CreateUser adds an account. It returns grounding.ErrInvalid for an empty
// name or an unknown role and grounding.ErrConflict when the name is taken.
func (db *DB) CreateUser(ctx context.Context, name, role string, passwordHash []byte) (grounding.User, error) {
	op := fmt.Sprintf("create user %q", name)
	if name == "" {
		return grounding.User{}, fmt.Errorf("store: %s: empty name: %w", op, grounding.ErrInvalid)
	}
	if !grounding.ValidAccountRole(role) {
		return grounding.User{}, fmt.Errorf("store: %s: unknown role %q: %w", op, role, grounding.ErrInvalid)
	}
	u := grounding.User{Name: name, Role: role, PasswordHash: passwordHash, CreatedAt: now()}
	err := db.x.QueryRowxContext(ctx,
		db.x.Rebind(`INSERT INTO users (name, role, password_hash, created_at) VALUES (?, ?, ?, ?) RETURNING id`),
		name, role, passwordHash, dbTime{u.CreatedAt},
	).Scan(&u.ID)
	if err != nil {
		return grounding.User{}, storeErr(op, err)
	}
	return u, nil
}

// UserByName returns the account called name, or grounding.ErrNotFound.
func (db *DB) UserByName(ctx context.Context, name string) (grounding.User, error) {
	var r userRow
	err := db.get(ctx, &r, `SELECT `+userColumns+` FROM users WHERE name = ?`, name)
	if err != nil {
		return grounding.User{}, storeErr(fmt.Sprintf("user %q", name), err)
	}
	return r.user(), nil
}

// User returns the account with this id, or grounding.ErrNotFound.
func (db *DB) User(ctx context.Context, id int64) (grounding.User, error) {
	var r userRow
	err := db.get(ctx, &r, `SELECT `+userColumns+` FROM users WHERE id = ?`, id)
	if err != nil {
		return grounding.User{}, storeErr(fmt.Sprintf("user %d", id), err)
	}
	return r.user(), nil
}

// CountUsers returns the number of accounts (zero means first start: the
// first account becomes the admin).
func (db *DB) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := db.x.GetContext(ctx, &n, `SELECT COUNT(*) FROM users`); err != nil {
		return 0, storeErr("count users", err)
	}
	return n, nil
}

// Users lists every account by name.
func (db *DB) Users(ctx context.Context) ([]grounding.User, error) {
	var rows []userRow
	if err := db.x.SelectContext(ctx, &rows, `SELECT `+userColumns+` FROM users ORDER BY name`); err != nil {
		return nil, storeErr("list users", err)
	}
	users := make([]grounding.User, len(rows))
	for i, r := range rows {
		users[i] = r.user()
	}
	return users, nil
}

// SetPassword replaces a user's password hash and ends the user's
// sessions (whoever knew the old password is logged out everywhere). It
// returns grounding.ErrNotFound when no user has this id.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash []byte) error {
	op := fmt.Sprintf("set password of user %d", userID)
	return db.userChange(ctx, op, userID, func(tx *sqlx.Tx) (sql.Result, error) {
		return tx.ExecContext(ctx, tx.Rebind(`UPDATE users SET password_hash = ? WHERE id = ?`), hash, userID)
	}, true)
}

// SetDisabled disables or enables a user. Disabling deletes the user's
// sessions and revokes their API tokens in the same transaction, so
// nothing the account held keeps working; enabling restores the login
// only (a revoked token stays revoked). An admin cannot be disabled while
// no other enabled admin remains (grounding.ErrInvalid): someone must be
// able to enable accounts again. An unknown id is grounding.ErrNotFound.
func (db *DB) SetDisabled(ctx context.Context, userID int64, disabled bool) error {
	op := fmt.Sprintf("enable user %d", userID)
	if disabled {
		op = fmt.Sprintf("disable user %d", userID)
	}
	return db.userChange(ctx, op, userID, func(tx *sqlx.Tx) (sql.Result, error) {
		if !disabled {
			return tx.ExecContext(ctx, tx.Rebind(`UPDATE users SET disabled_at = NULL WHERE id = ?`), userID)
		}
		var role string
		if err := tx.GetContext(ctx, &role, tx.Rebind(`SELECT role FROM users WHERE id = ?`), userID); err != nil {
			return nil, err
		}
		// The enabled admins, locked (Postgres): two admins disabling each
		// other at once must not both see the other as the one left.
		var admins []int64
		err := tx.SelectContext(ctx, &admins, tx.Rebind(`SELECT id FROM users
			WHERE role = ? AND disabled_at IS NULL ORDER BY id`+db.d.forUpdate), grounding.RoleAdmin)
		if err != nil {
			return nil, err
		}
		others := len(admins)
		if slices.Contains(admins, userID) {
			others--
		}
		if role == grounding.RoleAdmin && others == 0 {
			return nil, fmt.Errorf("the last enabled admin cannot be disabled: %w", grounding.ErrInvalid)
		}
		at := dbTime{now()}
		if _, err := tx.ExecContext(ctx, tx.Rebind(`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE user_id = ?`), at, userID); err != nil {
			return nil, err
		}
		return tx.ExecContext(ctx, tx.Rebind(`UPDATE users SET disabled_at = COALESCE(disabled_at, ?) WHERE id = ?`), at, userID)
	}, disabled)
}

// userChange runs change on a user's row in a transaction and, with
// endSessions, deletes the user's sessions there too. No row changed is
// grounding.ErrNotFound.
func (db *DB) userChange(ctx context.Context, op string, userID int64, change func(tx *sqlx.Tx) (sql.Result, error), endSessions bool) error {
	tx, done, err := db.begin(ctx)
	if err != nil {
		return storeErr(op, err)
	}
	defer done()
	res, err := change(tx)
	if err != nil {
		return storeErr(op, err) // a missing row (sql.ErrNoRows) is ErrNotFound
	}
	n, err := res.RowsAffected()
	if err != nil {
		return storeErr(op, err)
	}
	if n == 0 {
		return fmt.Errorf("store: %s: %w", op, grounding.ErrNotFound)
	}
	if endSessions {
		if _, err := tx.ExecContext(ctx, tx.Rebind(`DELETE FROM sessions WHERE user_id = ?`), userID); err != nil {
			return storeErr(op, err)
		}
	}
	return storeErr(op, tx.Commit())
}
