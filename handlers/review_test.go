package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"
	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
)

// fakeAdjudication adds the adjudication calls to fakeStore, func-field
// style; a nil field fails the test when called.
type fakeAdjudication struct {
	*fakeStore
	NextFn         func(userID int64, f grounding.QueueFilter) (grounding.Claim, error)
	RenewFn        func(userID, itemID int64) (time.Time, error)
	SubmitFn       func(userID, itemID int64, v grounding.Verdict, note string) (grounding.SubmitResult, error)
	SkipFn         func(userID, itemID int64) error
	UndoFn         func(userID, eventID int64) (grounding.VerdictEvent, error)
	LastUndoableFn func(userID int64) (grounding.VerdictEvent, error)
	AddNoteFn      func(userID, itemID int64, note string) (grounding.VerdictEvent, bool, error)
	DecisionNoteFn func(userID, tid int64, ord int, note string) (grounding.VerdictEvent, bool, error)
	ProgressFn     func(userID int64, f grounding.QueueFilter) (grounding.Progress, error)
	HistoryFn      func(tid int64, ord int) (grounding.DecisionHistory, error)
	QueueFn        func(f grounding.QueueFilter) (grounding.QueuePage, error)
	ConflictsFn    func(f grounding.QueueFilter) ([]grounding.ConflictItem, error)
	FinalizeFn     func(leadID, itemID int64, v grounding.Verdict, reason string) (grounding.SubmitResult, error)
	EnqueueFn      func(leadID, tid int64, ord int, note string) (grounding.QueueItem, bool, error)
	SetOverlapFn   func(runID int64, k int) error
	OverlapFn      func(runID int64) (int, error)
	AgreementFn    func(runID int64) (grounding.AgreementReport, map[int64]string, error)
	WorkFn         func(runID int64) ([]grounding.AnnotatorWork, error)
	UsersFn        func() ([]grounding.User, error)
	PrioritizeFn   func(runID int64, depth int) (int, error)
	CreateUserFn   func(name, role string, hash []byte) (grounding.User, error)
	// accounts: a log of the changes asked for ("disable 2", "password 2")
	accountLog []string
}

func (f *fakeAdjudication) Next(_ context.Context, userID int64, q grounding.QueueFilter, _ time.Duration) (grounding.Claim, error) {
	if f.NextFn == nil {
		f.missing("Next")
	}
	return f.NextFn(userID, q)
}
func (f *fakeAdjudication) Renew(_ context.Context, userID, itemID int64, _ time.Duration) (time.Time, error) {
	if f.RenewFn == nil {
		f.missing("Renew")
	}
	return f.RenewFn(userID, itemID)
}
func (f *fakeAdjudication) SubmitNext(_ context.Context, userID, itemID int64, v grounding.Verdict, note string, q grounding.QueueFilter, _ time.Duration) (grounding.SubmitResult, grounding.Claim, bool, error) {
	if f.SubmitFn == nil {
		f.missing("SubmitNext")
	}
	res, err := f.SubmitFn(userID, itemID, v, note)
	if err != nil {
		return res, grounding.Claim{}, false, err
	}
	c, err := f.NextFn(userID, q)
	if errors.Is(err, grounding.ErrNotFound) {
		return res, grounding.Claim{}, false, nil
	}
	return res, c, err == nil, err
}
func (f *fakeAdjudication) Skip(_ context.Context, userID, itemID int64) error {
	if f.SkipFn == nil {
		f.missing("Skip")
	}
	return f.SkipFn(userID, itemID)
}
func (f *fakeAdjudication) Undo(_ context.Context, userID, eventID int64, _ time.Duration) (grounding.VerdictEvent, error) {
	if f.UndoFn == nil {
		f.missing("Undo")
	}
	return f.UndoFn(userID, eventID)
}

// Standing is the store's definition over ProgressFn and LastUndoableFn.
func (f *fakeAdjudication) Standing(_ context.Context, userID int64, q grounding.QueueFilter) (grounding.Progress, *grounding.VerdictEvent, error) {
	if f.ProgressFn == nil || f.LastUndoableFn == nil {
		f.missing("Standing")
	}
	p, err := f.ProgressFn(userID, q)
	if err != nil {
		return p, nil, err
	}
	last, err := f.LastUndoableFn(userID)
	if errors.Is(err, grounding.ErrNotFound) {
		return p, nil, nil
	}
	return p, &last, err
}
func (f *fakeAdjudication) AddNote(_ context.Context, userID, itemID int64, note string) (grounding.VerdictEvent, bool, error) {
	if f.AddNoteFn == nil {
		f.missing("AddNote")
	}
	return f.AddNoteFn(userID, itemID, note)
}
func (f *fakeAdjudication) Progress(_ context.Context, userID int64, q grounding.QueueFilter) (grounding.Progress, error) {
	if f.ProgressFn == nil {
		f.missing("Progress")
	}
	return f.ProgressFn(userID, q)
}
func (f *fakeAdjudication) History(_ context.Context, tid int64, ord int) (grounding.DecisionHistory, error) {
	if f.HistoryFn == nil {
		f.missing("History")
	}
	return f.HistoryFn(tid, ord)
}

// DecisionAt is the store's definition over TrajectoryFn and DecisionsFn.
func (f *fakeAdjudication) DecisionAt(ctx context.Context, tid int64, ord int) (grounding.TrajectoryHeader, grounding.StoredDecision, error) {
	hd, err := f.Trajectory(ctx, tid)
	if err != nil {
		return hd, grounding.StoredDecision{}, err
	}
	ds, err := f.Decisions(ctx, tid, ord, 1)
	if err != nil {
		return hd, grounding.StoredDecision{}, err
	}
	if len(ds) == 0 || ds[0].Ordinal != ord {
		return hd, grounding.StoredDecision{}, grounding.ErrNotFound
	}
	return hd, ds[0], nil
}

// NotesBy is the store's definition over HistoryFn: the user's notes.
func (f *fakeAdjudication) NotesBy(_ context.Context, userID, tid int64, ord int) ([]grounding.VerdictEvent, error) {
	if f.HistoryFn == nil {
		f.missing("NotesBy")
	}
	h, err := f.HistoryFn(tid, ord)
	var out []grounding.VerdictEvent
	for _, e := range h.Events {
		if e.Note != "" && e.UserID == userID {
			out = append(out, e)
		}
	}
	return out, err
}
func (f *fakeAdjudication) Queue(_ context.Context, q grounding.QueueFilter) (grounding.QueuePage, error) {
	if f.QueueFn == nil {
		f.missing("Queue")
	}
	return f.QueueFn(q)
}
func (f *fakeAdjudication) Conflicts(_ context.Context, q grounding.QueueFilter) ([]grounding.ConflictItem, error) {
	if f.ConflictsFn == nil {
		f.missing("Conflicts")
	}
	return f.ConflictsFn(q)
}
func (f *fakeAdjudication) Finalize(_ context.Context, leadID, itemID int64, v grounding.Verdict, reason string) (grounding.SubmitResult, error) {
	if f.FinalizeFn == nil {
		f.missing("Finalize")
	}
	return f.FinalizeFn(leadID, itemID, v, reason)
}
func (f *fakeAdjudication) Enqueue(_ context.Context, leadID, tid int64, ord int, note string) (grounding.QueueItem, bool, error) {
	if f.EnqueueFn == nil {
		f.missing("Enqueue")
	}
	return f.EnqueueFn(leadID, tid, ord, note)
}
func (f *fakeAdjudication) SetOverlap(_ context.Context, runID int64, k int) error {
	if f.SetOverlapFn == nil {
		f.missing("SetOverlap")
	}
	return f.SetOverlapFn(runID, k)
}
func (f *fakeAdjudication) Overlap(_ context.Context, runID int64) (int, error) {
	if f.OverlapFn == nil {
		f.missing("Overlap")
	}
	return f.OverlapFn(runID)
}
func (f *fakeAdjudication) AnnotatorWork(_ context.Context, runID int64) ([]grounding.AnnotatorWork, error) {
	if f.WorkFn == nil {
		f.missing("AnnotatorWork")
	}
	return f.WorkFn(runID)
}

