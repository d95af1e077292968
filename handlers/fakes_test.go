package handlers

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
)

// fakeStore implements every narrow storage interface of this package with
// func fields (wtf's mock style); a nil field fails the test when called.
type fakeStore struct {
	t               *testing.T
	RunsFn          func() ([]grounding.Run, error)
	RunFn           func(id int64) (grounding.Run, error)
	RunFacetsFn     func(runID int64) ([]string, []string, error)
	TrajectoriesFn  func(f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error)
	TrajectoryFn    func(id int64) (grounding.TrajectoryHeader, error)
	MessagesFn      func(id int64, from, to int) ([]grounding.Message, error)
	VisibleBeforeFn func(id int64, before, limit int) ([]grounding.Message, int, error)
	HiddenBeforeFn  func(id int64, before int) ([]grounding.Message, error)
	WindowFn        func(id int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error)
	DecisionsFn     func(id int64, from, limit int) ([]grounding.StoredDecision, error)
	UserByNameFn    func(name string) (grounding.User, error)
	PingFn          func() error
	ImportFileFn    func(runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error)
}

func (f *fakeStore) missing(name string) {
	f.t.Helper()
	f.t.Fatalf("unexpected call to %s", name)
}

func (f *fakeStore) Runs(context.Context) ([]grounding.Run, error) {
	if f.RunsFn == nil {
		f.missing("Runs")
	}
	return f.RunsFn()
}
func (f *fakeStore) Run(_ context.Context, id int64) (grounding.Run, error) {
	if f.RunFn == nil {
		f.missing("Run")
	}
	return f.RunFn(id)
}
func (f *fakeStore) RunFacets(_ context.Context, id int64) ([]string, []string, error) {
	if f.RunFacetsFn == nil {
		f.missing("RunFacets")
	}
	return f.RunFacetsFn(id)
}
func (f *fakeStore) Trajectories(_ context.Context, flt grounding.TrajectoryFilter) (grounding.TrajectoryPage, error) {
	if f.TrajectoriesFn == nil {
		f.missing("Trajectories")
	}
	return f.TrajectoriesFn(flt)
}
func (f *fakeStore) Trajectory(_ context.Context, id int64) (grounding.TrajectoryHeader, error) {
	if f.TrajectoryFn == nil {
		f.missing("Trajectory")
	}
	return f.TrajectoryFn(id)
}
func (f *fakeStore) Messages(_ context.Context, id int64, from, to int) ([]grounding.Message, error) {
	if f.MessagesFn == nil {
		f.missing("Messages")
	}
	return f.MessagesFn(id, from, to)
}

// MessagesHead is Messages with each content cut as the store cuts it.
func (f *fakeStore) MessagesHead(_ context.Context, id int64, from, to, chars int) ([]grounding.Message, error) {
	if f.MessagesFn == nil {
		f.missing("Messages")
	}
	ms, err := f.MessagesFn(id, from, to)
	out := make([]grounding.Message, len(ms))
	for i, m := range ms {
		if n := utf8.RuneCountInString(m.Content); n > chars {
			m.ContentBytes = max(m.ContentBytes, len(m.Content))
			m.Content = string([]rune(m.Content)[:chars])
		}
		out[i] = m
	}
	return out, err
}

func (f *fakeStore) VisibleBefore(_ context.Context, id int64, before, limit int) ([]grounding.Message, int, error) {
	if f.VisibleBeforeFn == nil {
		f.missing("VisibleBefore")
	}
	return f.VisibleBeforeFn(id, before, limit)
}
func (f *fakeStore) HiddenBefore(_ context.Context, id int64, before int) ([]grounding.Message, error) {
	if f.HiddenBeforeFn == nil {
		f.missing("HiddenBefore")
	}
	return f.HiddenBeforeFn(id, before)
}
func (f *fakeStore) MessageWindow(_ context.Context, id int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error) {
	if f.WindowFn == nil {
		f.missing("MessageWindow")
	}
	return f.WindowFn(id, shown, first, reach, hi, hiddenTo, span)
}

