package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"groundwork/grounding"
)

const hintText = "teacher note: use certificate_7504069"

// sample is a small trajectory: the user asks, the agent calls a tool that
// fails, a hidden hint follows, then the agent replies.
func sample() *grounding.Trajectory {
	at := 4
	return &grounding.Trajectory{
		ID: "t-1",
		Messages: []grounding.Message{
			{Index: 0, Role: "system", Content: "policy"},
			{Index: 1, Role: "user", Content: "cancel NO6JO3 <script>alert(1)</script>"},
			{Index: 2, Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c1", Name: "get_reservation_details", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
			{Index: 3, Role: "tool", ToolCallID: "c1", Name: "get_reservation_details", Content: "Error: <script>alert(2)</script>", Error: true},
			{Index: 4, Role: "system", Content: hintText, Visibility: grounding.Hidden, HiddenKind: grounding.HiddenTeacherHint},
			{Index: 5, Role: "assistant", Content: "Done.", ToolCalls: []grounding.ToolCall{{ID: "c2", Name: "cancel_reservation", RawArguments: `{"reservation_id": "NO6`}}},
		},
		Hidden: []grounding.HiddenEntry{
			{Kind: grounding.HiddenUserInstruction, Content: json.RawMessage(`"You are mia_li_3668"`)},
			{Kind: grounding.HiddenDBState, Content: json.RawMessage(`{"late":"secret_db_row"}`), At: &at},
		},
	}
}

// trajectoryStore serves t as trajectory 5 of run 1, computing what the
// store would from the domain functions.
func trajectoryStore(t *testing.T, tr *grounding.Trajectory) *fakeStore {
	res := grounding.CheckDefault(tr)
	var ds []grounding.StoredDecision
	for i, d := range grounding.Decisions(tr) {
		c := res.Decisions[i]
		ds = append(ds, grounding.StoredDecision{Decision: d, Action: c.Action, E: c.E, V: c.V, G: c.G,
			FlowOK: c.Workflow, AutoVerdict: c.Verdict, Verdict: c.Verdict, Mask: c.Mask, Queued: c.Queued,
			Reasons: c.Reasons, Args: c.Args, Detail: c.Detail})
	}
	return &fakeStore{
		t: t,
		TrajectoryFn: func(id int64) (grounding.TrajectoryHeader, error) {
			if id != 5 {
				return grounding.TrajectoryHeader{}, grounding.ErrNotFound
			}
			return grounding.TrajectoryHeader{
				TrajectorySummary: grounding.TrajectorySummary{ID: 5, RunID: 1, ExtID: tr.ID, Messages: len(tr.Messages), Decisions: len(ds), SourceFile: "a.jsonl", SourceIndex: 0},
				RunName:           "demo", Hidden: tr.Hidden, Format: "canonical",
			}, nil
		},
		MessagesFn: func(_ int64, from, to int) ([]grounding.Message, error) {
			to = min(to, len(tr.Messages))
			if from >= to {
				return nil, nil
			}
			return tr.Messages[from:to], nil
		},
		VisibleBeforeFn: func(_ int64, before, limit int) ([]grounding.Message, int, error) {
			idx := grounding.VisibleBefore(tr, before)
			earlier := max(0, len(idx)-limit)
			var out []grounding.Message
			for _, i := range idx[earlier:] {
				out = append(out, tr.Messages[i])
			}
			return out, earlier, nil
		},
		HiddenBeforeFn: func(_ int64, before int) ([]grounding.Message, error) {
			msgs, _ := grounding.HiddenKnownAt(tr, before)
			var out []grounding.Message
			for _, i := range msgs {
				out = append(out, tr.Messages[i])
			}
			return out, nil
		},
		WindowFn: func(_ int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error) {
			return window(tr, shown, first, reach, hi, hiddenTo, span), nil
		},
		DecisionsFn: func(_ int64, from, limit int) ([]grounding.StoredDecision, error) {
			if from >= len(ds) {
				return nil, nil
			}
			return ds[from:min(len(ds), from+limit)], nil
		},
	}
}

// window is store.MessageWindow by its definition, over tr in memory.
func window(tr *grounding.Trajectory, shown, first, reach, hi, hiddenTo, span int) grounding.MessageWindow {
	vis := grounding.VisibleBefore(tr, first)
	w := grounding.MessageWindow{}
	if len(vis) >= shown {
		w.Lo = vis[len(vis)-shown]
	}
	if reach >= 0 && reach < w.Lo {
		w.Lo = reach
	}
	for i, m := range tr.Messages {
		m.Index = i
		hidden := m.Visibility == grounding.Hidden
		if !hidden && i < w.Lo {
			w.Earlier++
		}
		if i >= w.Lo && i <= hi && hi-w.Lo < span {
			w.Range = append(w.Range, m)
		}
		if hidden && i < hiddenTo {
			w.Hidden = append(w.Hidden, m)
		}
	}
	return w
}

func runStore(t *testing.T) *fakeStore {
	r := 1.0
	st := trajectoryStore(t, sample())
	st.RunsFn = func() ([]grounding.Run, error) {
		return []grounding.Run{{ID: 1, Name: "demo", Trajectories: 4, Successes: 3, CreatedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}}, nil
	}
	st.RunFn = func(id int64) (grounding.Run, error) {
		if id != 1 {
			return grounding.Run{}, grounding.ErrNotFound
		}
		return grounding.Run{ID: 1, Name: "demo", Trajectories: 4}, nil
	}
	st.RunFacetsFn = func(int64) ([]string, []string, error) {
		return []string{"airline"}, []string{"get_reservation_details"}, nil
	}
	st.TrajectoriesFn = func(f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error) {
		return grounding.TrajectoryPage{
			Rows: []grounding.TrajectorySummary{{ID: 5, RunID: 1, ExtID: "t-1", Reward: &r, Success: true, SourceFile: "a.jsonl"}},
			Next: "t-1",
		}, nil
	}
	return st
}

func TestPages(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		store  func(t *testing.T) *fakeStore
		status int
		// fullOnHTMX: the URL answers an htmx request with the full page
		// (no fragment), as plain pages do.
		fullOnHTMX bool
		// fragmentOnly: the URL always answers with a fragment.
		fragmentOnly bool
		testid       string
	}{
		{name: "runs", path: "/runs", store: runStore, status: 200, fullOnHTMX: true, testid: "runs"},
		{name: "runs empty", path: "/runs", store: func(t *testing.T) *fakeStore {
			return &fakeStore{t: t, RunsFn: func() ([]grounding.Run, error) { return nil, nil }}
		}, status: 200, fullOnHTMX: true, testid: "runs-empty"},
		{name: "run", path: "/runs/1?success=yes&domain=airline", store: runStore, status: 200, testid: "trajectory-row"},
		{name: "run rows", path: "/runs/1/trajectories?after=t-0", store: runStore, status: 200, fragmentOnly: true, testid: "pager"},
		{name: "run missing", path: "/runs/9", store: runStore, status: 404},
		{name: "run bad id", path: "/runs/x", store: runStore, status: 400},
		{name: "trajectory", path: "/trajectories/5", store: runStore, status: 200, fullOnHTMX: true, testid: "decision"},
		{name: "trajectory missing", path: "/trajectories/6", store: runStore, status: 404},
		{name: "decisions page", path: "/trajectories/5/decisions?from=1", store: runStore, status: 200, fragmentOnly: true, testid: "decision"},
		{name: "earlier messages", path: "/trajectories/5/messages?before=5&limit=1&visible=1", store: runStore, status: 200, fragmentOnly: true, testid: "earlier"},
		{name: "full message", path: "/trajectories/5/messages/3", store: runStore, status: 200, fragmentOnly: true},
		{name: "message missing", path: "/trajectories/5/messages/99", store: runStore, status: 404},
		{name: "hidden entry", path: "/trajectories/5/hidden/1", store: runStore, status: 200, fragmentOnly: true},
		{name: "store failure", path: "/runs", store: func(t *testing.T) *fakeStore {
			return &fakeStore{t: t, RunsFn: func() ([]grounding.Run, error) { return nil, errBoom }}
		}, status: 500},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				h := testRouter(tt.store(t), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
				rec, doc := do(t, h, httptest.NewRequest("GET", tt.path, nil), m.htmx)
				if rec.Code != tt.status {
					t.Fatalf("GET %s = %d, want %d\n%s", tt.path, rec.Code, tt.status, rec.Body)
				}
				if v := rec.Header().Values("Vary"); !contains(v, HXRequest) {
					t.Errorf("Vary = %q, want HX-Request", v)
				}
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("Content-Type = %q", ct)
				}
				isErr := tt.status >= 400
				wantHTML := !tt.fragmentOnly && (!m.htmx || tt.fullOnHTMX) || isErr && !m.htmx
				if got := hasHTML(rec); got != wantHTML {
					t.Errorf("<html> present = %v, want %v", got, wantHTML)
				}
				if isErr {
					if m.htmx {
						if rec.Header().Get(HXRetarget) != "#alerts" || rec.Header().Get(HXReswap) != "innerHTML" {
							t.Errorf("error headers = %v", rec.Header())
						}
						if doc.Find(`[data-testid=alert]`).Length() != 1 {
							t.Errorf("no alert in %s", rec.Body)
						}
					} else if doc.Find(`[data-testid=error]`).Length() != 1 {
						t.Errorf("no error page in %s", rec.Body)
					}
					if tt.status >= 500 {
						if strings.Contains(rec.Body.String(), "secret database detail") {
							t.Errorf("5xx body leaks the error: %s", rec.Body)
						}
						if !strings.Contains(rec.Body.String(), "Internal error (request id") {
							t.Errorf("5xx body = %s", rec.Body)
						}
					}
					return
				}
				if rec.Header().Get(HXRetarget) != "" {
					t.Errorf("success with HX-Retarget")
				}
				if tt.testid != "" && doc.Find(`[data-testid=`+tt.testid+`]`).Length() == 0 {
					t.Errorf("no [data-testid=%s] in\n%s", tt.testid, rec.Body)
				}
			})
		}
	}
}