func (f *fakeAdjudication) Agreement(_ context.Context, runID int64) (grounding.AgreementReport, map[int64]string, error) {
	if f.AgreementFn == nil {
		f.missing("Agreement")
	}
	return f.AgreementFn(runID)
}
func (f *fakeAdjudication) CoverageScales(context.Context) ([]grounding.Scale, error) {
	return grounding.DefaultScales(), nil
}
func (f *fakeAdjudication) PrioritizeByDeficit(_ context.Context, runID int64, depth int) (int, error) {
	if f.PrioritizeFn == nil {
		f.missing("PrioritizeByDeficit")
	}
	return f.PrioritizeFn(runID, depth)
}
func (f *fakeAdjudication) Users(context.Context) ([]grounding.User, error) {
	if f.UsersFn == nil {
		f.missing("Users")
	}
	return f.UsersFn()
}
func (f *fakeAdjudication) CreateUser(_ context.Context, name, role string, hash []byte) (grounding.User, error) {
	if f.CreateUserFn == nil {
		f.missing("CreateUser")
	}
	return f.CreateUserFn(name, role, hash)
}
func (f *fakeAdjudication) User(_ context.Context, id int64) (grounding.User, error) {
	users, _ := f.UsersFn()
	for _, u := range users {
		if u.ID == id {
			return u, nil
		}
	}
	return grounding.User{}, fmt.Errorf("user %d: %w", id, grounding.ErrNotFound)
}
func (f *fakeAdjudication) SetPassword(_ context.Context, id int64, hash []byte) error {
	if bcrypt.CompareHashAndPassword(hash, []byte("x")) == nil || len(hash) == 0 {
		return errors.New("not a bcrypt hash of a fresh password")
	}
	f.accountLog = append(f.accountLog, "password "+strconv.FormatInt(id, 10))
	return nil
}
func (f *fakeAdjudication) SetDisabled(_ context.Context, id int64, disabled bool) error {
	if id == admin.ID && disabled {
		return fmt.Errorf("last admin: %w", grounding.ErrInvalid)
	}
	f.accountLog = append(f.accountLog, map[bool]string{true: "disable ", false: "enable "}[disabled]+strconv.FormatInt(id, 10))
	return nil
}

var (
	annotator = &grounding.User{ID: 2, Name: "ann", Role: grounding.RoleAnnotator}
	admin     = &grounding.User{ID: 3, Name: "ada", Role: grounding.RoleAdmin}
)

// reviewItem is queue item 7: decision 1 of trajectory 5 (the sample's
// tool call), queued because its reservation id is in question.
func reviewItem() grounding.QueueItem {
	return grounding.QueueItem{ID: 7, RunID: 1, TrajectoryID: 5, Ordinal: 0, RunName: "demo", ExtID: "t-1", Domain: "airline",
		Tool: "get_reservation_details", Source: grounding.SourceAuto, Why: []string{grounding.ReasonChoice}, Priority: 2, Required: 1,
		State: grounding.QueueOpen, Args: []grounding.ArgEvidence{{Path: "reservation_id", Value: json.RawMessage(`"NO6JO3"`), Status: grounding.StatusChoice,
			Where: grounding.Evidence{Found: "visible", Message: 1, Note: "one of 2 visible reservations"}}}}
}

