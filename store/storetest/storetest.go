// Package storetest is the contract suite of package store: every promise
// the store makes, checked the same way on SQLite and on PostgreSQL, plus
// fixtures and helpers to open a test database of either kind.
package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alexedwards/scs/v2"

	"groundwork/grounding"
	"groundwork/store"
)

// Run runs the contract suite. open must return a fresh, migrated, empty
// database for the test it is given (and close it when that test ends).
func Run(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		fn   func(t *testing.T, db *store.DB)
	}{
		{"Migrations", testMigrations},
		{"UserCreateGet", testUserCreateGet},
		{"UserConflict", testUserConflict},
		{"UserInvalid", testUserInvalid},
		{"UserSetPassword", testUserSetPassword},
		{"UserDisable", testUserDisable},
		{"Sessions", testSessions},
		{"SessionExpiry", testSessionExpiry},
		{"SessionUser", testSessionUser},
		{"ImportRoundTrip", testImportRoundTrip},
		{"ImportAllOrNothing", testImportAllOrNothing},
		{"ImportAllOrNothingAfterFlush", testImportAllOrNothingAfterFlush},
		{"ImportDuplicateFile", testImportDuplicateFile},
		{"ImportExtIDConflict", testImportExtIDConflict},
		{"ImportExtIDTwiceInFile", testImportExtIDTwiceInFile},
		{"ImportInvalid", testImportInvalid},
		{"ImportCleansText", testImportCleansText},
		{"MessageWindowCutsLongContent", testMessageWindowCutsLongContent},
		{"ImportConcurrentSameRun", testImportConcurrentSameRun},
		{"ImportConcurrentSameFile", testImportConcurrentSameFile},
		{"RunCounters", testRunCounters},
		{"RunsOrder", testRunsOrder},
		{"RunFacets", testRunFacets},
		{"KeysetPaging", testKeysetPaging},
		{"PageLimits", testPageLimits},
		{"Filters", testFilters},
		{"CheckFilters", testCheckFilters},
		{"Recheck", testRecheck},
		{"MessageWindows", testMessageWindows},
		{"DecisionWindows", testDecisionWindows},
		{"NotFound", testNotFound},
	}
	tests = append(tests, sweTests...)
	tests = append(tests, coverageTests...)
	tests = append(tests, exportTests...)
	tests = append(tests, adjudicationTests...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

var ctx = context.Background()

// mustImport imports ts as file into run and fails the test on error.
func mustImport(t *testing.T, db *store.DB, run, file string, ts ...*grounding.Trajectory) grounding.ImportResult {
	t.Helper()
	res, err := db.ImportTrajectories(ctx, run, FileMeta(file), Seq(ts...))
	if err != nil {
		t.Fatalf("ImportTrajectories(%q, %q) error: %v", run, file, err)
	}
	return res
}

func mustRun(t *testing.T, db *store.DB, name string) grounding.Run {
	t.Helper()
	r, err := db.RunByName(ctx, name)
	if err != nil {
		t.Fatalf("RunByName(%q) error: %v", name, err)
	}
	return r
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s error = %v, want %v", what, err, target)
	}
}

// allTrajectories pages through a run with f and returns every ext id.
func allTrajectories(t *testing.T, db *store.DB, f grounding.TrajectoryFilter) []string {
	t.Helper()
	var ids []string
	for range 10000 {
		page, err := db.Trajectories(ctx, f)
		if err != nil {
			t.Fatalf("Trajectories(%+v) error: %v", f, err)
		}
		for _, r := range page.Rows {
			ids = append(ids, r.ExtID)
		}
		if page.Next == "" {
			return ids
		}
		f.After = page.Next
	}
	t.Fatal("Trajectories never ended")
	return nil
}

// canonJSON re-encodes raw JSON so that values equal as JSON compare equal
// as bytes (Postgres JSONB reorders keys and respaces).
func canonJSON(t *testing.T, raw []byte) string {
	t.Helper()
	if len(raw) == 0 {
		return ""
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %q: %v", raw, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func canonMessages(t *testing.T, ms []grounding.Message) []grounding.Message {
	out := make([]grounding.Message, len(ms))
	for i, m := range ms {
		if m.Visibility == grounding.Visible {
			m.Visibility = ""
		}
		calls := make([]grounding.ToolCall, len(m.ToolCalls))
		for k, c := range m.ToolCalls {
			c.Arguments = json.RawMessage(canonJSON(t, c.Arguments))
			calls[k] = c
		}
		if len(calls) == 0 {
			calls = nil
		}
		m.ToolCalls = calls
		out[i] = m
	}
	return out
}

// wantMessages returns t's messages from..to with Index set, as the store
// should return them.
func wantMessages(t *testing.T, tr *grounding.Trajectory, idx ...int) []grounding.Message {
	var ms []grounding.Message
	for _, i := range idx {
		m := tr.Messages[i]
		m.Index = i
		ms = append(ms, m)
	}
	return canonMessages(t, ms)
}

func span(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func checkMessages(t *testing.T, what string, got []grounding.Message, err error, want []grounding.Message) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s error: %v", what, err)
	}
	got = canonMessages(t, got)
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s =\n%+v\nwant\n%+v", what, got, want)
	}
}

func testMigrations(t *testing.T, db *store.DB) {
	v, err := db.Version(ctx)
	if err != nil || v < 1 {
		t.Fatalf("Version() = %d, %v; want >= 1", v, err)
	}
	applied, err := db.Migrate(ctx)
	if err != nil || len(applied) != 0 {
		t.Errorf("Migrate() on a migrated database = %v, %v; want none", applied, err)
	}
	if d := db.Dialect(); d != "sqlite" && d != "postgres" {
		t.Errorf("Dialect() = %q", d)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping() error: %v", err)
	}
}

func testUserCreateGet(t *testing.T, db *store.DB) {
	if n, err := db.CountUsers(ctx); err != nil || n != 0 {
		t.Fatalf("CountUsers() on empty = %d, %v", n, err)
	}
	before := time.Now().Add(-time.Second)
	ann, err := db.CreateUser(ctx, "ann", grounding.RoleAnnotator, []byte("$2a$hash-ann"))
	if err != nil {
		t.Fatalf("CreateUser(ann) error: %v", err)
	}
	if ann.ID == 0 || ann.Name != "ann" || ann.Role != grounding.RoleAnnotator || string(ann.PasswordHash) != "$2a$hash-ann" ||
		ann.CreatedAt.Before(before) || ann.CreatedAt.Location() != time.UTC {
		t.Errorf("CreateUser(ann) = %+v", ann)
	}
	adm, err := db.CreateUser(ctx, "Zoe", grounding.RoleAdmin, []byte("h2"))
	if err != nil {
		t.Fatalf("CreateUser(Zoe) error: %v", err)
	}
	for _, get := range []func() (grounding.User, error){
		func() (grounding.User, error) { return db.User(ctx, ann.ID) },
		func() (grounding.User, error) { return db.UserByName(ctx, "ann") },
	} {
		got, err := get()
		if err != nil || !reflect.DeepEqual(got, ann) {
			t.Errorf("get user = %+v, %v; want %+v", got, err, ann)
		}
	}
	if n, err := db.CountUsers(ctx); err != nil || n != 2 {
		t.Errorf("CountUsers() = %d, %v; want 2", n, err)
	}
	users, err := db.Users(ctx)
	if err != nil || len(users) != 2 {
		t.Fatalf("Users() = %v, %v", users, err)
	}
	if !reflect.DeepEqual(users, []grounding.User{adm, ann}) {
		t.Errorf("Users() = %+v, want Zoe then ann (byte order of names)", users)
	}
}

func testUserConflict(t *testing.T, db *store.DB) {
	if _, err := db.CreateUser(ctx, "bob", grounding.RoleResearcher, []byte("h")); err != nil {
		t.Fatal(err)
	}
	_, err := db.CreateUser(ctx, "bob", grounding.RoleAdmin, []byte("h2"))
	wantErr(t, "CreateUser(bob) twice", err, grounding.ErrConflict)
	if n, _ := db.CountUsers(ctx); n != 1 {
		t.Errorf("CountUsers() after conflict = %d, want 1", n)
	}
}

func testUserInvalid(t *testing.T, db *store.DB) {
	_, err := db.CreateUser(ctx, "eve", "superuser", []byte("h"))
	wantErr(t, "CreateUser(role superuser)", err, grounding.ErrInvalid)
	_, err = db.CreateUser(ctx, "", grounding.RoleAdmin, []byte("h"))
	wantErr(t, "CreateUser(empty name)", err, grounding.ErrInvalid)
}