func contains(vs []string, s string) bool {
	for _, v := range vs {
		for _, p := range strings.Split(v, ",") {
			if strings.TrimSpace(p) == s {
				return true
			}
		}
	}
	return false
}

// TestBoostedGetsFullPage: boosted navigation and history restores replace
// the whole body, so they get the layout even on URLs with a fragment.
func TestBoostedGetsFullPage(t *testing.T) {
	for _, hdr := range []string{HXBoosted, HXHistoryRestore} {
		h := testRouter(runStore(t), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
		req := httptest.NewRequest("GET", "/runs/1", nil)
		req.Header.Set(hdr, "true")
		rec, doc := do(t, h, req, true)
		if rec.Code != 200 || !hasHTML(rec) || doc.Find(`[data-testid=filters]`).Length() != 1 {
			t.Errorf("%s: status %d, html %v", hdr, rec.Code, hasHTML(rec))
		}
	}
}

func TestRunFilterAndPaging(t *testing.T) {
	st := runStore(t)
	var got grounding.TrajectoryFilter
	inner := st.TrajectoriesFn
	st.TrajectoriesFn = func(f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error) {
		got = f
		return inner(f)
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/runs/1?success=no&tool=get_reservation_details&q=+t-&after=t-0", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if got.Success == nil || *got.Success || got.Tool != "get_reservation_details" || got.Search != "t-" || got.After != "t-0" || got.Limit != pageSize || got.RunID != 1 {
		t.Errorf("filter = %+v", got)
	}
	next, _ := doc.Find(`[data-testid=next-page]`).Attr("href")
	if next != "/runs/1?after=t-1&q=t-&success=no&tool=get_reservation_details" {
		t.Errorf("next page = %q", next)
	}
	more, _ := doc.Find(`[data-testid=load-more]`).Attr("hx-get")
	if more != "/runs/1/trajectories?after=t-1&q=t-&success=no&tool=get_reservation_details" {
		t.Errorf("load more = %q", more)
	}
	if v, _ := doc.Find(`select[name=success] option[selected]`).Attr("value"); v != "no" {
		t.Errorf("selected success = %q", v)
	}
	req := httptest.NewRequest("GET", "/runs/1?success=&domain=airline&tool=&q=", nil)
	rec, _ = do(t, h, req, true)
	if v := rec.Header().Get(HXPushURL); v != "/runs/1?domain=airline" {
		t.Errorf("HX-Push-Url = %q", v)
	}
	if v, _ := doc.Find(`form[data-testid=filters]`).Attr("hx-push-url"); v != "true" {
		t.Errorf("filter form hx-push-url = %q", v)
	}
	if v, _ := doc.Find(`input[name=q]`).Attr("hx-trigger"); !strings.Contains(v, "keyup changed delay:300ms") {
		t.Errorf("search hx-trigger = %q", v)
	}
}

// A list filtered by decision links each row's first matching decision;
// an unfiltered one does not.
func TestRunRowLinksItsMatch(t *testing.T) {
	st := runStore(t)
	st.TrajectoriesFn = func(f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error) {
		row := grounding.TrajectorySummary{ID: 5, RunID: 1, ExtID: "t-1", SourceFile: "../logs/2026/a.jsonl", SourceIndex: 3}
		if f.Tool != "" || f.Verdict != "" || f.Reason != "" {
			m := 23
			row.Match = &m
		}
		return grounding.TrajectoryPage{Rows: []grounding.TrajectorySummary{row}}, nil
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	_, doc := do(t, h, httptest.NewRequest("GET", "/runs/1?tool=get_reservation_details&verdict=ambiguous", nil), false)
	a := doc.Find(`[data-testid=trajectory-row] [data-testid=match]`)
	// With a verdict, the link opens that verdict's tab from the decision.
	if href, _ := a.Attr("href"); href != "/trajectories/5?verdict=ambiguous&from=23#d23" || strings.TrimSpace(a.Text()) != "→ decision 24" {
		t.Errorf("match link = %q %q, want decision 24 at /trajectories/5?verdict=ambiguous&from=23#d23", href, a.Text())
	}
	_, tdoc := do(t, h, httptest.NewRequest("GET", "/runs/1?tool=get_reservation_details", nil), false)
	if href, _ := tdoc.Find(`[data-testid=match]`).Attr("href"); href != "/trajectories/5?from=20#d23" {
		t.Errorf("match link without a verdict = %q, want the page that holds decision 24, /trajectories/5?from=20#d23", href)
	}
	// The source column names the file, its directories in the title.
	src := doc.Find(`[data-testid=trajectory-row] td`).Last()
	if title, _ := src.Attr("title"); src.Text() != "a.jsonl#3" || title != "../logs/2026/a.jsonl · record 3" {
		t.Errorf("source cell = %q (title %q)", src.Text(), title)
	}
	if doc.Find(`fieldset.decision-filters select[name=verdict]`).Length() != 1 {
		t.Errorf("the verdict filter is not among the decision's filters")
	}
	_, doc = do(t, h, httptest.NewRequest("GET", "/runs/1?domain=airline", nil), false)
	if n := doc.Find(`[data-testid=match]`).Length(); n != 0 {
		t.Errorf("an unfiltered list links %d matches", n)
	}
}

func TestDecisionView(t *testing.T) {
	h := testRouter(runStore(t), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	cards := doc.Find(`[data-testid=decision]`)
	// sample: call at 2, reply at 5, call at 5.
	if cards.Length() != 3 {
		t.Fatalf("cards = %d, want 3", cards.Length())
	}
	first := cards.Eq(0)
	if id, _ := first.Attr("id"); id != "d0" {
		t.Errorf("first card id = %q", id)
	}
	if s := first.Find(`[data-testid=visible-pane]`).Text(); !strings.Contains(s, "cancel NO6JO3 <script>alert(1)</script>") {
		t.Errorf("visible pane = %q", s)
	}
	act := first.Find(`[data-testid=action-pane]`)
	if s := act.Text(); !strings.Contains(s, `"reservation_id": "NO6JO3"`) || !strings.Contains(s, "Error: <script>alert(2)</script>") {
		t.Errorf("action pane = %q", s)
	}
	if act.Find(`.badge.fail`).Length() == 0 {
		t.Errorf("no error badge on the failed observation")
	}
	hid := first.Find(`[data-testid=hidden-pane]`).Text()
	if !strings.Contains(hid, "You are mia_li_3668") || strings.Contains(hid, "secret_db_row") || strings.Contains(hid, "certificate_7504069") {
		t.Errorf("first decision's hidden pane = %q (want the instruction only: the db state is from message 4, the hint at 4)", hid)
	}
	third := cards.Eq(2)
	hid = third.Find(`[data-testid=hidden-pane]`).Text()
	if !strings.Contains(hid, "certificate_7504069") || !strings.Contains(hid, "secret_db_row") {
		t.Errorf("third decision's hidden pane = %q", hid)
	}
	if s := third.Find(`[data-testid=visible-pane]`).Text(); strings.Contains(s, "certificate_7504069") {
		t.Errorf("visible pane shows the hidden hint: %q", s)
	}
	if third.Find(`[data-testid=args-invalid]`).Length() != 1 {
		t.Errorf("invalid arguments not flagged")
	}
	if s := cards.Eq(1).Find(`.decision-head`).Text(); !strings.Contains(s, "text reply") || !strings.Contains(s, "decision 2 of 3") {
		t.Errorf("reply card head = %q", s)
	}
	if strings.Contains(rec.Body.String(), "<script>alert") {
		t.Errorf("log content rendered as markup")
	}
}

// TestLongTrajectory: 5,000 messages open with 20 cards, bounded reads, and
// a lazy next page.
func TestLongTrajectory(t *testing.T) {
	tr := &grounding.Trajectory{ID: "long"}
	for i := 0; i < 5000; i += 2 {
		tr.Messages = append(tr.Messages,
			grounding.Message{Index: i, Role: "user", Content: strings.Repeat("x", 3000)},
			grounding.Message{Index: i + 1, Role: "assistant", Content: fmt.Sprint("reply ", i)})
	}
	st := trajectoryStore(t, tr)
	inner := st.MessagesFn
	st.MessagesFn = func(id int64, from, to int) ([]grounding.Message, error) {
		if to-from > maxSpan {
			t.Errorf("Messages(%d, %d) reads %d messages", from, to, to-from)
		}
		return inner(id, from, to)
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	if n := doc.Find(`[data-testid=decision]`).Length(); n != decisionsPerPage {
		t.Errorf("cards = %d, want %d", n, decisionsPerPage)
	}
	more := doc.Find(`[data-testid=more-decisions]`)
	if v, _ := more.Attr("hx-get"); v != "/trajectories/5/decisions?from=20" {
		t.Errorf("more = %q", v)
	}
	if v, _ := more.Find("a").Attr("href"); v != "/trajectories/5?from=20#d20" {
		t.Errorf("fallback = %q", v)
	}
	if rec.Body.Len() > 2<<20 {
		t.Errorf("page is %d bytes", rec.Body.Len())
	}
	// Long user messages are cut with a "show all".
	if doc.Find(`[data-testid=show-all]`).Length() == 0 {
		t.Errorf("no show-all on 3,000-character messages")
	}
	last := doc.Find(`[data-testid=decision]`).Last()
	if s := last.Find(`[data-testid=earlier]`).Text(); !strings.Contains(s, "35 earlier messages") {
		t.Errorf("earlier button of decision 20 = %q", s)
	}

	// A link to a decision past the first page (from the queue, a review,
	// a conflict) opens the page that holds its card, so the anchor lands.
	for _, ord := range []int{0, 19, 20, 45} {
		u := decisionURL(5, ord)
		path, anchor, _ := strings.Cut(u, "#") // a browser keeps the fragment
		rec, doc := do(t, h, httptest.NewRequest("GET", path, nil), false)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d", u, rec.Code)
		}
		if doc.Find(`#`+anchor).Length() != 1 {
			t.Errorf("GET %s: no element #%s on the page", u, anchor)
		}
	}
}

// The tabs above a checked trajectory's decisions show only one verdict's
// cards, page by page, each page's links keeping the verdict.
func TestTrajectoryVerdictTabs(t *testing.T) {
	tr := &grounding.Trajectory{ID: "tabs"}
	for i := 0; i < 200; i += 2 {
		tr.Messages = append(tr.Messages,
			grounding.Message{Index: i, Role: "user", Content: "next"},
			grounding.Message{Index: i + 1, Role: "assistant", Content: fmt.Sprint("reply ", i)})
	}
	st := trajectoryStore(t, tr)
	all, _ := st.DecisionsFn(5, 0, 1<<30)
	var fails int
	for i := range all {
		all[i].Verdict = grounding.VerdictPass
		if all[i].Ordinal%3 == 0 {
			all[i].Verdict = grounding.VerdictFail
			fails++
		}
	}
	inner := st.TrajectoryFn
	st.TrajectoryFn = func(id int64) (grounding.TrajectoryHeader, error) {
		hd, err := inner(id)
		hd.EngineVersion, hd.Fail, hd.Pass = "test", fails, len(all)-fails
		return hd, err
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)

	_, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	var tabs []string
	doc.Find(`[data-testid=verdict-tab]`).Each(func(_ int, s *goquery.Selection) {
		href, _ := s.Attr("href")
		tabs = append(tabs, strings.Join(strings.Fields(s.Text()), " ")+" "+href)
	})
	want := []string{"all 100 ", "fail 34 /trajectories/5?verdict=fail", "ambiguous 0 ", "pass 66 /trajectories/5?verdict=pass"}
	if !slices.Equal(tabs, want) {
		t.Errorf("tabs = %q, want %q (the current one and empty ones are not links)", tabs, want)
	}

	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5?verdict=fail", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	cards := doc.Find(`[data-testid=decision]`)
	if cards.Length() != decisionsPerPage {
		t.Errorf("fail cards = %d, want %d", cards.Length(), decisionsPerPage)
	}
	cards.Each(func(_ int, s *goquery.Selection) {
		if v, _ := s.Find(`[data-testid=verdict]`).Attr("data-verdict"); v != "fail" {
			id, _ := s.Attr("id")
			t.Errorf("card %s has verdict %q on the fail tab", id, v)
		}
	})
	if s := doc.Find(`[data-testid=verdict-tab][aria-current=page]`).Text(); !strings.Contains(s, "fail") {
		t.Errorf("current tab = %q", s)
	}
	// decision 57 ends the page; the next fail decision is 60.
	more := doc.Find(`[data-testid=more-decisions]`)
	if v, _ := more.Attr("hx-get"); v != "/trajectories/5/decisions?verdict=fail&from=60" {
		t.Errorf("more = %q", v)
	}
	if v, _ := more.Find("a").Attr("href"); v != "/trajectories/5?verdict=fail&from=60#d60" {
		t.Errorf("fallback = %q", v)
	}
	rec, doc = do(t, h, httptest.NewRequest("GET", "/trajectories/5/decisions?verdict=fail&from=60", nil), true)
	if n := doc.Find(`[data-testid=decision]`).Length(); rec.Code != 200 || n != fails-decisionsPerPage {
		t.Errorf("second page: %d, %d cards; want %d", rec.Code, n, fails-decisionsPerPage)
	}
	_, doc = do(t, h, httptest.NewRequest("GET", "/trajectories/5?verdict=ambiguous", nil), false)
	if s := doc.Find(`[data-testid=decisions-empty]`).Text(); s != "No ambiguous decision in this trajectory." {
		t.Errorf("empty tab says %q", s)
	}
	if rec, _ := do(t, h, httptest.NewRequest("GET", "/trajectories/5?verdict=maybe", nil), false); rec.Code != 400 {
		t.Errorf("verdict=maybe: status %d, want 400", rec.Code)
	}
}

// A decision waiting in the queue links the review screen on it; one a
// human has settled does not.
func TestDecisionJudgeLink(t *testing.T) {
	st := runStore(t)
	inner := st.DecisionsFn
	st.DecisionsFn = func(id int64, from, limit int) ([]grounding.StoredDecision, error) {
		ds, err := inner(id, from, limit)
		for i := range ds {
			ds[i].Queued = true
			ds[i].Verdict = grounding.VerdictPass // judged
			if ds[i].Ordinal == 1 {
				ds[i].Verdict = grounding.VerdictAmbiguous // waiting
			}
		}
		return ds, err
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	_, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	links := doc.Find(`[data-testid=decision] [data-testid=judge]`)
	if href, _ := links.Attr("href"); links.Length() != 1 || href != "/review?run=1&trajectory=5&ordinal=1" {
		t.Errorf("judge links = %d, first %q; want one, to /review?run=1&trajectory=5&ordinal=1", links.Length(), href)
	}
	if id, _ := links.Closest(`[data-testid=decision]`).Attr("id"); id != "d1" {
		t.Errorf("the judge link is on card %q, want d1", id)
	}
	// Waiting in the queue, it is not offered to the queue again; a
	// judged one can be sent back.
	if doc.Find(`#d1 [data-testid=enqueue]`).Length() != 0 || doc.Find(`#d0 [data-testid=enqueue]`).Length() != 1 {
		t.Errorf("send-to-queue forms: d1 %d (waiting: want none), d0 %d (judged: want one)",
			doc.Find(`#d1 [data-testid=enqueue]`).Length(), doc.Find(`#d0 [data-testid=enqueue]`).Length())
	}
}

func TestFullMessage(t *testing.T) {
	tr := sample()
	tr.Messages[1].Content = strings.Repeat("y", 2500) + "END"
	h := testRouter(trajectoryStore(t, tr), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, _ := do(t, h, httptest.NewRequest("GET", "/trajectories/5/messages/1", nil), true)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "END") {
		t.Errorf("full message: %d %s", rec.Code, rec.Body)
	}
	rec, _ = do(t, h, httptest.NewRequest("GET", "/trajectories/5/messages/2?call=0", nil), true)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "reservation_id") {
		t.Errorf("call arguments: %d %s", rec.Code, rec.Body)
	}
}

// TestFullMessageTooLong: "show all" of a content longer than a page can
// hold (a multi-megabyte tool answer, call arguments, hidden entry) shows
// its start, says how much of how much, and links a download of the whole,
// which is the content exactly, as a plain-text attachment.
func TestFullMessageTooLong(t *testing.T) {
	tr := sample()
	long := "<b>" + strings.Repeat("y", showAllChars) + "END"
	tr.Messages[1].Content = long
	args := `{"note": "` + strings.Repeat("z", showAllChars) + `END"}`
	tr.Messages[2].ToolCalls[0].Arguments = json.RawMessage(args)
	hint := strings.Repeat("h", showAllChars) + "END"
	tr.Hidden[0].Content = json.RawMessage(strconv.Quote(hint))
	h := testRouter(trajectoryStore(t, tr), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	for _, tt := range []struct {
		show, raw, name, whole string
	}{
		{"/trajectories/5/messages/1", "/trajectories/5/messages/1/raw", "trajectory-5-message-1.txt", long},
		{"/trajectories/5/messages/2?call=0", "/trajectories/5/messages/2/raw?call=0", "trajectory-5-message-2-call-0.txt", args},
		{"/trajectories/5/hidden/0", "/trajectories/5/hidden/0/raw", "trajectory-5-hidden-0.txt", hint},
	} {
		rec, doc := do(t, h, httptest.NewRequest("GET", tt.show, nil), true)
		if rec.Code != 200 || strings.Contains(rec.Body.String(), "END") || rec.Body.Len() > showAllChars+4096 {
			t.Errorf("%s: %d, %d bytes, the end shown: %v", tt.show, rec.Code, rec.Body.Len(), strings.Contains(rec.Body.String(), "END"))
		}
		note := doc.Find(`[data-testid=too-long]`)
		if href, _ := note.Find("a[download]").Attr("href"); href != tt.raw || !strings.Contains(note.Text(), "the first 1,048,576 characters of 1.0 MiB") {
			t.Errorf("%s: the note %q links %q; want the size and %s", tt.show, strings.Join(strings.Fields(note.Text()), " "), href, tt.raw)
		}
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tt.raw, nil))
		if rec.Code != 200 || rec.Body.String() != tt.whole {
			t.Errorf("%s: %d, %d bytes; want the whole content (%d bytes)", tt.raw, rec.Code, rec.Body.Len(), len(tt.whole))
		}
		if got := rec.Header().Get("Content-Type"); got != "text/plain; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tt.raw, got)
		}
		if got := rec.Header().Get("Content-Disposition"); got != "attachment; filename="+tt.name {
			t.Errorf("%s: Content-Disposition %q", tt.raw, got)
		}
	}
	// A short content shows whole, with no download note.
	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5/messages/3", nil), true)
	if rec.Code != 200 || doc.Find(`[data-testid=too-long]`).Length() != 0 {
		t.Errorf("a short message: %d, note %d", rec.Code, doc.Find(`[data-testid=too-long]`).Length())
	}
	for _, path := range []string{"/trajectories/5/messages/99/raw", "/trajectories/5/messages/2/raw?call=7", "/trajectories/5/hidden/9/raw"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 404 {
			t.Errorf("%s: %d, want 404", path, rec.Code)
		}
	}
}

func TestHealth(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
	}{{nil, 200}, {errBoom, 503}} {
		st := &fakeStore{t: t, PingFn: func() error { return tt.err }}
		h := testRouter(st, &fakeSessions{}, nil, t.TempDir(), 1)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != tt.status {
			t.Errorf("ping %v: status %d, want %d", tt.err, rec.Code, tt.status)
		}
		if tt.err == nil && strings.TrimSpace(rec.Body.String()) != "ok" {
			t.Errorf("body = %q", rec.Body)
		}
		if strings.Contains(rec.Body.String(), "secret") {
			t.Errorf("health leaks the error")
		}
	}
}