// adjudicationStore serves the sample trajectory and a queue with item 7.
func adjudicationStore(t *testing.T) *fakeAdjudication {
	st := runStore(t)
	// The stored check marks the tool call's argument as the one in question.
	inner := st.DecisionsFn
	st.DecisionsFn = func(id int64, from, limit int) ([]grounding.StoredDecision, error) {
		ds, err := inner(id, from, limit)
		if len(ds) > 0 && ds[0].Ordinal == 0 {
			ds[0].Args = reviewItem().Args
		}
		return ds, err
	}
	traj := st.TrajectoryFn
	st.TrajectoryFn = func(id int64) (grounding.TrajectoryHeader, error) {
		h, err := traj(id)
		h.EngineVersion, h.Profile = grounding.EngineVersion, "generic@1"
		return h, err
	}
	f := &fakeAdjudication{fakeStore: st}
	f.NextFn = func(userID int64, q grounding.QueueFilter) (grounding.Claim, error) {
		return grounding.Claim{Item: reviewItem(), UserID: userID}, nil
	}
	f.ProgressFn = func(int64, grounding.QueueFilter) (grounding.Progress, error) {
		return grounding.Progress{MineToday: 3, Remaining: 14, Yours: 12, Items: 20, Done: 5, Conflicts: 1}, nil
	}
	f.LastUndoableFn = func(int64) (grounding.VerdictEvent, error) {
		return grounding.VerdictEvent{ID: 41, Kind: grounding.EventVerdict, Verdict: grounding.VerdictPass, Ordinal: 2, ExtID: "airline-task-7"}, nil
	}
	f.HistoryFn = func(tid int64, ord int) (grounding.DecisionHistory, error) {
		it := reviewItem()
		return grounding.DecisionHistory{Item: &it, Events: []grounding.VerdictEvent{
			{ID: 40, UserID: 2, UserName: "ann", Kind: grounding.EventNote, Note: "two reservations visible", CreatedAt: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)},
			{ID: 42, UserID: 9, UserName: "bob", Kind: grounding.EventVerdict, Verdict: grounding.VerdictFail},
		}}, nil
	}
	f.SubmitFn = func(userID, itemID int64, v grounding.Verdict, note string) (grounding.SubmitResult, error) {
		return grounding.SubmitResult{Event: grounding.VerdictEvent{ID: 43, Verdict: v}, State: grounding.QueueDone, Human: v}, nil
	}
	f.SkipFn = func(int64, int64) error { return nil }
	f.AddNoteFn = func(userID, itemID int64, note string) (grounding.VerdictEvent, bool, error) {
		if strings.TrimSpace(note) == "" {
			return grounding.VerdictEvent{}, false, fmt.Errorf("blank: %w", grounding.ErrInvalid)
		}
		return grounding.VerdictEvent{ID: 44, Kind: grounding.EventNote, Note: note}, false, nil
	}
	f.UndoFn = func(userID, eventID int64) (grounding.VerdictEvent, error) {
		if eventID != 41 {
			return grounding.VerdictEvent{}, fmt.Errorf("store: undo: %w", grounding.ErrNothingToUndo)
		}
		return grounding.VerdictEvent{ID: 45, Kind: grounding.EventUndo, Undoes: 41, PrevVerdict: grounding.VerdictPass}, nil
	}
	f.RenewFn = func(userID, itemID int64) (time.Time, error) { return time.Now().Add(time.Minute), nil }
	f.QueueFn = func(q grounding.QueueFilter) (grounding.QueuePage, error) {
		return grounding.QueuePage{Items: []grounding.QueueItem{reviewItem()}, Next: "2.1.7"}, nil
	}
	f.OverlapFn = func(int64) (int, error) { return 2, nil }
	f.SetOverlapFn = func(int64, int) error { return nil }
	f.ConflictsFn = func(grounding.QueueFilter) ([]grounding.ConflictItem, error) {
		it := reviewItem()
		it.State = grounding.QueueConflict
		return []grounding.ConflictItem{{Item: it, Verdicts: []grounding.VerdictEvent{
			{UserName: "ann", Kind: grounding.EventVerdict, Verdict: grounding.VerdictPass, Note: "the user named it"},
			{UserName: "bob", Kind: grounding.EventVerdict, Verdict: grounding.VerdictFail},
		}, Notes: []grounding.VerdictEvent{{UserName: "bob", Kind: grounding.EventNote, Note: "two reservations"}}}}, nil
	}
	f.FinalizeFn = func(leadID, itemID int64, v grounding.Verdict, reason string) (grounding.SubmitResult, error) {
		if strings.TrimSpace(reason) == "" {
			return grounding.SubmitResult{}, fmt.Errorf("no reason: %w", grounding.ErrInvalid)
		}
		return grounding.SubmitResult{State: grounding.QueueDone, Human: v}, nil
	}
	f.EnqueueFn = func(leadID, tid int64, ord int, note string) (grounding.QueueItem, bool, error) {
		it := reviewItem()
		it.Source = grounding.SourceManual
		return it, true, nil
	}
	f.AgreementFn = func(int64) (grounding.AgreementReport, map[int64]string, error) {
		return grounding.Agreement([]grounding.Rating{{Item: 1, Rater: 2, Label: "pass"}, {Item: 1, Rater: 9, Label: "pass"},
				{Item: 2, Rater: 2, Label: "pass"}, {Item: 2, Rater: 9, Label: "fail"}}),
			map[int64]string{2: "ann", 9: "bob"}, nil
	}
	f.WorkFn = func(int64) ([]grounding.AnnotatorWork, error) {
		return []grounding.AnnotatorWork{{UserID: 2, Name: "ann", Role: grounding.RoleAnnotator, Verdicts: 7, Passed: 5, Today: 2, Week: 7, Skips: 1, Holding: 1,
			Last: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)},
			{UserID: 3, Name: "lea", Role: grounding.RoleResearcher, Disabled: true, Verdicts: 1, Finals: 1}}, nil
	}
	f.UsersFn = func() ([]grounding.User, error) { return []grounding.User{*admin, *annotator}, nil }
	f.PrioritizeFn = func(runID int64, depth int) (int, error) {
		if runID != 1 || depth != 3 {
			return 0, fmt.Errorf("run %d depth %d: %w", runID, depth, grounding.ErrInvalid)
		}
		return 12, nil
	}
	f.CreateUserFn = func(name, role string, hash []byte) (grounding.User, error) {
		if name == "ann" {
			return grounding.User{}, fmt.Errorf("taken: %w", grounding.ErrConflict)
		}
		return grounding.User{ID: 10, Name: name, Role: role}, nil
	}
	return f
}

// adjudicationRouter mounts the adjudication handlers as web/routes.go does
// (roles are web's middleware; they are tested there).
func adjudicationRouter(st *fakeAdjudication, user *grounding.User) http.Handler {
	log := quietLog()
	rv := NewReview(log, st, 0)
	q := NewQueue(log, st)
	us := NewUsers(log, st)
	us.cost = 4 // bcrypt.MinCost: tests need no slow hash
	tr := NewTrajectories(log, st)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user != nil {
				r = r.WithContext(WithUser(r.Context(), *user))
			}
			next.ServeHTTP(w, r)
		})
	})
	r.Get("/review", rv.Show)
	r.Post("/review/undo", rv.Undo)
	r.Post("/review/{itemID}/verdict", rv.Verdict)
	r.Post("/review/{itemID}/skip", rv.Skip)
	r.Post("/review/{itemID}/note", rv.Note)
	r.Post("/review/{itemID}/renew", rv.Renew)
	r.Get("/queue", q.List)
	r.Get("/queue/conflicts", q.Conflicts)
	r.Post("/queue/{itemID}/final", q.Final)
	r.Post("/queue/prioritize", q.Prioritize)
	r.Get("/trajectories/{trajectoryID}", tr.Show)
	r.Get("/trajectories/{trajectoryID}/decisions/{ordinal}/history", q.History)
	r.Post("/trajectories/{trajectoryID}/decisions/{ordinal}/enqueue", q.Enqueue)
	r.Post("/runs/{runID}/overlap", q.Overlap)
	r.Get("/agreement", q.Agreement)
	r.Get("/admin/users", us.List)
	r.Post("/admin/users", us.Create)
	r.Post("/admin/users/{userID}/disable", us.Disable)
	r.Post("/admin/users/{userID}/enable", us.Enable)
	r.Post("/admin/users/{userID}/password", us.ResetPassword)
	return r
}