func testUserSetPassword(t *testing.T, db *store.DB) {
	u, err := db.CreateUser(ctx, "cid", grounding.RoleAdmin, []byte("old"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetPassword(ctx, u.ID, []byte("new")); err != nil {
		t.Fatalf("SetPassword error: %v", err)
	}
	got, err := db.User(ctx, u.ID)
	if err != nil || string(got.PasswordHash) != "new" {
		t.Errorf("after SetPassword, User() = %+v, %v", got, err)
	}
	wantErr(t, "SetPassword(unknown)", db.SetPassword(ctx, u.ID+1000, []byte("x")), grounding.ErrNotFound)
}

// Disabling an account ends its sessions and revokes its API tokens at
// once; the last enabled admin stays; enabling restores the login only.
func testUserDisable(t *testing.T, db *store.DB) {
	root, err := db.CreateUser(ctx, "root", grounding.RoleAdmin, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	ann, err := db.CreateUser(ctx, "ann", grounding.RoleAnnotator, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	s := userSessions(db)
	exp := time.Now().Add(time.Hour)
	for token, u := range map[string]grounding.User{"ann-1": ann, "ann-2": ann, "root-1": root} {
		if err := s.CommitCtx(ctx, token, []byte("user="+strconv.FormatInt(u.ID, 10)), exp); err != nil {
			t.Fatal(err)
		}
	}
	_, secret, err := db.CreateAPIToken(ctx, ann.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetDisabled(ctx, ann.ID, true); err != nil {
		t.Fatalf("SetDisabled: %v", err)
	}
	if u, err := db.User(ctx, ann.ID); err != nil || !u.Disabled {
		t.Errorf("User after disabling = %+v, %v", u, err)
	}
	if u, err := db.UserByName(ctx, "ann"); err != nil || !u.Disabled {
		t.Errorf("UserByName after disabling = %+v, %v", u, err)
	}
	for token, want := range map[string]bool{"ann-1": false, "ann-2": false, "root-1": true} {
		if _, found, err := s.FindCtx(ctx, token); err != nil || found != want {
			t.Errorf("session %s after disabling ann: found %v, %v; want %v", token, found, err, want)
		}
	}
	_, _, err = db.APITokenUser(ctx, secret)
	wantErr(t, "APITokenUser of a disabled account", err, grounding.ErrTokenRevoked)
	if err := db.SetDisabled(ctx, ann.ID, true); err != nil {
		t.Errorf("SetDisabled twice: %v", err)
	}
	// A token for a disabled account would be refused on every use.
	if _, _, err := db.CreateAPIToken(ctx, ann.ID, "after"); !errors.Is(err, grounding.ErrInvalid) || !strings.Contains(err.Error(), "is disabled") {
		t.Errorf("CreateAPIToken for a disabled account = %v; want a refusal that says so", err)
	}
	// The last enabled admin cannot be disabled; with another admin, it can.
	wantErr(t, "SetDisabled(last admin)", db.SetDisabled(ctx, root.ID, true), grounding.ErrInvalid)
	if u, _ := db.User(ctx, root.ID); u.Disabled {
		t.Error("the refused SetDisabled disabled the last admin")
	}
	ada, err := db.CreateUser(ctx, "ada", grounding.RoleAdmin, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetDisabled(ctx, root.ID, true); err != nil {
		t.Errorf("SetDisabled(root) with ada enabled: %v", err)
	}
	wantErr(t, "SetDisabled(ada, now the last admin)", db.SetDisabled(ctx, ada.ID, true), grounding.ErrInvalid)
	// Enabling gives the login back, not the tokens.
	if err := db.SetDisabled(ctx, ann.ID, false); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.User(ctx, ann.ID); u.Disabled {
		t.Error("ann is still disabled after enabling")
	}
	_, _, err = db.APITokenUser(ctx, secret)
	wantErr(t, "APITokenUser after enabling", err, grounding.ErrTokenRevoked)
	// Two admins disabling each other at once: one of them stays.
	bo, err := db.CreateUser(ctx, "bo", grounding.RoleAdmin, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	for _, id := range []int64{ada.ID, bo.ID} {
		go func() { errs <- db.SetDisabled(ctx, id, true) }()
	}
	refused := 0
	for range 2 {
		if err := <-errs; errors.Is(err, grounding.ErrInvalid) {
			refused++
		} else if err != nil {
			t.Errorf("concurrent SetDisabled: %v", err)
		}
	}
	enabled := 0
	for _, id := range []int64{ada.ID, bo.ID} {
		if u, _ := db.User(ctx, id); !u.Disabled {
			enabled++
		}
	}
	if refused != 1 || enabled != 1 {
		t.Errorf("two admins disabled at once: %d refused, %d still enabled; want 1 and 1", refused, enabled)
	}
	wantErr(t, "SetDisabled(unknown)", db.SetDisabled(ctx, ann.ID+1000, true), grounding.ErrNotFound)
	wantErr(t, "SetDisabled(unknown, false)", db.SetDisabled(ctx, ann.ID+1000, false), grounding.ErrNotFound)
}

func testSessions(t *testing.T, db *store.DB) {
	s := db.SessionStore(nil)
	if _, ok := s.(scs.CtxStore); !ok {
		t.Errorf("SessionStore() %T does not implement scs.CtxStore", s)
	}
	if b, found, err := s.Find("nope"); err != nil || found || b != nil {
		t.Errorf("Find(unknown) = %q, %v, %v", b, found, err)
	}
	exp := time.Now().Add(time.Hour)
	if err := s.Commit("tok1", []byte("data-1"), exp); err != nil {
		t.Fatalf("Commit error: %v", err)
	}
	if b, found, err := s.Find("tok1"); err != nil || !found || string(b) != "data-1" {
		t.Errorf("Find(tok1) = %q, %v, %v", b, found, err)
	}
	if err := s.Commit("tok1", []byte("data-2"), exp.Add(time.Hour)); err != nil {
		t.Fatalf("Commit again error: %v", err)
	}
	if b, found, err := s.Find("tok1"); err != nil || !found || string(b) != "data-2" {
		t.Errorf("Find(tok1) after overwrite = %q, %v, %v", b, found, err)
	}
	if err := s.Delete("tok1"); err != nil {
		t.Fatalf("Delete error: %v", err)
	}
	if _, found, err := s.Find("tok1"); err != nil || found {
		t.Errorf("Find(tok1) after Delete = %v, %v", found, err)
	}
	if err := s.Delete("tok1"); err != nil {
		t.Errorf("Delete(unknown) error: %v", err)
	}
	cs := s.(scs.CtxStore)
	if err := cs.CommitCtx(ctx, "tok2", []byte{0, 1, 2, 255}, exp); err != nil {
		t.Fatalf("CommitCtx error: %v", err)
	}
	if b, found, err := cs.FindCtx(ctx, "tok2"); err != nil || !found || !bytes.Equal(b, []byte{0, 1, 2, 255}) {
		t.Errorf("FindCtx(tok2) = %v, %v, %v", b, found, err)
	}
}

// userSessions is the session store with session data that names its
// user as the web layer's codec would ("user=ID"; here, plainly).
func userSessions(db *store.DB) scs.CtxStore {
	return db.SessionStore(func(b []byte) int64 {
		id, _ := strconv.ParseInt(strings.TrimPrefix(string(b), "user="), 10, 64)
		return id
	}).(scs.CtxStore)
}

// testSessionUser: a session's lookup reads its user's current row in the
// same statement, for a context with room for it.
func testSessionUser(t *testing.T, db *store.DB) {
	ann, err := db.CreateUser(ctx, "ann", grounding.RoleAnnotator, []byte("hash"))
	if err != nil {
		t.Fatal(err)
	}
	s := userSessions(db)
	exp := time.Now().Add(time.Hour)
	if err := s.CommitCtx(ctx, "signed-in", []byte("user="+strconv.FormatInt(ann.ID, 10)), exp); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCtx(ctx, "anonymous", []byte("nobody"), exp); err != nil {
		t.Fatal(err)
	}
	find := func(token string) (grounding.User, bool) {
		t.Helper()
		rctx := store.WithSessionUser(ctx)
		if _, found, err := s.FindCtx(rctx, token); err != nil || !found {
			t.Fatalf("FindCtx(%s) = %v, %v", token, found, err)
		}
		return store.SessionUser(rctx)
	}
	want, _ := db.User(ctx, ann.ID)
	if u, ok := find("signed-in"); !ok || !reflect.DeepEqual(u, want) {
		t.Errorf("session user = %+v, %v; want %+v", u, ok, want)
	}
	if u, ok := find("anonymous"); ok {
		t.Errorf("a session without a user found %+v", u)
	}
	// A new password ends the account's sessions, and only its own.
	if err := db.SetPassword(ctx, ann.ID, []byte("new hash")); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.FindCtx(ctx, "signed-in"); err != nil || found {
		t.Errorf("the session outlived the password change: found %v, %v", found, err)
	}
	if _, found, err := s.FindCtx(ctx, "anonymous"); err != nil || !found {
		t.Errorf("the password change ended another session: found %v, %v", found, err)
	}
	// The row is read on every lookup: a change to the account shows at once.
	if err := s.CommitCtx(ctx, "signed-in", []byte("user="+strconv.FormatInt(ann.ID, 10)), exp); err != nil {
		t.Fatal(err)
	}
	if err := db.SetDisabled(ctx, ann.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitCtx(ctx, "signed-in", []byte("user="+strconv.FormatInt(ann.ID, 10)), exp); err != nil {
		t.Fatal(err) // a session written while (racing) the account is disabled
	}
	if u, ok := find("signed-in"); !ok || string(u.PasswordHash) != "new hash" || !u.Disabled {
		t.Errorf("the session user of a disabled account = %+v, %v; want it marked disabled", u, ok)
	}
	if err := db.SetDisabled(ctx, ann.ID, false); err != nil {
		t.Fatal(err)
	}
	// Without room in the context, nothing is kept; the data is the same.
	if b, found, err := s.FindCtx(ctx, "signed-in"); err != nil || !found || string(b) != "user="+strconv.FormatInt(ann.ID, 10) {
		t.Errorf("FindCtx without room = %q, %v, %v", b, found, err)
	}
	if _, ok := store.SessionUser(ctx); ok {
		t.Error("SessionUser without room found a user")
	}
	// A session of an account that no longer exists finds no user.
	if err := s.CommitCtx(ctx, "gone", []byte("user=987654"), exp); err != nil {
		t.Fatal(err)
	}
	if u, ok := find("gone"); ok {
		t.Errorf("a session of a missing account found %+v", u)
	}
}

func testSessionExpiry(t *testing.T, db *store.DB) {
	s := db.SessionStore(nil)
	if err := s.Commit("old", []byte("x"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit("live", []byte("y"), time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Find("old"); err != nil || found {
		t.Errorf("Find(expired) = %v, %v; want not found", found, err)
	}
	all, err := s.(scs.IterableStore).All()
	if err != nil || len(all) != 1 || string(all["live"]) != "y" {
		t.Errorf("All() = %v, %v; want only live", all, err)
	}
	n, err := db.DeleteExpiredSessions(ctx)
	if err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions() = %d, %v; want 1", n, err)
	}
	if _, found, _ := s.Find("live"); !found {
		t.Error("DeleteExpiredSessions removed a live session")
	}
}

func testImportRoundTrip(t *testing.T, db *store.DB) {
	tr := RoundTrip("rt-1")
	before := time.Now().Add(-time.Second)
	res := mustImport(t, db, "round", "rt.jsonl", tr, Simple("rt-2", "retail", false, "get_order_details"))
	want := FileMeta("rt.jsonl")
	if res.File != want.File || res.Format != want.Format || res.SHA256 != want.SHA256 || res.Bytes != want.Bytes ||
		res.RunID == 0 || res.RunName != "round" || res.Duplicate || res.Trajectories != 2 ||
		res.Messages != len(tr.Messages)+4 || res.Decisions != len(grounding.Decisions(tr))+2 {
		t.Errorf("ImportTrajectories result = %+v", res)
	}
	run := mustRun(t, db, "round")
	if run.ID != res.RunID || run.CreatedAt.Before(before) {
		t.Errorf("run = %+v", run)
	}

	h, err := db.TrajectoryByExtID(ctx, run.ID, "rt-1")
	if err != nil {
		t.Fatalf("TrajectoryByExtID error: %v", err)
	}
	decisions := grounding.Decisions(tr)
	reward := 1.0
	wantSum := grounding.TrajectorySummary{
		ID: h.ID, RunID: run.ID, ExtID: "rt-1", ParentID: "task-7", Domain: "airline", Success: true, Reward: &reward,
		Messages: 10, Decisions: len(decisions), ToolCalls: 3, Errors: 1, SourceFile: "gpt-4o-airline.json", SourceIndex: 4,
		SourceLine: tr.Source.Line,
	}
	addCheckCounts(&wantSum, grounding.CheckDefault(tr))
	if h.ID == 0 || !reflect.DeepEqual(h.TrajectorySummary, wantSum) {
		t.Errorf("summary =\n%+v\nwant\n%+v", h.TrajectorySummary, wantSum)
	}
	if h.RunName != "round" || h.Request != tr.Request || h.Format != "tau-bench" {
		t.Errorf("header run %q request %q format %q", h.RunName, h.Request, h.Format)
	}
	if canonJSON(t, h.Meta) != canonJSON(t, tr.Meta) {
		t.Errorf("Meta = %s, want %s", h.Meta, tr.Meta)
	}
	if len(h.Tools) != len(tr.Tools) {
		t.Fatalf("Tools = %+v", h.Tools)
	}
	for i, tool := range h.Tools {
		w := tr.Tools[i]
		if tool.Name != w.Name || tool.Description != w.Description || canonJSON(t, tool.Parameters) != canonJSON(t, w.Parameters) {
			t.Errorf("Tools[%d] = %+v (params %s), want %+v", i, tool, tool.Parameters, w)
		}
	}
	if len(h.Hidden) != len(tr.Hidden) {
		t.Fatalf("Hidden = %+v", h.Hidden)
	}
	for i, e := range h.Hidden {
		w := tr.Hidden[i]
		if e.Kind != w.Kind || canonJSON(t, e.Content) != canonJSON(t, w.Content) || !reflect.DeepEqual(e.At, w.At) {
			t.Errorf("Hidden[%d] = %+v (%s), want %+v (%s)", i, e, e.Content, w, w.Content)
		}
	}

	byID, err := db.Trajectory(ctx, h.ID)
	if err != nil || !reflect.DeepEqual(byID.TrajectorySummary, h.TrajectorySummary) || byID.RunName != h.RunName {
		t.Errorf("Trajectory(%d) = %+v, %v; want %+v", h.ID, byID, err, h)
	}

	msgs, err := db.Messages(ctx, h.ID, 0, 1000)
	checkMessages(t, "Messages(all)", msgs, err, wantMessages(t, tr, span(0, 10)...))
	if m := msgs[2]; !m.ContentNull || m.ToolCalls[0].ID != "c1" {
		t.Errorf("message 2 = %+v, want content null and call c1", m)
	}
	if c := msgs[4].ToolCalls[0]; c.RawArguments != `{"amount": 12,` || c.Arguments != nil || c.ArgumentsValid() {
		t.Errorf("undecodable call = %+v, want RawArguments kept and no Arguments", c)
	}
	if !msgs[5].Error || !msgs[6].IsHidden() || msgs[6].HiddenKind != grounding.HiddenTeacherHint || msgs[8].IsHidden() {
		t.Errorf("flags lost: %+v", msgs)
	}

	got, err := db.Decisions(ctx, h.ID, 0, 100)
	if err != nil || canonJSON(t, mustJSON(t, got)) != canonJSON(t, mustJSON(t, WantStored(tr))) {
		t.Errorf("Decisions = %+v, %v; want %+v", got, err, WantStored(tr))
	}
	check := grounding.CheckDefault(tr)
	if h.EngineVersion != check.EngineVersion || h.Profile != check.Profile+"@"+check.ProfileVersion ||
		h.CheckedAt.Before(before) || !slices.Equal(h.FlowReasons, check.Reasons) && len(h.FlowReasons)+len(check.Reasons) > 0 {
		t.Errorf("stored check: engine %q profile %q at %v reasons %v; want %q %q %v",
			h.EngineVersion, h.Profile, h.CheckedAt, h.FlowReasons, check.EngineVersion, check.Profile, check.Reasons)
	}

	// A trajectory with no tools, hidden entries, meta, parent or reward.
	h2, err := db.TrajectoryByExtID(ctx, run.ID, "rt-2")
	if err != nil {
		t.Fatal(err)
	}
	if h2.Tools != nil || h2.Hidden != nil || h2.Meta != nil || h2.Reward != nil || h2.ParentID != "rt-2" ||
		h2.Success || h2.SourceFile != "rt.jsonl" || h2.Format != "canonical" {
		t.Errorf("minimal trajectory header = %+v", h2)
	}
}

// failing yields ts and then err.
func failing(err error, ts ...*grounding.Trajectory) iter.Seq2[*grounding.Trajectory, error] {
	return func(yield func(*grounding.Trajectory, error) bool) {
		for _, t := range ts {
			if !yield(t, nil) {
				return
			}
		}
		yield(nil, err)
	}
}

var errBoom = errors.New("importer: line 4: unexpected end of JSON")

func testImportAllOrNothing(t *testing.T, db *store.DB) {
	_, err := db.ImportTrajectories(ctx, "fresh", FileMeta("bad.jsonl"),
		failing(errBoom, Simple("a", "x", true, "t"), Simple("b", "x", true, "t"), Simple("c", "x", true, "t")))
	wantErr(t, "ImportTrajectories(failing seq)", err, errBoom)
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) != 0 {
		t.Errorf("Runs() after failed import = %+v, %v; want none", runs, err)
	}
	// The import row was rolled back too: the same file imports fine later.
	res, err := db.ImportTrajectories(ctx, "fresh", FileMeta("bad.jsonl"), Seq(Simple("a", "x", true, "t")))
	if err != nil || res.Duplicate || res.Trajectories != 1 {
		t.Errorf("re-import after failure = %+v, %v", res, err)
	}

	// Into an existing run: nothing changes.
	before := mustRun(t, db, "fresh")
	_, err = db.ImportTrajectories(ctx, "fresh", FileMeta("bad2.jsonl"),
		failing(errBoom, Simple("d", "x", true, "t"), Simple("e", "x", true, "t"), Simple("f", "x", true, "t")))
	wantErr(t, "ImportTrajectories(failing seq, existing run)", err, errBoom)
	if after := mustRun(t, db, "fresh"); !reflect.DeepEqual(after, before) {
		t.Errorf("run after failed import = %+v, want %+v", after, before)
	}
	if ids := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: before.ID}); !slices.Equal(ids, []string{"a"}) {
		t.Errorf("trajectories after failed import = %v, want [a]", ids)
	}
}

// testImportAllOrNothingAfterFlush fails after more trajectories than one
// write batch, so rows already sent to the database must be rolled back.
func testImportAllOrNothingAfterFlush(t *testing.T, db *store.DB) {
	mustImport(t, db, "kept", "kept.json", TauLike("kept", 0))
	before := mustRun(t, db, "kept")
	var ts []*grounding.Trajectory
	for i := range 300 {
		ts = append(ts, TauLike("lost", i))
	}
	_, err := db.ImportTrajectories(ctx, "kept", FileMeta("lost.json"), failing(errBoom, ts...))
	wantErr(t, "ImportTrajectories(300 then error)", err, errBoom)
	if after := mustRun(t, db, "kept"); !reflect.DeepEqual(after, before) {
		t.Errorf("run after failed import = %+v, want %+v", after, before)
	}
	if ids := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: before.ID, Limit: 500}); len(ids) != 1 {
		t.Errorf("%d trajectories after failed import, want 1", len(ids))
	}
	if _, err := db.TrajectoryByExtID(ctx, before.ID, ts[0].ID); !errors.Is(err, grounding.ErrNotFound) {
		t.Errorf("first trajectory of the failed import: error %v, want ErrNotFound", err)
	}
}

func testImportDuplicateFile(t *testing.T, db *store.DB) {
	first := mustImport(t, db, "r1", "same.json", Simple("a", "x", true, "t"), Simple("b", "x", false, "t"))
	r1 := mustRun(t, db, "r1")
	meta := FileMeta("same.json")
	meta.File = "renamed-copy.json"
	consumed := false
	res, err := db.ImportTrajectories(ctx, "r2", meta, func(yield func(*grounding.Trajectory, error) bool) {
		consumed = true
		yield(Simple("z", "x", true, "t"), nil)
	})
	if err != nil {
		t.Fatalf("ImportTrajectories(duplicate) error: %v", err)
	}
	if !res.Duplicate || res.PreviousRun != "r1" || !res.PreviousAt.Equal(r1.CreatedAt) || res.RunID != 0 ||
		res.RunName != "r2" || res.Trajectories != 0 || res.File != "renamed-copy.json" || res.SHA256 != first.SHA256 {
		t.Errorf("duplicate result = %+v (run r1 created %v)", res, r1.CreatedAt)
	}
	if consumed {
		t.Error("a duplicate import consumed its sequence")
	}
	_, err = db.RunByName(ctx, "r2")
	wantErr(t, "RunByName(r2) after duplicate", err, grounding.ErrNotFound)
	if after := mustRun(t, db, "r1"); !reflect.DeepEqual(after, r1) {
		t.Errorf("r1 after duplicate = %+v, want %+v", after, r1)
	}
}

func testImportExtIDConflict(t *testing.T, db *store.DB) {
	mustImport(t, db, "run", "a.jsonl", Simple("a", "x", true, "t"), Simple("b", "x", true, "t"), Simple("c", "x", true, "t"))
	before := mustRun(t, db, "run")
	dup := Simple("b", "x", true, "t")
	dup.Source.Index = 2
	_, err := db.ImportTrajectories(ctx, "run", FileMeta("b.jsonl"), Seq(Simple("d", "x", true, "t"), Simple("e", "x", true, "t"), dup))
	wantErr(t, "import of an id already in the run", err, grounding.ErrConflict)
	if err != nil {
		for _, part := range []string{`"b"`, "record 2", "a.jsonl"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("conflict error %q does not mention %s", err, part)
			}
		}
	}
	if after := mustRun(t, db, "run"); !reflect.DeepEqual(after, before) {
		t.Errorf("run after conflict = %+v, want %+v", after, before)
	}
	if ids := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: before.ID}); !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Errorf("trajectories after conflict = %v, want [a b c]", ids)
	}
	// The same id in another run is fine.
	mustImport(t, db, "other", "c.jsonl", Simple("b", "x", true, "t"))
}

func testImportExtIDTwiceInFile(t *testing.T, db *store.DB) {
	_, err := db.ImportTrajectories(ctx, "run", FileMeta("twice.jsonl"), Seq(Simple("a", "x", true, "t"), Simple("a", "x", true, "t")))
	wantErr(t, "import of an id twice in a file", err, grounding.ErrConflict)
	if runs, _ := db.Runs(ctx); len(runs) != 0 {
		t.Errorf("Runs() after conflict = %+v", runs)
	}
}

func testImportInvalid(t *testing.T, db *store.DB) {
	_, err := db.ImportTrajectories(ctx, "run", FileMeta("noid.jsonl"), Seq(Simple("", "x", true, "t")))
	wantErr(t, "import of a trajectory without id", err, grounding.ErrInvalid)
	_, err = db.ImportTrajectories(ctx, "", FileMeta("norun.jsonl"), Seq(Simple("a", "x", true, "t")))
	wantErr(t, "import into an unnamed run", err, grounding.ErrInvalid)
	// Run names Postgres cannot store, or that display as another name.
	for _, name := range []string{"nul\x00name", "bad\xffrun", "evil\u202Etxt.lmth", strings.Repeat("r", 201)} {
		_, err = db.ImportTrajectories(ctx, name, FileMeta("badrun.jsonl"), Seq(Simple("a", "x", true, "t")))
		wantErr(t, fmt.Sprintf("import into run %q", name), err, grounding.ErrInvalid)
		if _, err := db.RunByName(ctx, name); !errors.Is(err, grounding.ErrNotFound) {
			t.Errorf("RunByName(%q) = %v; want not found", name, err)
		}
	}
	if runs, _ := db.Runs(ctx); len(runs) != 0 {
		t.Errorf("refused imports left runs: %+v", runs)
	}
	// A file name is cleaned, not refused: it is shown where it is named.
	mustImport(t, db, "named", "x\xffy\x00.jsonl", Simple("a", "x", true, "t"))
	_, err = db.ImportTrajectories(ctx, "named", FileMeta("again.jsonl"), Seq(Simple("a", "x", true, "t")))
	if !errors.Is(err, grounding.ErrConflict) || !strings.Contains(err.Error(), "x\uFFFDy\uFFFD.jsonl") {
		t.Errorf("the conflict names the earlier file as %v; want it cleaned", err)
	}
	// Worded like any bad record: the refused file, the record, the field.
	if !strings.Contains(err.Error(), `again.jsonl: record 0: id: expected an id not already in run "named"; got "a", imported before from x`) {
		t.Errorf("the conflict reads %q", err)
	}
	bad := Simple("a", "x", true, "t")
	bad.Meta = json.RawMessage(`{not json`)
	_, err = db.ImportTrajectories(ctx, "run", FileMeta("badmeta.jsonl"), Seq(bad))
	wantErr(t, "import with invalid meta JSON", err, grounding.ErrInvalid)
}

// testImportCleansText: NUL and invalid UTF-8, which Postgres cannot store,
// come back as U+FFFD from both dialects instead of failing the import.
func testImportCleansText(t *testing.T, db *store.DB) {
	tr := Simple("nul", "x", true, "cat")
	tr.Request = "read \x00 then\x00"
	tr.Messages[0].Content = "binary \x00\xff output"
	tr.Messages[1].ToolCalls[0].Arguments = json.RawMessage(`{"path":"a\u0000b","lit":"\\u0000"}`)
	tr.Meta = json.RawMessage(`{"note":"\u0000"}`)
	tr.Hidden = []grounding.HiddenEntry{{Kind: grounding.HiddenDBState, Content: json.RawMessage(`"x\u0000"`)}}
	mustImport(t, db, "clean", "clean.jsonl", tr)
	h, err := db.TrajectoryByExtID(ctx, mustRun(t, db, "clean").ID, "nul")
	if err != nil {
		t.Fatal(err)
	}
	if h.Request != "read \uFFFD then\uFFFD" {
		t.Errorf("Request = %q", h.Request)
	}
	if got := canonJSON(t, h.Meta); got != "{\"note\":\"\uFFFD\"}" {
		t.Errorf("Meta = %s", got)
	}
	if got := canonJSON(t, h.Hidden[0].Content); got != "\"x\uFFFD\"" {
		t.Errorf("Hidden content = %s", got)
	}
	msgs, err := db.Messages(ctx, h.ID, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Content != "binary \uFFFD\uFFFD output" {
		t.Errorf("Content = %q", msgs[0].Content)
	}
	if got := canonJSON(t, msgs[1].ToolCalls[0].Arguments); got != `{"lit":"\\u0000","path":"a`+"\uFFFD"+`b"}` {
		t.Errorf("Arguments = %s", got)
	}
}

func testImportConcurrentSameRun(t *testing.T, db *store.DB) {
	const n = 60
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for g := range 2 {
		wg.Go(func() {
			var ts []*grounding.Trajectory
			for i := range n {
				ts = append(ts, TauLike(fmt.Sprintf("g%d", g), i))
			}
			_, errs[g] = db.ImportTrajectories(ctx, "shared", FileMeta(fmt.Sprintf("g%d.json", g)), Seq(ts...))
		})
	}
	wg.Wait()
	for g, err := range errs {
		if err != nil {
			t.Errorf("concurrent import %d error: %v", g, err)
		}
	}
	run := mustRun(t, db, "shared")
	if run.Trajectories != 2*n || run.Imports != 2 {
		t.Errorf("run after concurrent imports = %+v", run)
	}
	if ids := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: run.ID, Limit: 500}); len(ids) != 2*n {
		t.Errorf("listed %d trajectories, want %d", len(ids), 2*n)
	}
}