var _ = http.StatusOK

// TestToolsFromProfile: a τ-bench trajectory records no tools; the checks
// took the airline profile's schemas as what the agent saw, and the page
// says so and lists them. A log's own tools are shown as its own.
func TestToolsFromProfile(t *testing.T) {
	st := runStore(t)
	header := st.TrajectoryFn
	for _, tc := range []struct {
		domain string
		tools  []grounding.Tool
		from   bool
	}{
		{"airline", nil, true},
		{"airline", []grounding.Tool{{Name: "own_tool"}}, false},
		{"shop", nil, false},
	} {
		st.TrajectoryFn = func(id int64) (grounding.TrajectoryHeader, error) {
			h, err := header(id)
			h.Domain, h.Tools = tc.domain, tc.tools
			return h, err
		}
		h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
		rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
		if rec.Code != 200 {
			t.Fatalf("%s: GET = %d", tc.domain, rec.Code)
		}
		summary := doc.Find(`[data-testid=tools] summary`).Text()
		names := doc.Find(`[data-testid=tools] li .mono.strong`).Length()
		switch {
		case tc.from:
			if !strings.Contains(summary, "given by the airline profile") || names < 5 {
				t.Errorf("%s without tools: summary %q, %d tools listed; want the airline profile's", tc.domain, summary, names)
			}
		case len(tc.tools) > 0:
			if strings.Contains(summary, "profile") || names != 1 {
				t.Errorf("%s with its own tools: summary %q, %d tools listed", tc.domain, summary, names)
			}
		default:
			if !strings.Contains(summary, "no tools recorded") || names != 0 {
				t.Errorf("%s without tools nor a profile giving them: summary %q, %d listed", tc.domain, summary, names)
			}
		}
	}
}