func post(path string, form url.Values) *http.Request {
	req := httptest.NewRequest("POST", path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// TestAdjudicationPages runs every adjudication URL plain and as htmx:
// status, Vary, layout or fragment, HX headers, and a key data-testid.
func TestAdjudicationPages(t *testing.T) {
	refuse := func(err error) func(*fakeAdjudication) {
		return func(f *fakeAdjudication) {
			f.SubmitFn = func(int64, int64, grounding.Verdict, string) (grounding.SubmitResult, error) {
				return grounding.SubmitResult{}, fmt.Errorf("store: verdict: %w", err)
			}
		}
	}
	type want struct {
		status   int
		location string // plain requests: a See Other here
		html     bool   // <html> present
		testid   string
		text     string // in the body
	}
	tests := []struct {
		name   string
		req    func() *http.Request
		user   *grounding.User
		setup  func(*fakeAdjudication)
		plain  want
		htmx   want
		header map[string]string // on the htmx answer
	}{
		{name: "review", req: func() *http.Request { return httptest.NewRequest("GET", "/review?run=1&reason=vis.choice", nil) },
			plain: want{status: 200, html: true, testid: "review", text: "12 left"},
			htmx:  want{status: 200, testid: "why-code", text: "3 today"}},
		{name: "review empty", req: func() *http.Request { return httptest.NewRequest("GET", "/review", nil) },
			setup: func(f *fakeAdjudication) {
				f.NextFn = func(int64, grounding.QueueFilter) (grounding.Claim, error) {
					return grounding.Claim{}, grounding.ErrNotFound
				}
			},
			plain: want{status: 200, html: true, testid: "review-empty"}, htmx: want{status: 200, testid: "review-empty"}},
		{name: "review bad run", req: func() *http.Request { return httptest.NewRequest("GET", "/review?run=x", nil) },
			plain: want{status: 400, html: true, testid: "error"}, htmx: want{status: 400, testid: "alert"}},
		{name: "verdict", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}, "run": {"1"}}) },
			plain: want{status: 303, location: "/review?run=1"}, htmx: want{status: 200, testid: "notice", text: "Recorded “grounded — supervise”"},
			header: map[string]string{HXPushURL: "/review?run=1"}},
		{name: "verdict double click", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: func(f *fakeAdjudication) {
				f.SubmitFn = func(int64, int64, grounding.Verdict, string) (grounding.SubmitResult, error) {
					return grounding.SubmitResult{Repeated: true, Event: grounding.VerdictEvent{Verdict: grounding.VerdictPass}}, nil
				}
			},
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "notice", text: "recorded once"}},
		{name: "verdict stale tab other verdict", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"fail"}}) },
			setup: func(f *fakeAdjudication) {
				f.SubmitFn = func(int64, int64, grounding.Verdict, string) (grounding.SubmitResult, error) {
					return grounding.SubmitResult{Repeated: true, Event: grounding.VerdictEvent{Verdict: grounding.VerdictPass}}, nil
				}
			},
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "notice", text: "nothing changed"}},
		{name: "verdict closing a round with others", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: func(f *fakeAdjudication) {
				f.SubmitFn = func(int64, int64, grounding.Verdict, string) (grounding.SubmitResult, error) {
					return grounding.SubmitResult{State: grounding.QueueConflict, Closed: true, Event: grounding.VerdictEvent{ID: 50, Verdict: grounding.VerdictPass}}, nil
				}
			},
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "notice", text: "can no longer be undone"}},
		{name: "verdict not claimed", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(grounding.ErrNotClaimed),
			plain: want{status: 409, html: true, testid: "review", text: "not yours to judge"},
			htmx:  want{status: 409, testid: "notice", text: "Nothing was recorded"}, header: map[string]string{HXRetarget: "#review"}},
		{name: "verdict expired", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(grounding.ErrClaimExpired),
			plain: want{status: 409, html: true, testid: "notice", text: "expired"},
			htmx:  want{status: 409, testid: "notice", text: "expired"}, header: map[string]string{HXRetarget: "#review"}},
		{name: "verdict while an import holds the database", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(grounding.ErrBusy),
			plain: want{status: 503, html: true, testid: "notice", text: "Press the key again in a moment"},
			htmx:  want{status: 503, testid: "notice", text: "nothing was recorded"}, header: map[string]string{"Retry-After": "5"}},
		{name: "enqueue while an import holds the database", req: func() *http.Request {
			return post("/trajectories/5/decisions/0/enqueue", url.Values{"note": {"look again"}})
		}, user: researcher,
			setup: func(f *fakeAdjudication) {
				f.EnqueueFn = func(int64, int64, int, string) (grounding.QueueItem, bool, error) {
					return grounding.QueueItem{}, false, fmt.Errorf("store: enqueue: %w: database is locked", grounding.ErrBusy)
				}
			},
			plain: want{status: 503, html: true, testid: "error", text: "busy with an import"},
			htmx:  want{status: 503, testid: "alert", text: "Try again in a moment"}, header: map[string]string{"Retry-After": "5"}},
		{name: "verdict on a settled item", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(grounding.ErrItemClosed),
			plain: want{status: 409, html: true, testid: "notice", text: "settled meanwhile"},
			htmx:  want{status: 409, testid: "notice", text: "settled meanwhile"}},
		{name: "verdict on a vanished item", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(grounding.ErrNotFound),
			plain: want{status: 409, html: true, testid: "notice", text: "no longer in the queue"},
			htmx:  want{status: 409, testid: "notice", text: "no longer in the queue"}},
		{name: "verdict bogus", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"maybe"}}) },
			plain: want{status: 422, html: true, testid: "error"}, htmx: want{status: 422, testid: "alert"}},
		{name: "verdict store failure", req: func() *http.Request { return post("/review/7/verdict", url.Values{"verdict": {"pass"}}) },
			setup: refuse(errBoom),
			plain: want{status: 500, html: true, testid: "error"}, htmx: want{status: 500, testid: "alert"}},
		{name: "skip", req: func() *http.Request { return post("/review/7/skip", nil) },
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "notice", text: "Skipped"}},
		{name: "note", req: func() *http.Request { return post("/review/7/note", url.Values{"note": {"two cards"}}) },
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "my-notes", text: "Note saved"}},
		{name: "note blank", req: func() *http.Request { return post("/review/7/note", url.Values{"note": {" "}}) },
			plain: want{status: 422, html: true, testid: "error"}, htmx: want{status: 422, testid: "alert", text: "A note needs some text"}},
		{name: "undo", req: func() *http.Request { return post("/review/undo", url.Values{"event": {"41"}}) },
			plain: want{status: 303, location: "/review"}, htmx: want{status: 200, testid: "notice", text: "yours to judge again"}},
		{name: "undo stale", req: func() *http.Request { return post("/review/undo", url.Values{"event": {"40"}}) },
			plain: want{status: 409, html: true, testid: "notice", text: "Nothing to undo"},
			htmx:  want{status: 409, testid: "notice", text: "already undone"}},
		{name: "undo a skip", req: func() *http.Request { return post("/review/undo", url.Values{"event": {"41"}}) },
			setup: func(f *fakeAdjudication) {
				f.UndoFn = func(int64, int64) (grounding.VerdictEvent, error) {
					return grounding.VerdictEvent{ID: 60, Kind: grounding.EventUndo, Undoes: 41, UndoneKind: grounding.EventSkip}, nil
				}
				f.LastUndoableFn = func(int64) (grounding.VerdictEvent, error) {
					return grounding.VerdictEvent{ID: 41, Kind: grounding.EventSkip, Ordinal: 2, ExtID: "airline-task-7"}, nil
				}
			},
			plain: want{status: 303, location: "/review"},
			htmx:  want{status: 200, testid: "notice", text: "Skip taken back: the item is yours to judge."}},
		{name: "undo offer for a skip", req: func() *http.Request { return httptest.NewRequest("GET", "/review", nil) },
			setup: func(f *fakeAdjudication) {
				f.LastUndoableFn = func(int64) (grounding.VerdictEvent, error) {
					return grounding.VerdictEvent{ID: 41, Kind: grounding.EventSkip, Ordinal: 2, ExtID: "airline-task-7"}, nil
				}
			},
			plain: want{status: 200, html: true, testid: "undo", text: "undo skip on decision 3 of airline-task-7"},
			htmx:  want{status: 200, testid: "undo", text: "undo skip on decision 3 of airline-task-7"}},
		{name: "undo in a closed round", req: func() *http.Request { return post("/review/undo", url.Values{"event": {"41"}}) },
			setup: func(f *fakeAdjudication) {
				f.UndoFn = func(int64, int64) (grounding.VerdictEvent, error) {
					return grounding.VerdictEvent{}, fmt.Errorf("store: undo: %w", grounding.ErrRoundClosed)
				}
			},
			plain: want{status: 409, html: true, testid: "notice", text: "can no longer be undone"},
			htmx:  want{status: 409, testid: "notice", text: "a lead can still change the outcome"}},
		{name: "renew", req: func() *http.Request { return post("/review/7/renew", nil) },
			plain: want{status: 204}, htmx: want{status: 204}},
		{name: "renew expired", req: func() *http.Request { return post("/review/7/renew", nil) },
			setup: func(f *fakeAdjudication) {
				f.RenewFn = func(int64, int64) (time.Time, error) { return time.Time{}, grounding.ErrClaimExpired }
			},
			plain: want{status: 409, html: true, testid: "error"}, htmx: want{status: 409, testid: "alert", text: "expired"},
			header: map[string]string{HXRetarget: "#alerts"}},
		{name: "queue", req: func() *http.Request { return httptest.NewRequest("GET", "/queue?run=1&state=all", nil) }, user: researcher,
			plain: want{status: 200, html: true, testid: "overlap-form", text: "reservation_id = NO6JO3 (choice)"},
			htmx:  want{status: 200, testid: "queue-row", text: "next page"}},
		{name: "prioritize by deficit", req: func() *http.Request { return post("/queue/prioritize", url.Values{"run": {"1"}, "scale": {"8B"}}) }, user: researcher,
			plain: want{status: 303, location: "/queue?ranked=12&run=1&scale=8B"}, htmx: want{status: 303, location: "/queue?ranked=12&run=1&scale=8B"}},
		{name: "prioritize unknown scale", req: func() *http.Request { return post("/queue/prioritize", url.Values{"run": {"1"}, "scale": {"99B"}}) }, user: researcher,
			plain: want{status: 422, html: true, testid: "error"}, htmx: want{status: 422, testid: "alert", text: "8B"}},
		{name: "queue after ranking", req: func() *http.Request { return httptest.NewRequest("GET", "/queue?run=1&scale=8B&ranked=12", nil) }, user: researcher,
			plain: want{status: 200, html: true, testid: "prioritize-form", text: "Ranked 12 open items by coverage deficit at 8B"},
			htmx:  want{status: 200, testid: "queue-row"}},
		{name: "queue bad state", req: func() *http.Request { return httptest.NewRequest("GET", "/queue?state=weird", nil) },
			plain: want{status: 400, html: true}, htmx: want{status: 400, testid: "alert"}},
		{name: "conflicts", req: func() *http.Request { return httptest.NewRequest("GET", "/queue/conflicts", nil) }, user: researcher,
			plain: want{status: 200, html: true, testid: "conflict-verdict", text: "the user named it"},
			htmx:  want{status: 200, html: true, testid: "final-form", text: "two reservations"}},
		{name: "final", req: func() *http.Request {
			return post("/queue/7/final", url.Values{"verdict": {"fail"}, "reason": {"never picked"}})
		}, user: researcher,
			plain: want{status: 303, location: "/queue/conflicts"}, htmx: want{status: 200, html: true, testid: "notice", text: "Final verdict recorded"}},
		{name: "final without reason", req: func() *http.Request { return post("/queue/7/final", url.Values{"verdict": {"fail"}}) }, user: researcher,
			plain: want{status: 422, html: true, testid: "notice", text: "needs a reason"},
			htmx:  want{status: 422, html: true, testid: "notice", text: "Nothing was recorded"}},
		{name: "history for a lead", req: func() *http.Request { return httptest.NewRequest("GET", "/trajectories/5/decisions/0/history", nil) }, user: researcher,
			plain: want{status: 200, testid: "event", text: "judged it fail"}, htmx: want{status: 200, testid: "event", text: "two reservations visible"}},
		{name: "history hides others' verdicts from annotators", req: func() *http.Request {
			return httptest.NewRequest("GET", "/trajectories/5/decisions/0/history", nil)
		},
			plain: want{status: 200, testid: "event", text: "1 entries by other annotators stay hidden"},
			htmx:  want{status: 200, testid: "event", text: "stay hidden until the item is settled"}},
		{name: "enqueue", req: func() *http.Request {
			return post("/trajectories/5/decisions/0/enqueue", url.Values{"note": {"look again"}})
		}, user: researcher,
			plain: want{status: 303, location: "/trajectories/5#d0"}, htmx: want{status: 200, testid: "enqueued", text: "Sent to the queue"}},
		{name: "overlap", req: func() *http.Request { return post("/runs/1/overlap", url.Values{"k": {"2"}}) }, user: researcher,
			plain: want{status: 303, location: "/queue?run=1"}, htmx: want{status: 200, testid: "overlap-saved"}},
		{name: "overlap invalid", req: func() *http.Request { return post("/runs/1/overlap", url.Values{"k": {"0"}}) }, user: researcher,
			plain: want{status: 422, html: true, testid: "error"}, htmx: want{status: 422, testid: "alert", text: "from 1 to 10"}},
		{name: "agreement", req: func() *http.Request { return httptest.NewRequest("GET", "/agreement?run=1", nil) }, user: researcher,
			plain: want{status: 200, html: true, testid: "agreement-pair", text: "50%"},
			htmx:  want{status: 200, html: true, testid: "agreement-alpha", text: "over 2 items"}},
		{name: "who did what", req: func() *http.Request { return httptest.NewRequest("GET", "/agreement?run=1", nil) }, user: researcher,
			plain: want{status: 200, html: true, testid: "work-row", text: "5 (71%)"},
			htmx:  want{status: 200, html: true, testid: "work-verdicts", text: "1 (1 final)"}},
		{name: "users", req: func() *http.Request { return httptest.NewRequest("GET", "/admin/users", nil) }, user: admin,
			plain: want{status: 200, html: true, testid: "user-row"}, htmx: want{status: 200, html: true, testid: "user-form"}},
		{name: "user create", req: func() *http.Request {
			return post("/admin/users", url.Values{"name": {"zed"}, "role": {"annotator"}, "password": {"long enough"}})
		}, user: admin,
			plain: want{status: 200, html: true, testid: "user-created", text: "Created annotator zed"},
			htmx:  want{status: 200, html: true, testid: "user-created"}},
		{name: "user create taken", req: func() *http.Request {
			return post("/admin/users", url.Values{"name": {"ann"}, "role": {"annotator"}, "password": {"long enough"}})
		}, user: admin,
			plain: want{status: 409, html: true, testid: "user-error", text: "already exists"},
			htmx:  want{status: 409, html: true, testid: "user-error"}},
		{name: "user create short password", req: func() *http.Request {
			return post("/admin/users", url.Values{"name": {"zed"}, "role": {"annotator"}, "password": {"short"}})
		}, user: admin,
			plain: want{status: 422, html: true, testid: "user-error", text: "at least 8"},
			htmx:  want{status: 422, html: true, testid: "user-error"}},
		{name: "user create long password", req: func() *http.Request {
			return post("/admin/users", url.Values{"name": {"zed"}, "role": {"annotator"}, "password": {strings.Repeat("p", 73)}})
		}, user: admin,
			plain: want{status: 422, html: true, testid: "user-error", text: "at most 72 bytes"},
			htmx:  want{status: 422, html: true, testid: "user-error"}},
		{name: "user disable", req: func() *http.Request { return post("/admin/users/2/disable", nil) }, user: admin,
			plain: want{status: 200, html: true, testid: "user-created", text: "Disabled ann: logged out everywhere, API tokens revoked"},
			htmx:  want{status: 200, html: true, testid: "user-created"}},
		{name: "user disable self", req: func() *http.Request { return post("/admin/users/3/disable", nil) }, user: admin,
			plain: want{status: 422, html: true, testid: "user-error", text: "cannot disable your own account"},
			htmx:  want{status: 422, html: true, testid: "user-error"}},
		{name: "user disable unknown", req: func() *http.Request { return post("/admin/users/99/disable", nil) }, user: admin,
			plain: want{status: 404, html: true, testid: "error"}, htmx: want{status: 404, testid: "alert"}},
		{name: "user enable", req: func() *http.Request { return post("/admin/users/2/enable", nil) }, user: admin,
			plain: want{status: 200, html: true, testid: "user-created", text: "Enabled ann"},
			htmx:  want{status: 200, html: true, testid: "user-created"}},
		{name: "user password", req: func() *http.Request { return post("/admin/users/2/password", nil) }, user: admin,
			plain: want{status: 200, html: true, testid: "new-password"},
			htmx:  want{status: 200, html: true, testid: "user-created", text: "New password for ann"}},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				st := adjudicationStore(t)
				if tt.setup != nil {
					tt.setup(st)
				}
				user := tt.user
				if user == nil {
					user = annotator
				}
				w := tt.plain
				if m.htmx {
					w = tt.htmx
				}
				req := tt.req()
				rec, doc := do(t, adjudicationRouter(st, user), req, m.htmx)
				if rec.Code != w.status {
					t.Fatalf("%s %s = %d, want %d\n%s", req.Method, req.URL, rec.Code, w.status, rec.Body)
				}
				if w.location != "" && rec.Header().Get("Location") != w.location {
					t.Errorf("Location = %q, want %q", rec.Header().Get("Location"), w.location)
				}
				if rec.Code == 303 || rec.Code == 204 {
					return
				}
				if v := rec.Header().Values("Vary"); !contains(v, HXRequest) {
					t.Errorf("Vary = %q, want HX-Request", v)
				}
				if got := hasHTML(rec); got != w.html {
					t.Errorf("<html> present = %v, want %v\n%s", got, w.html, rec.Body)
				}
				if w.testid != "" && doc.Find(`[data-testid=`+w.testid+`]`).Length() == 0 {
					t.Errorf("no [data-testid=%s] in\n%s", w.testid, rec.Body)
				}
				if w.text != "" && !strings.Contains(doc.Text(), w.text) {
					t.Errorf("body lacks %q:\n%s", w.text, doc.Text())
				}
				if m.htmx {
					for k, v := range tt.header {
						if got := rec.Header().Get(k); got != v {
							t.Errorf("%s = %q, want %q", k, got, v)
						}
					}
				}
				if rec.Code >= 500 && strings.Contains(rec.Body.String(), "secret database detail") {
					t.Errorf("5xx leaks the error")
				}
			})
		}
	}
}