func testImportConcurrentSameFile(t *testing.T, db *store.DB) {
	var ts []*grounding.Trajectory
	for i := range 40 {
		ts = append(ts, TauLike("same", i))
	}
	var wg sync.WaitGroup
	results := make([]grounding.ImportResult, 2)
	errs := make([]error, 2)
	for g := range 2 {
		wg.Go(func() {
			results[g], errs[g] = db.ImportTrajectories(ctx, fmt.Sprintf("r%d", g), FileMeta("same.json"), Seq(ts...))
		})
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("concurrent imports of one file: errors %v, %v", errs[0], errs[1])
	}
	if results[0].Duplicate == results[1].Duplicate {
		t.Fatalf("concurrent imports of one file: duplicates %v, %v; want exactly one", results[0].Duplicate, results[1].Duplicate)
	}
	runs, err := db.Runs(ctx)
	if err != nil || len(runs) != 1 || runs[0].Trajectories != 40 {
		t.Errorf("Runs() = %+v, %v; want the one run that imported", runs, err)
	}
}

func testRunCounters(t *testing.T, db *store.DB) {
	var want grounding.Run
	add := func(ts []*grounding.Trajectory) {
		want.Imports++
		for _, tr := range ts {
			want.Trajectories++
			if tr.Succeeded() {
				want.Successes++
			}
			want.Messages += len(tr.Messages)
			var sum grounding.TrajectorySummary
			addCheckCounts(&sum, grounding.CheckDefault(tr))
			want.Pass += sum.Pass
			want.Fail += sum.Fail
			want.Ambiguous += sum.Ambiguous
			want.Queued += sum.Queued
			want.Supervised += sum.Supervised
			if sum.Certified {
				want.Certified++
			}
			for _, d := range grounding.Decisions(tr) {
				want.Decisions++
				if !d.IsReply() {
					want.ToolCalls++
				}
			}
		}
	}
	var f1, f2 []*grounding.Trajectory
	for i := range 30 {
		f1 = append(f1, TauLike("f1", i))
		f2 = append(f2, TauLike("f2", i))
	}
	f2 = append(f2, RoundTrip("rt"))
	res := mustImport(t, db, "counted", "f1.json", f1...)
	add(f1)
	if res.Trajectories != want.Trajectories || res.Messages != want.Messages || res.Decisions != want.Decisions {
		t.Errorf("result counts = %+v, want %+v", res, want)
	}
	mustImport(t, db, "counted", "f2.json", f2...)
	add(f2)
	got := mustRun(t, db, "counted")
	want.ID, want.Name, want.CreatedAt = got.ID, "counted", got.CreatedAt
	if !reflect.DeepEqual(got, want) {
		t.Errorf("run counters = %+v, want %+v", got, want)
	}
	byID, err := db.Run(ctx, got.ID)
	if err != nil || !reflect.DeepEqual(byID, got) {
		t.Errorf("Run(%d) = %+v, %v; want %+v", got.ID, byID, err, got)
	}
}