// DecisionsByVerdict is the store's definition over DecisionsFn.
func (f *fakeStore) DecisionsByVerdict(ctx context.Context, id int64, verdict grounding.Verdict, from, limit int) ([]grounding.StoredDecision, error) {
	if verdict == "" {
		return f.Decisions(ctx, id, from, limit)
	}
	all, err := f.Decisions(ctx, id, from, 1<<30)
	var out []grounding.StoredDecision
	for _, d := range all {
		if d.Verdict == verdict && (limit <= 0 || len(out) < limit) {
			out = append(out, d)
		}
	}
	return out, err
}
func (f *fakeStore) Decisions(_ context.Context, id int64, from, limit int) ([]grounding.StoredDecision, error) {
	if f.DecisionsFn == nil {
		f.missing("Decisions")
	}
	return f.DecisionsFn(id, from, limit)
}
func (f *fakeStore) UserByName(_ context.Context, name string) (grounding.User, error) {
	if f.UserByNameFn == nil {
		f.missing("UserByName")
	}
	return f.UserByNameFn(name)
}
func (f *fakeStore) Ping(context.Context) error {
	if f.PingFn == nil {
		f.missing("Ping")
	}
	return f.PingFn()
}
func (f *fakeStore) ImportFile(_ context.Context, runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error) {
	if f.ImportFileFn == nil {
		f.missing("ImportFile")
	}
	return f.ImportFileFn(runName, path, displayName, format)
}

// fakeSessions records what login and logout did to the session.
type fakeSessions struct {
	renewed   bool
	destroyed bool
	values    map[string]any
	renewErr  error
}

func (s *fakeSessions) RenewToken(context.Context) error { s.renewed = true; return s.renewErr }
func (s *fakeSessions) Put(_ context.Context, k string, v any) {
	if s.values == nil {
		s.values = map[string]any{}
	}
	s.values[k] = v
}
func (s *fakeSessions) Destroy(context.Context) error { s.destroyed = true; return nil }

var errBoom = errors.New("boom: secret database detail")

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testRouter mounts the handlers the way web/routes.go does (without the
// login middleware: a user is put in the context directly).
func testRouter(st *fakeStore, sess *fakeSessions, user *grounding.User, uploadDir string, maxUpload int64) http.Handler {
	log := quietLog()
	runs := NewRuns(log, st)
	tr := NewTrajectories(log, st)
	auth := NewAuth(log, st, sess)
	imp := NewImports(log, st, maxUpload, uploadDir)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user != nil {
				r = r.WithContext(WithUser(r.Context(), *user))
			}
			next.ServeHTTP(w, r)
		})
	})
	r.Get("/healthz", NewHealth(log, st).Show)
	r.Get("/login", auth.LoginForm)
	r.Post("/login", auth.Login)
	r.Post("/logout", auth.Logout)
	r.Get("/runs", runs.List)
	r.Get("/runs/{runID}", runs.Show)
	r.Get("/runs/{runID}/trajectories", runs.Rows)
	r.Get("/trajectories/{trajectoryID}", tr.Show)
	r.Get("/trajectories/{trajectoryID}/decisions", tr.Decisions)
	r.Get("/trajectories/{trajectoryID}/messages", tr.Messages)
	r.Get("/trajectories/{trajectoryID}/messages/{index}", tr.Message)
	r.Get("/trajectories/{trajectoryID}/messages/{index}/raw", tr.MessageRaw)
	r.Get("/trajectories/{trajectoryID}/hidden/{entry}", tr.Hidden)
	r.Get("/trajectories/{trajectoryID}/hidden/{entry}/raw", tr.HiddenRaw)
	r.Get("/import", imp.Form)
	r.Post("/import", imp.Create)
	return r
}

var researcher = &grounding.User{ID: 1, Name: "rita", Role: grounding.RoleResearcher}

// modes runs each request twice: as a plain browser request and as an htmx
// (non-boosted) request.
var modes = []struct {
	name string
	htmx bool
}{{"plain", false}, {"htmx", true}}

func do(t *testing.T, h http.Handler, req *http.Request, htmx bool) (*httptest.ResponseRecorder, *goquery.Document) {
	t.Helper()
	if htmx {
		req.Header.Set(HXRequest, "true")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("parse body: %v", err)
	}
	return rec, doc
}

func hasHTML(rec *httptest.ResponseRecorder) bool {
	return strings.Contains(rec.Body.String(), "<html")
}