// TestReviewScreen checks what the screen shows of the claimed item: the
// three panes, why it was queued, the argument in question marked for the
// page script, the keys, the undo offer and the progress figures.
func TestReviewScreen(t *testing.T) {
	st := adjudicationStore(t)
	var gotFilter grounding.QueueFilter
	st.NextFn = func(userID int64, f grounding.QueueFilter) (grounding.Claim, error) {
		gotFilter = f
		return grounding.Claim{Item: reviewItem(), UserID: userID}, nil
	}
	rec, doc := do(t, adjudicationRouter(st, annotator), httptest.NewRequest("GET", "/review?run=1&tool=get_reservation_details&domain=airline&reason=vis.choice", nil), true)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if gotFilter.RunID != 1 || gotFilter.Tool != "get_reservation_details" || gotFilter.Domain != "airline" || gotFilter.Reason != grounding.ReasonChoice {
		t.Errorf("filter = %+v", gotFilter)
	}
	rv := doc.Find(`#review`)
	if id, _ := rv.Attr("data-item"); id != "7" {
		t.Errorf("data-item = %q", id)
	}
	if u, _ := rv.Attr("data-renew"); u != "/review/7/renew" {
		t.Errorf("data-renew = %q", u)
	}
	for _, sel := range []string{"visible-pane", "action-pane", "hidden-pane", "approve", "reject", "skip", "undo", "note", "shortcuts", "question"} {
		if doc.Find(`[data-testid=`+sel+`]`).Length() == 0 {
			t.Errorf("no [data-testid=%s]", sel)
		}
	}
	if q := doc.Find(`button.arg[data-question]`); q.Length() != 1 || !strings.Contains(q.Text(), "reservation_id") {
		t.Errorf("argument in question = %q", q.Text())
	}
	// Every form carries the queue's filter, so the next item comes from it.
	forms := doc.Find(`#review form[hx-post]`)
	forms.Each(func(i int, f *goquery.Selection) {
		for _, name := range []string{"run", "tool", "domain", "reason"} {
			if f.Find(`input[name=`+name+`]`).Length() != 1 {
				t.Errorf("form %d lacks the %s filter", i, name)
			}
		}
	})
	if v, _ := doc.Find(`[data-testid=undo]`).Parent().Find(`input[name=event]`).Attr("value"); v != "41" {
		t.Errorf("undo offers event %q, want 41", v)
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid=undo]`).Text()), " "); got != "u undo pass on decision 3 of airline-task-7" {
		t.Errorf("undo reads %q", got)
	}
	// Annotators see their own notes only.
	notes := doc.Find(`[data-testid=my-notes]`).Text()
	if !strings.Contains(notes, "two reservations visible") {
		t.Errorf("my notes = %q", notes)
	}
	if strings.Contains(doc.Text(), "bob") {
		t.Errorf("the review screen shows another annotator's verdict")
	}
	// An annotator's figures leave the item in conflict out: 5 of 19.
	if got := doc.Find(`[data-testid=run-share]`).Text(); !strings.Contains(got, "26% adjudicated") || !strings.Contains(got, "of 19 queued items in demo") {
		t.Errorf("run share = %q", got)
	}
	// "left" counts what the annotator can still be given; the open items
	// they judged or skipped this round are said apart.
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid=remaining]`).Text()), " "); got != "12 left of 14 open: 2 judged or skipped by you" {
		t.Errorf("remaining = %q", got)
	}
}