func testRunsOrder(t *testing.T, db *store.DB) {
	for _, name := range []string{"first", "second", "third"} {
		mustImport(t, db, name, name+".json", Simple("t-"+name, "x", true, "t"))
	}
	runs, err := db.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	if !slices.Equal(names, []string{"third", "second", "first"}) {
		t.Errorf("Runs() = %v, want newest first", names)
	}
}

func testRunFacets(t *testing.T, db *store.DB) {
	mustImport(t, db, "facets", "f.json",
		Simple("1", "retail", true, "get_order_details"),
		Simple("2", "airline", true, "book_reservation"),
		Simple("3", "", false, "get_order_details"),
		Simple("4", "Banking", false, "cancel_reservation"))
	run := mustRun(t, db, "facets")
	domains, tools, err := db.RunFacets(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(domains, []string{"Banking", "airline", "retail"}) {
		t.Errorf("domains = %q", domains)
	}
	if !slices.Equal(tools, []string{"book_reservation", "cancel_reservation", "get_order_details"}) {
		t.Errorf("tools = %q", tools)
	}
	domains, tools, err = db.RunFacets(ctx, run.ID+1000)
	if err != nil || len(domains) != 0 || len(tools) != 0 {
		t.Errorf("RunFacets(unknown) = %q, %q, %v", domains, tools, err)
	}
	// Run 0 is every run, each value once.
	mustImport(t, db, "facets-2", "g.json",
		Simple("1", "retail", true, "get_order_details"),
		Simple("2", "telecom", true, "reset_router"))
	domains, tools, err = db.RunFacets(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(domains, []string{"Banking", "airline", "retail", "telecom"}) {
		t.Errorf("domains of every run = %q", domains)
	}
	if !slices.Equal(tools, []string{"book_reservation", "cancel_reservation", "get_order_details", "reset_router"}) {
		t.Errorf("tools of every run = %q", tools)
	}
}

func testKeysetPaging(t *testing.T, db *store.DB) {
	prefixes := []string{"alpha", "Alpha", "beta", "_x", "Zed", "zed", "a.b", "a-b", "task", "task0"}
	var ts []*grounding.Trajectory
	var want []string
	for i := range 120 {
		// unpadded numbers, and numbers written with leading zeros
		id := fmt.Sprintf("%s-%d-trial%d", prefixes[i%len(prefixes)], (i*37)%120, i%11)
		if i%7 == 0 {
			id = fmt.Sprintf("%s-%03d-trial%d", prefixes[i%len(prefixes)], (i*37)%120, i%11)
		}
		ts = append(ts, Simple(id, "d", i%2 == 0, "t"))
		want = append(want, id)
	}
	for _, id := range []string{"task-2-trial8", "task-10-trial10"} {
		ts = append(ts, Simple(id, "d", true, "t"))
		want = append(want, id)
	}
	slices.SortFunc(want, NaturalCompare) // the store's order in both dialects
	if i, j := slices.Index(want, "task-2-trial8"), slices.Index(want, "task-10-trial10"); i < 0 || j < 0 || i > j {
		t.Fatalf("fixture: want task-2-trial8 (%d) before task-10-trial10 (%d)", i, j)
	}
	mustImport(t, db, "paged", "paged.jsonl", ts...)
	run := mustRun(t, db, "paged")

	for _, limit := range []int{50, 40, 1} {
		var got []string
		f := grounding.TrajectoryFilter{RunID: run.ID, Limit: limit}
		pages := 0
		for {
			page, err := db.Trajectories(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Rows) > limit || (page.Next != "" && len(page.Rows) != limit) {
				t.Fatalf("limit %d: page %d has %d rows, next %q", limit, pages, len(page.Rows), page.Next)
			}
			for _, r := range page.Rows {
				got = append(got, r.ExtID)
			}
			if page.Next == "" {
				break
			}
			if page.Next != page.Rows[len(page.Rows)-1].ExtID {
				t.Fatalf("Next = %q, want the last row's id", page.Next)
			}
			f.After = page.Next
		}
		if !slices.Equal(got, want) {
			t.Errorf("limit %d: paging visited %v, want %v", limit, got, want)
		}
		if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
			t.Errorf("limit %d: %d pages, want %d", limit, pages, wantPages)
		}
	}
}

func testPageLimits(t *testing.T, db *store.DB) {
	var ts []*grounding.Trajectory
	for i := range 510 {
		tr := Simple(fmt.Sprintf("t%04d", i), "d", true, "t")
		tr.Messages = tr.Messages[:1]
		ts = append(ts, tr)
	}
	mustImport(t, db, "big", "big.jsonl", ts...)
	run := mustRun(t, db, "big")
	for _, tt := range []struct{ limit, want int }{{0, 50}, {-3, 50}, {1000, 500}, {510, 500}, {7, 7}} {
		page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Limit: tt.limit})
		if err != nil || len(page.Rows) != tt.want || page.Next == "" {
			t.Errorf("Trajectories(limit %d) = %d rows, next %q, %v; want %d rows", tt.limit, len(page.Rows), page.Next, err, tt.want)
		}
	}
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID + 1000})
	if err != nil || len(page.Rows) != 0 || page.Next != "" {
		t.Errorf("Trajectories(unknown run) = %+v, %v; want an empty page", page, err)
	}
}

