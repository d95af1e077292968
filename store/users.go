package store

import (
	"context"
	"fmt"

	"groundwork/grounding"
)

type userRow struct {
	ID           int64  `db:"id"`
	Name         string `db:"name"`
	Role         string `db:"role"`
	PasswordHash []byte `db:"password_hash"`
	CreatedAt    dbTime `db:"created_at"`
}

func (r userRow) user() grounding.User {
	return grounding.User{ID: r.ID, Name: r.Name, Role: r.Role, PasswordHash: r.PasswordHash, CreatedAt: r.CreatedAt.Time}
}

const userColumns = `id, name, role, password_hash, created_at`

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

// SetPassword replaces a user's password hash. It returns
// grounding.ErrNotFound when no user has this id.
func (db *DB) SetPassword(ctx context.Context, userID int64, hash []byte) error {
	op := fmt.Sprintf("set password of user %d", userID)
	res, err := db.x.ExecContext(ctx, db.x.Rebind(`UPDATE users SET password_hash = ? WHERE id = ?`), hash, userID)
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