// The trajectory page's "judge it" opens the review screen on that
// decision's item; one that is not open to the user says so and the
// queue's next item is shown, the forms carrying the queue's filter only.
func TestReviewJudgeOneDecision(t *testing.T) {
	st := adjudicationStore(t)
	var calls []grounding.QueueFilter
	taken := false
	st.NextFn = func(userID int64, f grounding.QueueFilter) (grounding.Claim, error) {
		calls = append(calls, f)
		if f.Decision != nil && taken {
			return grounding.Claim{}, fmt.Errorf("store: next: queue empty: %w", grounding.ErrNotFound)
		}
		return grounding.Claim{Item: reviewItem(), UserID: userID}, nil
	}
	h := adjudicationRouter(st, annotator)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/review?run=1&trajectory=5&ordinal=0", nil), false)
	if rec.Code != 200 || len(calls) != 1 || calls[0].Decision == nil || *calls[0].Decision != (grounding.DecisionRef{TrajectoryID: 5, Ordinal: 0}) || calls[0].RunID != 1 {
		t.Fatalf("status %d, Next calls %+v; want one, for decision 0 of trajectory 5 in run 1", rec.Code, calls)
	}
	if id, _ := doc.Find(`#review`).Attr("data-item"); id != "7" {
		t.Errorf("data-item = %q", id)
	}
	if doc.Find(`#review form[hx-post] input[name=trajectory], #review form[hx-post] input[name=ordinal]`).Length() != 0 {
		t.Errorf("the forms carry the decision: the next item would be the same one")
	}
	if v := rec.Header().Get(HXPushURL); v != "/review?run=1" {
		t.Errorf("HX-Push-Url = %q, want the queue's URL", v)
	}

	taken, calls = true, nil
	rec, doc = do(t, h, httptest.NewRequest("GET", "/review?run=1&trajectory=5&ordinal=3", nil), false)
	if rec.Code != 200 || len(calls) != 2 || calls[1].Decision != nil {
		t.Fatalf("status %d, Next calls %+v; want the decision, then the queue", rec.Code, calls)
	}
	if s := doc.Find(`[data-testid=notice]`).Text(); !strings.Contains(s, "Decision 4 is not open to you") {
		t.Errorf("notice = %q", s)
	}
	for _, q := range []string{"trajectory=5", "trajectory=5&ordinal=-1", "trajectory=x&ordinal=2"} {
		if rec, _ := do(t, h, httptest.NewRequest("GET", "/review?"+q, nil), false); rec.Code != 400 {
			t.Errorf("/review?%s: status %d, want 400", q, rec.Code)
		}
	}
}