func testFilters(t *testing.T, db *store.DB) {
	mk := func(id, domain string, ok bool, tools ...string) *grounding.Trajectory {
		tr := Simple(id, domain, ok, tools[0])
		for k, name := range tools[1:] {
			cid := fmt.Sprintf("x%d", k)
			tr.Messages = append(tr.Messages,
				grounding.Message{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: cid, Name: name, Arguments: json.RawMessage(`{}`)}}},
				grounding.Message{Role: grounding.RoleTool, ToolCallID: cid, Name: name, Content: "ok"})
		}
		return tr
	}
	mustImport(t, db, "filtered", "filtered.jsonl",
		mk("Air-OK-1", "airline", true, "get_user", "book"),
		mk("air-ok-2", "airline", true, "get_user"),
		mk("air-fail-3", "airline", false, "book", "cancel"),
		mk("ret-ok-4", "retail", true, "get_order", "cancel"),
		mk("ret-fail-5", "retail", false, "get_order"),
		mk("ret-ok-6", "retail", true, "get_order", "book"),
		mk("100%_done", "retail", true, "get_order"),
		mk("1000-done", "retail", true, "get_order"),
	)
	mustImport(t, db, "elsewhere", "elsewhere.jsonl", mk("air-ok-9", "airline", true, "book"))
	run := mustRun(t, db, "filtered")
	yes, no := true, false
	tests := []struct {
		name string
		f    grounding.TrajectoryFilter
		want []string
	}{
		{"all", grounding.TrajectoryFilter{}, []string{"100%_done", "1000-done", "Air-OK-1", "air-fail-3", "air-ok-2", "ret-fail-5", "ret-ok-4", "ret-ok-6"}},
		{"success", grounding.TrajectoryFilter{Success: &yes}, []string{"100%_done", "1000-done", "Air-OK-1", "air-ok-2", "ret-ok-4", "ret-ok-6"}},
		{"failure", grounding.TrajectoryFilter{Success: &no}, []string{"air-fail-3", "ret-fail-5"}},
		{"domain", grounding.TrajectoryFilter{Domain: "airline"}, []string{"Air-OK-1", "air-fail-3", "air-ok-2"}},
		{"tool", grounding.TrajectoryFilter{Tool: "book"}, []string{"Air-OK-1", "air-fail-3", "ret-ok-6"}},
		{"search ignores case", grounding.TrajectoryFilter{Search: "AIR-ok"}, []string{"Air-OK-1", "air-ok-2"}},
		{"search wildcards are literal", grounding.TrajectoryFilter{Search: "0%_"}, []string{"100%_done"}},
		{"search underscore", grounding.TrajectoryFilter{Search: "_"}, []string{"100%_done"}},
		{"combined", grounding.TrajectoryFilter{Success: &yes, Domain: "retail", Tool: "cancel", Search: "OK"}, []string{"ret-ok-4"}},
		{"combined none", grounding.TrajectoryFilter{Success: &no, Domain: "retail", Tool: "book"}, nil},
		{"unknown tool", grounding.TrajectoryFilter{Tool: "nope"}, nil},
		{"paged filter", grounding.TrajectoryFilter{Tool: "get_order", Limit: 2}, []string{"100%_done", "1000-done", "ret-fail-5", "ret-ok-4", "ret-ok-6"}},
		{"after", grounding.TrajectoryFilter{Domain: "airline", After: "Air-OK-1"}, []string{"air-fail-3", "air-ok-2"}},
	}
	for _, tt := range tests {
		tt.f.RunID = run.ID
		if got := allTrajectories(t, db, tt.f); !slices.Equal(got, tt.want) {
			t.Errorf("%s: Trajectories(%+v) = %q, want %q", tt.name, tt.f, got, tt.want)
		}
	}
}