// TestRunSummary: the run header says what its decisions are made of and
// counts in words that agree with their numbers.
func TestRunSummary(t *testing.T) {
	at := time.Date(2026, 12, 3, 12, 15, 0, 0, time.UTC)
	got := runSummary(grounding.Run{Trajectories: 200, Successes: 84, Decisions: 2544, ToolCalls: 1164, Imports: 1, CreatedAt: at})
	for _, want := range []string{"200 trajectories", "84 successful (42%)", "2,544 decisions (1,164 tool calls, 1,380 text replies)", "1 import ·"} {
		if !strings.Contains(got, want) {
			t.Errorf("runSummary = %q, want %q in it", got, want)
		}
	}
	if got := runSummary(grounding.Run{Trajectories: 1, Decisions: 2, ToolCalls: 1, Imports: 2, CreatedAt: at}); !strings.Contains(got, "1 trajectory ·") || !strings.Contains(got, "1 text reply)") || !strings.Contains(got, "2 imports") {
		t.Errorf("runSummary of one = %q", got)
	}
}

// TestQueueRowHolders: the queue says how many annotators hold an item, in
// words ("held by 1" read like a user id).
func TestQueueRowHolders(t *testing.T) {
	for n, want := range map[int]string{0: "", 1: "held by 1 annotator", 2: "held by 2 annotators"} {
		if got := queueRow(grounding.QueueItem{Holders: n}).Held; got != want {
			t.Errorf("%d holders: %q, want %q", n, got, want)
		}
	}
}