// A note typed and not saved leaves with the item: sent with a verdict,
// saved on the item before a skip, and on the item on screen before an
// undo takes the annotator back. Every form of the screen includes it.
func TestReviewKeepsUnsavedNote(t *testing.T) {
	st := adjudicationStore(t)
	var log []string
	st.SubmitFn = func(userID, itemID int64, v grounding.Verdict, note string) (grounding.SubmitResult, error) {
		log = append(log, fmt.Sprintf("verdict %d %s %q", itemID, v, note))
		return grounding.SubmitResult{Event: grounding.VerdictEvent{ID: 43, Verdict: v}, State: grounding.QueueDone, Human: v}, nil
	}
	st.AddNoteFn = func(userID, itemID int64, note string) (grounding.VerdictEvent, bool, error) {
		log = append(log, fmt.Sprintf("note %d %q", itemID, note))
		return grounding.VerdictEvent{ID: 44, Kind: grounding.EventNote, Note: note, ItemID: itemID, Ordinal: 3}, false, nil
	}
	st.SkipFn = func(userID, itemID int64) error {
		log = append(log, fmt.Sprintf("skip %d", itemID))
		return nil
	}
	inner := st.UndoFn
	st.UndoFn = func(userID, eventID int64) (grounding.VerdictEvent, error) {
		log = append(log, fmt.Sprintf("undo %d", eventID))
		return inner(userID, eventID)
	}
	h := adjudicationRouter(st, annotator)
	_, doc := do(t, h, httptest.NewRequest("GET", "/review", nil), true)
	doc.Find(`#review form[hx-post]`).Each(func(_ int, f *goquery.Selection) {
		inc, _ := f.Attr("hx-include")
		if action, _ := f.Attr("hx-post"); inc != "#review [data-note-input]" && f.Find(`[data-note-input]`).Length() == 0 {
			t.Errorf("form %s leaves an unsaved note behind (hx-include %q)", action, inc)
		}
	})
	if v, _ := doc.Find(`[data-testid=undo]`).Parent().Find(`input[name=item]`).Attr("value"); v != "7" {
		t.Errorf("undo names item %q, want the item on screen, 7", v)
	}

	for _, c := range []struct {
		req    *http.Request
		want   []string
		notice string
	}{
		{post("/review/7/verdict", url.Values{"verdict": {"pass"}, "note": {"the user named it"}}),
			[]string{`verdict 7 pass "the user named it"`}, "with your note"},
		{post("/review/7/skip", url.Values{"note": {"not sure: ask a lead"}}),
			[]string{`note 7 "not sure: ask a lead"`, "skip 7"}, "Your note on decision 4, the one you left, is saved there."},
		{post("/review/7/skip", url.Values{"note": {"  "}}), []string{"skip 7"}, "Skipped"},
		{post("/review/undo", url.Values{"event": {"41"}, "item": {"7"}, "note": {"half a thought"}}),
			[]string{`note 7 "half a thought"`, "undo 41"}, "Your note on decision 4, the one you left, is saved there."},
	} {
		log = nil
		c.req.Header.Set("HX-Request", "true")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, c.req)
		if !slices.Equal(log, c.want) || !strings.Contains(rec.Body.String(), c.notice) {
			t.Errorf("%s %v: store calls %q, want %q; notice has %q: %v", c.req.URL.Path, c.req.PostForm, log, c.want, c.notice, strings.Contains(rec.Body.String(), c.notice))
		}
	}
}