func testMessageWindows(t *testing.T, db *store.DB) {
	tr := RoundTrip("w")
	mustImport(t, db, "windows", "w.jsonl", tr)
	h, err := db.TrajectoryByExtID(ctx, mustRun(t, db, "windows").ID, "w")
	if err != nil {
		t.Fatal(err)
	}
	id := h.ID

	for _, tt := range []struct{ from, to int }{{2, 5}, {0, 10}, {0, 100}, {9, 10}, {5, 5}, {10, 20}} {
		got, err := db.Messages(ctx, id, tt.from, tt.to)
		checkMessages(t, fmt.Sprintf("Messages(%d, %d)", tt.from, tt.to), got, err, wantMessages(t, tr, span(tt.from, min(tt.to, 10))...))
	}

	// Visible before 8: 0 1 2 3 4 5 7 (6 is hidden).
	for _, tt := range []struct {
		before, limit int
		want          []int
		earlier       int
	}{
		{8, 3, []int{4, 5, 7}, 4},
		{8, 100, []int{0, 1, 2, 3, 4, 5, 7}, 0},
		{8, 7, []int{0, 1, 2, 3, 4, 5, 7}, 0},
		{8, 0, nil, 7},
		{0, 3, nil, 0},
		{7, 1, []int{5}, 5},
		{100, 2, []int{7, 8}, 6},
	} {
		got, earlier, err := db.VisibleBefore(ctx, id, tt.before, tt.limit)
		checkMessages(t, fmt.Sprintf("VisibleBefore(%d, %d)", tt.before, tt.limit), got, err, wantMessages(t, tr, tt.want...))
		if earlier != tt.earlier {
			t.Errorf("VisibleBefore(%d, %d) earlier = %d, want %d", tt.before, tt.limit, earlier, tt.earlier)
		}
	}

	for _, tt := range []struct {
		before int
		want   []int
	}{{6, nil}, {7, []int{6}}, {9, []int{6}}, {100, []int{6, 9}}} {
		got, err := db.HiddenBefore(ctx, id, tt.before)
		checkMessages(t, fmt.Sprintf("HiddenBefore(%d)", tt.before), got, err, wantMessages(t, tr, tt.want...))
	}

	// MessageWindow reads all of that in one statement: checked against the
	// definition for every first, reach, hi and hiddenTo over the fixture.
	hidden := func(i int) bool { return tr.Messages[i].Visibility == grounding.Hidden }
	for shown := 1; shown <= 4; shown += 3 {
		for first := 0; first < len(tr.Messages); first++ {
			for reach := -1; reach <= first; reach++ {
				for hi := first; hi <= len(tr.Messages); hi++ {
					hiddenTo := min(first+2, hi)
					var vis []int
					for i := 0; i < first; i++ {
						if !hidden(i) {
							vis = append(vis, i)
						}
					}
					lo := 0
					if len(vis) >= shown {
						lo = vis[len(vis)-shown]
					}
					if reach >= 0 && reach < lo {
						lo = reach
					}
					earlier := 0
					for i := 0; i < lo; i++ {
						if !hidden(i) {
							earlier++
						}
					}
					var hid []int
					for i := 0; i < hiddenTo && i < len(tr.Messages); i++ {
						if hidden(i) {
							hid = append(hid, i)
						}
					}
					for _, width := range []int{100, 4} {
						what := fmt.Sprintf("MessageWindow(shown %d, first %d, reach %d, hi %d, hiddenTo %d, span %d)", shown, first, reach, hi, hiddenTo, width)
						w, err := db.MessageWindow(ctx, id, shown, first, reach, hi, hiddenTo, width)
						var want []int // a range as wide as span is left out
						if hi-lo < width {
							want = span(lo, min(hi+1, len(tr.Messages)))
						}
						checkMessages(t, what+" range", w.Range, err, wantMessages(t, tr, want...))
						checkMessages(t, what+" hidden", w.Hidden, err, wantMessages(t, tr, hid...))
						if w.Lo != lo || w.Earlier != earlier {
							t.Errorf("%s: Lo %d, Earlier %d; want %d, %d", what, w.Lo, w.Earlier, lo, earlier)
						}
					}
				}
			}
		}
	}
}

// testMessageWindowCutsLongContent: a page's reads (the window, the
// messages before it, the hidden ones, MessagesHead) read the start of a
// very long content, say how long it is, and leave shorter ones whole;
// Messages (which recheck reads) stays whole.
func testMessageWindowCutsLongContent(t *testing.T, db *store.DB) {
	tr := Simple("long", "x", true, "t")
	long := strings.Repeat("é", store.WindowContentChars) + strings.Repeat("z", 1000) // 2 bytes a rune, then 1
	tr.Messages[0].Content = long
	hint := grounding.Message{Role: grounding.RoleSystem, Content: "hint " + long, Visibility: grounding.Hidden, HiddenKind: grounding.HiddenTeacherHint}
	tr.Messages = append(tr.Messages[:1], append([]grounding.Message{hint}, tr.Messages[1:]...)...)
	mustImport(t, db, "long", "long.jsonl", tr)
	h, err := db.TrajectoryByExtID(ctx, mustRun(t, db, "long").ID, "long")
	if err != nil {
		t.Fatal(err)
	}
	w, err := db.MessageWindow(ctx, h.ID, 10, len(tr.Messages)-1, 0, len(tr.Messages)-1, len(tr.Messages), 100)
	if err != nil || len(w.Range) < 2 {
		t.Fatalf("MessageWindow = %+v, %v", w, err)
	}
	if m := w.Range[0]; m.Content != long[:2*store.WindowContentChars] || m.ContentBytes != len(long) {
		t.Errorf("the long content: %d bytes read, ContentBytes %d; want the first %d characters and %d", len(m.Content), m.ContentBytes, store.WindowContentChars, len(long))
	}
	if m := w.Range[2]; m.ContentBytes != 0 {
		t.Errorf("a short content is marked cut: ContentBytes %d", m.ContentBytes)
	}
	ms, err := db.Messages(ctx, h.ID, 0, 1)
	if err != nil || len(ms) != 1 || ms[0].Content != long || ms[0].ContentBytes != 0 {
		t.Errorf("Messages no longer reads the whole content (%d bytes, %v)", len(ms[0].Content), err)
	}
	vis, _, err := db.VisibleBefore(ctx, h.ID, len(tr.Messages), 10)
	if err != nil || len(vis) != len(tr.Messages)-1 {
		t.Fatalf("VisibleBefore = %d messages, %v", len(vis), err)
	}
	if m := vis[0]; m.Content != long[:2*store.WindowContentChars] || m.ContentBytes != len(long) {
		t.Errorf("VisibleBefore: the long content: %d bytes read, ContentBytes %d", len(m.Content), m.ContentBytes)
	}
	if m := vis[1]; m.Content != "" || m.ContentBytes != 0 || len(m.ToolCalls) != 1 {
		t.Errorf("VisibleBefore: the call message changed: %+v", m)
	}
	hid, err := db.HiddenBefore(ctx, h.ID, len(tr.Messages))
	if err != nil || len(hid) != 1 || hid[0].Content != hint.Content[:5+2*(store.WindowContentChars-5)] || hid[0].ContentBytes != len(hint.Content) || !hid[0].IsHidden() {
		t.Errorf("HiddenBefore: the long hint: %d messages, %v", len(hid), err)
	}
	heads, err := db.MessagesHead(ctx, h.ID, 0, 3, 4)
	if err != nil || len(heads) != 3 {
		t.Fatalf("MessagesHead = %d messages, %v", len(heads), err)
	}
	if heads[0].Content != "éééé" || heads[0].ContentBytes != len(long) || heads[1].Content != "hint" || heads[1].ContentBytes != len(hint.Content) {
		t.Errorf("MessagesHead(4 characters) read %q (%d) and %q (%d)", heads[0].Content, heads[0].ContentBytes, heads[1].Content, heads[1].ContentBytes)
	}
	if heads[2].ContentBytes != 0 || heads[2].ToolCalls[0].Name != "t" {
		t.Errorf("MessagesHead: the call message changed: %+v", heads[2])
	}
}

func testDecisionWindows(t *testing.T, db *store.DB) {
	tr := TauLike("dw", 5)
	mustImport(t, db, "decisions", "dw.json", tr)
	h, err := db.TrajectoryByExtID(ctx, mustRun(t, db, "decisions").ID, tr.ID)
	if err != nil {
		t.Fatal(err)
	}
	all := WantStored(tr)
	if len(all) < 5 {
		t.Fatalf("fixture has %d decisions", len(all))
	}
	for _, tt := range []struct {
		from, limit int
		want        []grounding.StoredDecision
	}{
		{0, 100, all},
		{0, 0, all},
		{1, 2, all[1:3]},
		{len(all) - 1, 5, all[len(all)-1:]},
		{len(all), 5, nil},
	} {
		got, err := db.Decisions(ctx, h.ID, tt.from, tt.limit)
		if err != nil || len(got) != len(tt.want) || (len(got) > 0 && canonJSON(t, mustJSON(t, got)) != canonJSON(t, mustJSON(t, tt.want))) {
			t.Errorf("Decisions(%d, %d) = %+v, %v; want %+v", tt.from, tt.limit, got, err, tt.want)
		}
	}
	// DecisionsByVerdict keeps one verdict's decisions, from an ordinal on.
	kinds := 0
	for _, v := range []grounding.Verdict{grounding.VerdictPass, grounding.VerdictFail, grounding.VerdictAmbiguous} {
		var want []grounding.StoredDecision
		for _, d := range all {
			if d.Verdict == v {
				want = append(want, d)
			}
		}
		if len(want) > 0 {
			kinds++
		}
		for _, from := range []int{0, 2} {
			for _, limit := range []int{0, 1} {
				got, err := db.DecisionsByVerdict(ctx, h.ID, v, from, limit)
				var w []grounding.StoredDecision
				for _, d := range want {
					if d.Ordinal >= from && (limit == 0 || len(w) < limit) {
						w = append(w, d)
					}
				}
				if err != nil || len(got) != len(w) || (len(got) > 0 && canonJSON(t, mustJSON(t, got)) != canonJSON(t, mustJSON(t, w))) {
					t.Errorf("DecisionsByVerdict(%s, %d, %d) = %d decisions, %v; want %d", v, from, limit, len(got), err, len(w))
				}
			}
		}
	}
	if kinds < 2 {
		t.Errorf("fixture has decisions of %d verdicts; the verdict filter needs two", kinds)
	}
	// DecisionAt reads the header and one decision at once: the same as
	// Trajectory and Decisions(ordinal, 1).
	for _, d := range all {
		hd, got, err := db.DecisionAt(ctx, h.ID, d.Ordinal)
		if err != nil || canonJSON(t, mustJSON(t, got)) != canonJSON(t, mustJSON(t, d)) || canonJSON(t, mustJSON(t, hd)) != canonJSON(t, mustJSON(t, h)) {
			t.Errorf("DecisionAt(%d) = %+v, %+v, %v; want %+v, %+v", d.Ordinal, hd, got, err, h, d)
		}
	}
	_, _, err = db.DecisionAt(ctx, h.ID, len(all))
	wantErr(t, "DecisionAt(past the last decision)", err, grounding.ErrNotFound)
	_, _, err = db.DecisionAt(ctx, h.ID+1000, 0)
	wantErr(t, "DecisionAt(unknown trajectory)", err, grounding.ErrNotFound)
}

func testNotFound(t *testing.T, db *store.DB) {
	mustImport(t, db, "known", "k.jsonl", Simple("k", "x", true, "t"))
	run := mustRun(t, db, "known")
	_, err := db.User(ctx, 4242)
	wantErr(t, "User(unknown)", err, grounding.ErrNotFound)
	_, err = db.UserByName(ctx, "nobody")
	wantErr(t, "UserByName(unknown)", err, grounding.ErrNotFound)
	_, err = db.Run(ctx, run.ID+4242)
	wantErr(t, "Run(unknown)", err, grounding.ErrNotFound)
	_, err = db.RunByName(ctx, "unknown")
	wantErr(t, "RunByName(unknown)", err, grounding.ErrNotFound)
	_, err = db.Trajectory(ctx, 4242)
	wantErr(t, "Trajectory(unknown)", err, grounding.ErrNotFound)
	_, err = db.TrajectoryByExtID(ctx, run.ID, "unknown")
	wantErr(t, "TrajectoryByExtID(unknown)", err, grounding.ErrNotFound)
	_, err = db.TrajectoryByExtID(ctx, run.ID+4242, "k")
	wantErr(t, "TrajectoryByExtID(unknown run)", err, grounding.ErrNotFound)
	if ms, err := db.Messages(ctx, 4242, 0, 10); err != nil || len(ms) != 0 {
		t.Errorf("Messages(unknown) = %v, %v; want none", ms, err)
	}
	if ds, err := db.Decisions(ctx, 4242, 0, 10); err != nil || len(ds) != 0 {
		t.Errorf("Decisions(unknown) = %v, %v; want none", ds, err)
	}
}