// TestReviewReachesBackToEvidence: when the argument in question was found
// further back than the visible messages a decision normally shows, the
// review screen's visible pane starts at that message (so the page can
// highlight it) and the "earlier" button counts only what precedes it.
func TestReviewReachesBackToEvidence(t *testing.T) {
	msgs := []grounding.Message{
		{Role: "system", Content: "policy"},
		{Role: "user", Content: "my reservation is NO6JO3"},
		{Role: "assistant", Content: "What would you like to do with it?"},
		{Role: "user", Content: "change the flight"},
		{Role: "assistant", Content: "To which date?"},
		{Role: "user", Content: "the 20th"},
		{Role: "assistant", Content: "Let me look it up."},
		{Role: "user", Content: "go ahead"},
		{Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c1", Name: "get_reservation_details", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "get_reservation_details", Content: `{"reservation_id":"NO6JO3"}`},
	}
	for i := range msgs {
		msgs[i].Index = i
	}
	st := trajectoryStore(t, &grounding.Trajectory{ID: "t-far", Messages: msgs})
	f := &fakeAdjudication{fakeStore: st}
	// Decisions 0-2 are the text replies; 3 is the call at message 8.
	item := grounding.QueueItem{ID: 9, RunID: 1, TrajectoryID: 5, Ordinal: 3, RunName: "demo", ExtID: "t-far", Tool: "get_reservation_details",
		Source: grounding.SourceAuto, Why: []string{grounding.ReasonChoice}, Required: 1, State: grounding.QueueOpen,
		Args: []grounding.ArgEvidence{{Path: "reservation_id", Value: json.RawMessage(`"NO6JO3"`), Status: grounding.StatusLiteral,
			Where: grounding.Evidence{Found: "visible", Message: 1}}}}
	serveOneItem(f, item)
	var windows int
	window := st.WindowFn
	st.WindowFn = func(id int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error) {
		windows++
		return window(id, shown, first, reach, hi, hiddenTo, span)
	}
	st.MessagesFn, st.VisibleBeforeFn, st.HiddenBeforeFn = nil, nil, nil // one window read, nothing else

	rec, doc := do(t, adjudicationRouter(f, annotator), httptest.NewRequest("GET", "/review", nil), true)
	if rec.Code != 200 {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	var shown []string
	doc.Find(`[data-testid=visible-pane] .msg`).Each(func(_ int, s *goquery.Selection) {
		i, _ := s.Attr("data-index")
		shown = append(shown, i)
	})
	if want := []string{"1", "2", "3", "4", "5", "6", "7"}; !slices.Equal(shown, want) {
		t.Errorf("visible pane shows messages %q, want %q (from the evidence on)", shown, want)
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid=visible-pane] [data-testid=earlier]`).Text()), " "); !strings.Contains(got, "1 earlier messages") {
		t.Errorf("earlier button = %q, want 1 earlier message", got)
	}
	if windows != 1 {
		t.Errorf("%d window reads, want 1", windows)
	}
}

// TestHistoryHidesConflictFromAnnotators: an annotator who voted on an item
// with k = 2 must not learn from its history that the other verdict
// differed (the verdict's notice does not say either); a lead sees the
// state.
func TestHistoryHidesConflictFromAnnotators(t *testing.T) {
	it := reviewItem()
	it.State = grounding.QueueConflict
	hist := grounding.DecisionHistory{Item: &it, Events: []grounding.VerdictEvent{
		{ID: 1, UserID: 2, UserName: "ann", Kind: grounding.EventVerdict, Verdict: grounding.VerdictPass},
		{ID: 2, UserID: 9, UserName: "bob", Kind: grounding.EventVerdict, Verdict: grounding.VerdictFail},
	}}
	ann := grounding.User{ID: 2, Name: "ann", Role: grounding.RoleAnnotator}
	hv := historyView(hist, ann)
	if hv.State == grounding.QueueConflict || len(hv.Events) != 1 || hv.Hidden == "" {
		t.Errorf("ann's view of a conflict: state %q, %d events, hidden %q; want no conflict, her own verdict only", hv.State, len(hv.Events), hv.Hidden)
	}
	lea := grounding.User{ID: 5, Name: "lea", Role: grounding.RoleResearcher}
	if hv := historyView(hist, lea); hv.State != grounding.QueueConflict || len(hv.Events) != 2 {
		t.Errorf("the lead's view: state %q, %d events; want conflict and both verdicts", hv.State, len(hv.Events))
	}
	it.State = grounding.QueueDone
	if hv := historyView(hist, ann); hv.State != grounding.QueueDone || len(hv.Events) != 2 {
		t.Errorf("ann's view once settled: state %q, %d events; want done and both verdicts", hv.State, len(hv.Events))
	}
}

// "why queued" lists only the reasons that made the decision ambiguous:
// vis.normalized and vis.derived are pass evidence (an accepted argument)
// and are shown apart, as evidence, on the review screen, the queue list
// and the conflicts list.
func TestWhyQueuedLeavesOutPassEvidence(t *testing.T) {
	st := adjudicationStore(t)
	item := func() grounding.QueueItem {
		it := reviewItem()
		it.Why = []string{grounding.ReasonChoice, grounding.ReasonNormalized, grounding.ReasonDerived}
		return it
	}
	st.NextFn = func(userID int64, f grounding.QueueFilter) (grounding.Claim, error) {
		return grounding.Claim{Item: item(), UserID: userID}, nil
	}
	st.QueueFn = func(grounding.QueueFilter) (grounding.QueuePage, error) {
		return grounding.QueuePage{Items: []grounding.QueueItem{item()}}, nil
	}
	st.ConflictsFn = func(grounding.QueueFilter) ([]grounding.ConflictItem, error) {
		it := item()
		it.State = grounding.QueueConflict
		return []grounding.ConflictItem{{Item: it}}, nil
	}
	codes := func(s *goquery.Selection) string {
		var out []string
		s.Each(func(_ int, c *goquery.Selection) { out = append(out, c.Text()) })
		return strings.Join(out, " ")
	}
	_, doc := do(t, adjudicationRouter(st, annotator), httptest.NewRequest("GET", "/review", nil), false)
	if got := codes(doc.Find(`[data-testid=why-code]`)); got != "vis.choice" {
		t.Errorf("review why queued = %q, want only vis.choice", got)
	}
	if got := codes(doc.Find(`[data-testid=evidence-codes] .code`)); got != "vis.normalized vis.derived" {
		t.Errorf("review pass evidence = %q", got)
	}
	for _, path := range []string{"/queue?state=all", "/queue/conflicts"} {
		_, doc = do(t, adjudicationRouter(st, researcher), httptest.NewRequest("GET", path, nil), false)
		scope := doc.Find(`[data-testid=queue-row] td:nth-child(2), [data-testid=conflict] header`)
		why := codes(scope.ChildrenFiltered(".code"))
		if why != "vis.choice" {
			t.Errorf("%s why queued = %q, want only vis.choice", path, why)
		}
		if got := codes(scope.Find(`[data-testid=evidence-codes] .code`)); got != "vis.normalized vis.derived" {
			t.Errorf("%s pass evidence = %q", path, got)
		}
	}
}

// The queue's summary line describes the items listed, in their state:
// /queue?state=done no longer says "2,096 open items match".
func TestQueueSummaryFollowsState(t *testing.T) {
	st := adjudicationStore(t)
	st.ProgressFn = func(int64, grounding.QueueFilter) (grounding.Progress, error) {
		return grounding.Progress{Remaining: 2096, Items: 2097, Done: 1}, nil
	}
	tests := []struct{ path, want string }{
		{"/queue", "2,096 open items match · 1 of 2,097 queued items in all runs settled (0%) · 0 conflicts waiting for a lead"},
		{"/queue?state=done", "1 settled item (0% of 2,097 queued items in all runs) · 2,096 still open"},
		{"/queue?state=done&run=1", "1 settled item (0% of 2,097 queued items) · 2,096 still open"},
		{"/queue?state=done&tool=bash", "Settled items matching these filters · overall, 1 of 2,097 queued items in all runs settled (0%) · 2,096 open items match"},
		{"/queue?state=conflict", "0 conflicts waiting for a lead (of 2,097 queued items in all runs) · 2,096 still open"},
		{"/queue?state=all", "2,097 queued items in all runs: 2,096 open, 1 settled (0%), 0 conflicts waiting for a lead"},
	}
	for _, tt := range tests {
		_, doc := do(t, adjudicationRouter(st, researcher), httptest.NewRequest("GET", tt.path, nil), false)
		if got := strings.Join(strings.Fields(doc.Find(`[data-testid=queue-summary]`).Text()), " "); got != tt.want {
			t.Errorf("%s summary = %q\nwant %q", tt.path, got, tt.want)
		}
	}
}

// serveOneItem makes f's queue hand out item, alone, to whoever asks, with
// nothing to undo and no history.
func serveOneItem(f *fakeAdjudication, item grounding.QueueItem) {
	f.NextFn = func(userID int64, q grounding.QueueFilter) (grounding.Claim, error) {
		return grounding.Claim{Item: item, UserID: userID}, nil
	}
	f.ProgressFn = func(int64, grounding.QueueFilter) (grounding.Progress, error) {
		return grounding.Progress{Items: 1}, nil
	}
	f.LastUndoableFn = func(int64) (grounding.VerdictEvent, error) { return grounding.VerdictEvent{}, grounding.ErrNotFound }
	f.HistoryFn = func(int64, int) (grounding.DecisionHistory, error) { return grounding.DecisionHistory{}, nil }
}