// WantStored is what the store must return for tr's decisions right after
// import: each decision with the default check's automatic verdict as the
// effective one.
func WantStored(tr *grounding.Trajectory) []grounding.StoredDecision {
	res := grounding.CheckDefault(tr)
	var out []grounding.StoredDecision
	for i, d := range grounding.Decisions(tr) {
		c := res.Decisions[i]
		out = append(out, grounding.StoredDecision{Decision: d, Action: c.Action, E: c.E, V: c.V, G: c.G,
			FlowOK: c.Workflow, AutoVerdict: c.Verdict, Verdict: c.Verdict, Mask: c.Mask, Queued: c.Queued,
			Reasons: nonNil(c.Reasons), Args: nonNil(c.Args), Detail: c.Detail})
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// addCheckCounts adds a check's verdict counts to a summary.
func addCheckCounts(s *grounding.TrajectorySummary, res grounding.Result) {
	s.WorkflowOK = res.Workflow
	for _, d := range res.Decisions {
		switch d.Verdict {
		case grounding.VerdictPass:
			s.Pass++
		case grounding.VerdictFail:
			s.Fail++
		default:
			s.Ambiguous++
		}
		if d.Queued {
			s.Queued++
		}
		s.Supervised += d.Mask
	}
	s.Certified = res.R == 1 && res.Workflow && s.Supervised > 0
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testCheckFilters filters a run by effective verdict and by reason code and
// compares with what the default check says of each trajectory.
func testCheckFilters(t *testing.T, db *store.DB) {
	var ts []*grounding.Trajectory
	for i := range 12 {
		ts = append(ts, TauLike("cf", i))
	}
	ts = append(ts, RoundTrip("cf-rt"))
	mustImport(t, db, "checked", "cf.json", ts...)
	run := mustRun(t, db, "checked")
	has := map[string]map[string]bool{} // filter value -> ext ids
	mark := func(k, id string) {
		if has[k] == nil {
			has[k] = map[string]bool{}
		}
		has[k][id] = true
	}
	for _, tr := range ts {
		for _, d := range grounding.CheckDefault(tr).Decisions {
			mark("verdict:"+string(d.Verdict), tr.ID)
			for _, r := range d.Reasons {
				mark("reason:"+r, tr.ID)
			}
		}
	}
	if len(has) < 3 {
		t.Fatalf("fixture exercises too few verdicts and reasons: %v", has)
	}
	for k, want := range has {
		f := grounding.TrajectoryFilter{RunID: run.ID, Limit: 500}
		kind, v, _ := strings.Cut(k, ":")
		if kind == "verdict" {
			f.Verdict = v
		} else {
			f.Reason = v
		}
		page, err := db.Trajectories(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, r := range page.Rows {
			got[r.ExtID] = true
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("filter %s = %v, want %v", k, got, want)
		}
	}

	// Tool, verdict and reason together hold of one decision, and each
	// row names the first decision that meets them. The fixture must have
	// a combination that only different decisions of a trajectory meet,
	// or this part could not fail.
	type combo struct{ tool, verdict, reason string }
	same := map[combo]map[string]int{} // met by one decision: ext id → its first ordinal
	apart := map[combo][]string{}      // met by the trajectory's decisions taken together
	for _, tr := range ts {
		ds := grounding.Decisions(tr)
		res := grounding.CheckDefault(tr)
		var tools, verdicts []string
		for i, d := range res.Decisions {
			tools = append(tools, ds[i].Tool)
			verdicts = append(verdicts, string(d.Verdict))
			for _, r := range append([]string{""}, d.Reasons...) {
				for _, c := range []combo{{ds[i].Tool, string(d.Verdict), ""}, {ds[i].Tool, string(d.Verdict), r}, {"", string(d.Verdict), r}, {ds[i].Tool, "", r}} {
					if n := btoi(c.tool != "") + btoi(c.verdict != "") + btoi(c.reason != ""); n < 2 {
						continue // one condition alone is tested above
					}
					if same[c] == nil {
						same[c] = map[string]int{}
					}
					if _, ok := same[c][tr.ID]; !ok {
						same[c][tr.ID] = ds[i].Ordinal
					}
				}
			}
		}
		for _, tool := range tools {
			for _, v := range verdicts {
				if tool != "" {
					apart[combo{tool, v, ""}] = append(apart[combo{tool, v, ""}], tr.ID)
				}
			}
		}
	}
	differs := 0
	for c, ids := range apart {
		for _, id := range ids {
			if _, ok := same[c][id]; !ok {
				differs++
				if same[c] == nil {
					same[c] = map[string]int{} // no decision meets it: an empty page
				}
			}
		}
	}
	if differs == 0 {
		t.Fatal("fixture has no trajectory whose tool and verdict filters are met only by different decisions")
	}
	for c, want := range same {
		page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Tool: c.tool, Verdict: c.verdict, Reason: c.reason, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, r := range page.Rows {
			got[r.ExtID] = -1
			if r.Match != nil {
				got[r.ExtID] = *r.Match
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("filter tool=%q verdict=%q reason=%q = %v, want %v (ext id: first decision meeting all)", c.tool, c.verdict, c.reason, got, want)
		}
		// Keyset pages of two rows give the same rows in the same order,
		// each page's cursor its last row.
		var paged []grounding.TrajectorySummary
		for after := ""; ; {
			p, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Tool: c.tool, Verdict: c.verdict, Reason: c.reason, After: after, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			paged = append(paged, p.Rows...)
			if p.Next == "" {
				break
			}
			if p.Next != p.Rows[len(p.Rows)-1].ExtID || len(paged) > len(page.Rows) {
				t.Fatalf("filter tool=%q verdict=%q reason=%q: page after %q has cursor %q", c.tool, c.verdict, c.reason, after, p.Next)
			}
			after = p.Next
		}
		if len(paged) != len(page.Rows) || len(paged) > 0 && !reflect.DeepEqual(paged, page.Rows) {
			t.Errorf("filter tool=%q verdict=%q reason=%q: pages of two differ from one page:\n%+v\n%+v", c.tool, c.verdict, c.reason, paged, page.Rows)
		}
	}
	// A single condition also names the first decision meeting it.
	for _, v := range []grounding.Verdict{grounding.VerdictPass, grounding.VerdictFail, grounding.VerdictAmbiguous} {
		page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Verdict: string(v), Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Rows {
			tr := ts[slices.IndexFunc(ts, func(tr *grounding.Trajectory) bool { return tr.ID == r.ExtID })]
			first := slices.IndexFunc(grounding.CheckDefault(tr).Decisions, func(d grounding.DecisionResult) bool { return d.Verdict == v })
			if r.Match == nil || *r.Match != first {
				t.Errorf("%s filter: %s names decision %v, want %d", v, r.ExtID, r.Match, first)
			}
		}
	}
	if page, _ := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Limit: 500}); page.Rows[0].Match != nil {
		t.Errorf("an unfiltered list names a decision: %v", *page.Rows[0].Match)
	}
}

// testRecheck rebuilds stored trajectories, re-runs a changed check on them
// and expects verdicts, counts and run counters to follow; rechecking with
// the default check restores the import-time state exactly.
func testRecheck(t *testing.T, db *store.DB) {
	var ts []*grounding.Trajectory
	for i := range 5 {
		ts = append(ts, TauLike("rc", i))
	}
	ts = append(ts, RoundTrip("rc-rt"))
	mustImport(t, db, "rechecked", "rc.json", ts...)
	run := mustRun(t, db, "rechecked")
	before := run

	for _, tr := range ts {
		h, err := db.TrajectoryByExtID(ctx, run.ID, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		loaded, err := db.LoadTrajectory(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := mustJSON(t, grounding.CheckDefault(loaded).Decisions), mustJSON(t, grounding.CheckDefault(tr).Decisions); canonJSON(t, got) != canonJSON(t, want) {
			t.Errorf("%s: the check of the reloaded trajectory differs from the check at import:\n%s\nwant\n%s", tr.ID, got, want)
		}
	}

	// A stricter engine: every decision fails.
	strict := func(tr *grounding.Trajectory) grounding.Result {
		r := grounding.CheckDefault(tr)
		r.EngineVersion = "strict-1"
		for i := range r.Decisions {
			d := &r.Decisions[i]
			d.Verdict, d.G, d.Mask, d.Queued = grounding.VerdictFail, 0, 0, false
			d.Reasons = append(d.Reasons, grounding.ReasonUnsupported)
		}
		return r
	}
	var calls int
	res, err := db.Recheck(ctx, run.ID, strict, func(store.RecheckResult) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if res.Trajectories != len(ts) || res.Decisions != before.Decisions || calls == 0 {
		t.Errorf("Recheck = %+v after %d progress calls; want %d trajectories, %d decisions", res, calls, len(ts), before.Decisions)
	}
	if res.Changed != before.Pass+before.Ambiguous {
		t.Errorf("Recheck changed %d verdicts, want %d (every pass and ambiguous one)", res.Changed, before.Pass+before.Ambiguous)
	}
	after := mustRun(t, db, "rechecked")
	if after.Fail != before.Decisions || after.Pass != 0 || after.Supervised != 0 || after.Certified != 0 || after.Queued != 0 {
		t.Errorf("run after strict recheck = %+v", after)
	}
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Reason: grounding.ReasonUnsupported, Limit: 100})
	if err != nil || len(page.Rows) != len(ts) {
		t.Errorf("reason filter after recheck = %d rows, %v; want all %d", len(page.Rows), err, len(ts))
	}
	h, _ := db.TrajectoryByExtID(ctx, run.ID, ts[0].ID)
	if h.EngineVersion != "strict-1" || h.Pass != 0 || h.Fail != h.Decisions {
		t.Errorf("trajectory after strict recheck = %+v", h)
	}

	if _, err := db.Recheck(ctx, run.ID, grounding.CheckDefault, nil); err != nil {
		t.Fatal(err)
	}
	if again := mustRun(t, db, "rechecked"); !reflect.DeepEqual(again, before) {
		t.Errorf("run after default recheck = %+v, want the import-time %+v", again, before)
	}
	for _, tr := range ts {
		h, _ := db.TrajectoryByExtID(ctx, run.ID, tr.ID)
		got, err := db.Decisions(ctx, h.ID, 0, 0)
		if err != nil || canonJSON(t, mustJSON(t, got)) != canonJSON(t, mustJSON(t, WantStored(tr))) {
			t.Errorf("%s: decisions after default recheck differ from import", tr.ID)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// NaturalCompare orders ids as the run page lists them: runs of digits by
// their value (task2 before task10), other text by bytes, and ids equal
// but for leading zeros (task7, task007) by bytes. Runs of digits are kept
// under 20 digits by the tests that use it.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			x, y := strings.TrimLeft(a[i:ei], "0"), strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Compare(len(x), len(y)); c != 0 {
				return c
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		// a digit where the other has none compares as "0", its padding
		ca, cb := a[i], b[j]
		if isDigit(ca) {
			ca = '0'
		}
		if isDigit(cb) {
			cb = '0'
		}
		if c := cmp.Compare(ca, cb); c != 0 {
			return c
		}
		i, j = i+1, j+1
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
