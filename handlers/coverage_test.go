package handlers

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
	"groundwork/views"
)

func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files in testdata")
	}
}

// fakeCoverage is an in-memory coverage store over the hand-computed pool
// of grounding's coverage tests.
type fakeCoverage struct {
	mu        sync.Mutex
	version   string
	pool      []grounding.PoolTrajectory
	poolCalls int
	scales    []grounding.Scale
	views     []grounding.CoverageView
	members   map[int64][]grounding.ViewMember
	saved     int
	// incremental: CoverageChanges answers with changed (else a whole
	// pool is needed); changeCalls counts its calls.
	incremental bool
	changed     []grounding.PoolTrajectory
	changeCalls int
	// runs, when set, replaces the default run list (newest first).
	runs []grounding.Run
}

// coverageSmallPool: K1 = read:id>respond>end:ok (t1, t2 of P1; t6 of P4),
// K2 = read:id>transfer:text>end:ok (t4 of P3), K3 with an error and a
// recovery (t3 of P2); t5 (P3) and t7 (P5) are not certified.
func coverageSmallPool() []grounding.PoolTrajectory {
	const (
		k1 = "read:id>respond>end:ok"
		k2 = "read:id>transfer:text>end:ok"
		k3 = "read:id>write:id+amount>error>recover:write:id+amount>respond>end:ok"
	)
	return []grounding.PoolTrajectory{
		{ID: 1, Run: 1, ExtID: "t1", Parent: "P1", Domain: "airline", Path: k1, Supervised: 2, Tokens: 10},
		{ID: 2, Run: 1, ExtID: "t2", Parent: "P1", Domain: "airline", Path: k1, Supervised: 2, Tokens: 30},
		{ID: 3, Run: 1, ExtID: "t3", Parent: "P2", Domain: "airline", Path: k3, Supervised: 3, Tokens: 40},
		{ID: 4, Run: 1, ExtID: "t4", Parent: "P3", Domain: "retail", Path: k2, Supervised: 2, Tokens: 20},
		{ID: 5, Run: 1, ExtID: "t5", Parent: "P3", Domain: "retail"},
		{ID: 6, Run: 1, ExtID: "t6", Parent: "P4", Domain: "retail", Path: k1, Supervised: 2, Tokens: 5},
		{ID: 7, Run: 1, ExtID: "t7", Parent: "P5", Domain: "retail"},
	}
}

func newFakeCoverage() *fakeCoverage {
	return &fakeCoverage{version: "v1", pool: coverageSmallPool(), scales: grounding.DefaultScales(), members: map[int64][]grounding.ViewMember{}}
}

func (f *fakeCoverage) Runs(context.Context) ([]grounding.Run, error) {
	if f.runs != nil {
		return f.runs, nil
	}
	return []grounding.Run{{ID: 1, Name: "demo", Trajectories: 7}, {ID: 2, Name: "empty"}}, nil
}
func (f *fakeCoverage) CoverageVersion(_ context.Context, runs []int64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.version + fmt.Sprint(runs), nil
}
func (f *fakeCoverage) CoveragePool(_ context.Context, runs []int64) ([]grounding.PoolTrajectory, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.poolCalls++
	var out []grounding.PoolTrajectory
	for _, t := range f.pool {
		if slices.Contains(runs, t.Run) {
			out = append(out, t)
		}
	}
	return out, f.version + fmt.Sprint(runs), nil
}
func (f *fakeCoverage) CoverageChanges(_ context.Context, runs []int64, since string) ([]grounding.PoolTrajectory, string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changeCalls++
	if !f.incremental {
		return nil, "", false, nil
	}
	return f.changed, f.version + fmt.Sprint(runs), true, nil
}
func (f *fakeCoverage) CoverageScales(context.Context) ([]grounding.Scale, error) {
	return slices.Clone(f.scales), nil
}
func (f *fakeCoverage) SaveCoverageScale(_ context.Context, s grounding.Scale) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("store: save scale: %w", err)
	}
	f.scales = append(f.scales, s)
	return nil
}
func (f *fakeCoverage) DeleteCoverageScale(_ context.Context, name string) error {
	i := slices.IndexFunc(f.scales, func(s grounding.Scale) bool { return strings.EqualFold(s.Name, name) })
	if i < 0 {
		return grounding.ErrNotFound
	}
	f.scales = slices.Delete(f.scales, i, i+1)
	return nil
}
func (f *fakeCoverage) SaveView(_ context.Context, v grounding.CoverageView, ms []grounding.ViewMember) (grounding.CoverageView, error) {
	if err := grounding.ValidateViewName(v.Name); err != nil {
		return v, err
	}
	for _, old := range f.views {
		if old.Name == v.Name {
			return v, fmt.Errorf("store: save view %q: run \"demo\" already has a view with this name: %w", v.Name, grounding.ErrConflict)
		}
	}
	f.saved++
	v.ID = int64(40 + f.saved)
	v.Trajectories = len(ms)
	v.CreatedAt = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	f.views = append(f.views, v)
	f.members[v.ID] = ms
	return v, nil
}
func (f *fakeCoverage) Views(context.Context, []int64) ([]grounding.CoverageView, error) {
	return slices.Clone(f.views), nil
}
func (f *fakeCoverage) View(_ context.Context, id int64) (grounding.CoverageView, error) {
	for _, v := range f.views {
		if v.ID == id {
			return v, nil
		}
	}
	return grounding.CoverageView{}, grounding.ErrNotFound
}
func (f *fakeCoverage) ViewMembers(_ context.Context, id int64) ([]grounding.ViewMember, error) {
	return f.members[id], nil
}

func coverageRouter(st *fakeCoverage, user *grounding.User) (http.Handler, *Coverage) {
	h := NewCoverage(quietLog(), st)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if user != nil {
				r = r.WithContext(WithUser(r.Context(), *user))
			}
			next.ServeHTTP(w, r)
		})
	})
	r.Get("/coverage", h.Show)
	r.Get("/coverage/deficits", h.Deficits)
	r.Get("/coverage/selection", h.Selection)
	r.Get("/coverage/trajectories", h.Trajectories)
	r.Get("/coverage/views/{viewID}", h.View)
	r.Post("/coverage/views", h.SaveView)
	r.Post("/coverage/scales", h.SaveScale)
	r.Post("/coverage/scales/delete", h.DeleteScale)
	return r, h
}

func postForm(path string, v url.Values) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func TestCoveragePages(t *testing.T) {
	tests := []struct {
		name   string
		path   string
		status int
		// partial: an htmx request gets a fragment (no layout).
		partial bool
		testid  string
		want    []string // substrings of the body, both modes
	}{
		{"page", "/coverage?run=1&scale=8B", 200, true, "coverage-region",
			[]string{"demo · 7 trajectories in 1 run", "8B → target depth 3", "heatmap-transitions", "heatmap-horizon", "heatmap-domain-action",
				"2 of 3 canonical paths are below the target depth 3 (total deficit 4)", "80%", "20%"}},
		{"newest run by default", "/coverage", 200, true, "coverage-region", []string{"demo · 7 trajectories"}},
		{"empty run", "/coverage?run=2", 200, true, "coverage-no-certified", []string{"empty · 0 trajectories", "This pool has no trajectories yet."}},
		{"two runs", "/coverage?run=2&run=1", 200, true, "coverage-region", []string{"demo + empty · 7 trajectories in 2 runs"}},
		{"other scale", "/coverage?run=1&scale=30b-a3b", 200, true, "coverage-region", []string{"30B-A3B → target depth 8", "total deficit 19"}},
		{"unknown scale", "/coverage?run=1&scale=7B", 422, true, "",
			[]string{"Unknown scale &#34;7B&#34;: the configured scales are 1.7B, 4B, 8B, 14B, 30B-A3B."}},
		{"unknown run", "/coverage?run=9", 404, true, "", []string{"There is no run 9."}},
		{"bad run", "/coverage?run=x", 400, true, "", []string{"run must be a run id"}},
		{"deficits filtered", "/coverage/deficits?run=1&scale=8B&atom=recover&atom=error:write", 200, true, "deficits",
			[]string{"1 path below the target has recover and error:write.", "recover:write:id+amount", "t3"}},
		{"selection", "/coverage/selection?run=1&scale=8B&budget=2", 200, true, "selection-result",
			[]string{"canonical paths covered", "structured stages:", "breadth", "1 − 2/4 = 0.50", "save-view"}},
		{"selection budget zero", "/coverage/selection?run=1&scale=8B&budget=0", 422, true, "selection-error",
			[]string{"The budget must be at least 1 parent interaction, not 0."}},
		{"selection budget over pool", "/coverage/selection?run=1&scale=8B&budget=5", 422, true, "selection-error",
			[]string{"The budget of 5 parent interactions exceeds the 4 with a certified trajectory in this pool."}},
		{"selection budget text", "/coverage/selection?run=1&scale=8B&budget=many", 422, true, "selection-error",
			[]string{"The budget must be a whole number of parent interactions, not &#34;many&#34;."}},
		{"selection unknown scale", "/coverage/selection?run=1&scale=7B&budget=2", 422, true, "", []string{"Unknown scale"}},
		{"cell trajectories", "/coverage/trajectories?run=1&scale=8B&from=read:id&to=respond", 200, false, "coverage-trajectories",
			[]string{"3 certified trajectories in demo", "/trajectories/1", "/trajectories/2", "/trajectories/6", "read:id → respond"}},
		{"domain cell", "/coverage/trajectories?run=1&scale=8B&domain=retail&action=transfer", 200, false, "coverage-trajectories",
			[]string{"1 certified trajectory in demo", "/trajectories/4"}},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				h, _ := coverageRouter(newFakeCoverage(), researcher)
				rec, doc := do(t, h, httptest.NewRequest(http.MethodGet, tt.path, nil), m.htmx)
				if rec.Code != tt.status {
					t.Fatalf("GET %s = %d, want %d\n%s", tt.path, rec.Code, tt.status, rec.Body)
				}
				if got := rec.Header().Get("Vary"); !strings.Contains(got, HXRequest) {
					t.Errorf("Vary = %q", got)
				}
				wantHTML := !m.htmx || !tt.partial
				if strings.HasPrefix(tt.path, "/coverage/deficits") {
					wantHTML = false
				}
				if hasHTML(rec) != wantHTML {
					t.Errorf("GET %s (htmx %v): layout present = %v, want %v", tt.path, m.htmx, hasHTML(rec), wantHTML)
				}
				if tt.testid != "" && doc.Find(`[data-testid="`+tt.testid+`"]`).Length() == 0 {
					t.Errorf("GET %s: no data-testid=%s", tt.path, tt.testid)
				}
				for _, w := range tt.want {
					if !strings.Contains(rec.Body.String(), w) {
						t.Errorf("GET %s: body lacks %q", tt.path, w)
					}
				}
				if m.htmx && tt.status >= 400 && tt.testid == "" && rec.Header().Get(HXRetarget) != "#alerts" {
					t.Errorf("GET %s (htmx) error not retargeted to #alerts", tt.path)
				}
			})
		}
	}
}

func TestCoveragePushURL(t *testing.T) {
	h, _ := coverageRouter(newFakeCoverage(), researcher)
	rec, _ := do(t, h, httptest.NewRequest(http.MethodGet, "/coverage/deficits?run=1&scale=8B&atom=recover", nil), true)
	if got, want := rec.Header().Get(HXPushURL), "/coverage?atom=recover&run=1&scale=8B"; got != want {
		t.Errorf("deficits HX-Push-Url = %q, want %q", got, want)
	}
	rec, _ = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=1&scale=4B", nil), true)
	if got, want := rec.Header().Get(HXPushURL), "/coverage?run=1&scale=4B"; got != want {
		t.Errorf("page HX-Push-Url = %q, want %q", got, want)
	}
}

// TestCoverageCache: the pool is loaded once while the version stays, again
// when it moves.
func TestCoverageCache(t *testing.T) {
	st := newFakeCoverage()
	h, _ := coverageRouter(st, researcher)
	for _, path := range []string{"/coverage?run=1&scale=8B", "/coverage?run=1&scale=4B", "/coverage/selection?run=1&scale=8B&budget=2",
		"/coverage/trajectories?run=1&scale=8B&horizon=2&recoveries=0"} {
		if rec, _ := do(t, h, httptest.NewRequest(http.MethodGet, path, nil), false); rec.Code != 200 {
			t.Fatalf("GET %s = %d", path, rec.Code)
		}
	}
	if st.poolCalls != 1 {
		t.Errorf("CoveragePool called %d times for one version, want 1", st.poolCalls)
	}
	st.mu.Lock()
	st.version = "v2" // a verdict changed a mask
	st.pool[0].Path = ""
	st.mu.Unlock()
	rec, _ := do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=1&scale=8B", nil), false)
	if st.poolCalls != 2 {
		t.Errorf("CoveragePool called %d times after the version moved, want 2", st.poolCalls)
	}
	if !strings.Contains(rec.Body.String(), "trajectories in 1 run") || !strings.Contains(rec.Body.String(), `data-testid="fig-certified"><dt>certified</dt><dd>4</dd>`) {
		t.Errorf("the page does not show the new pool (4 certified)")
	}

	// Verdicts only: the cached pool is patched with the changed
	// trajectories, without reading the whole pool.
	st.mu.Lock()
	st.version, st.incremental = "v3", true
	st.changed = []grounding.PoolTrajectory{{ID: 1, Path: "read:id>respond>end:ok", Supervised: 2, Tokens: 10}, {ID: 6}}
	st.mu.Unlock()
	rec, _ = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=1&scale=8B", nil), false)
	if st.poolCalls != 2 || st.changeCalls != 2 {
		t.Errorf("after a verdict: CoveragePool %d calls, CoverageChanges %d, want 2 and 2", st.poolCalls, st.changeCalls)
	}
	if !strings.Contains(rec.Body.String(), `data-testid="fig-certified"><dt>certified</dt><dd>4</dd>`) {
		t.Errorf("the patched pool does not have 4 certified trajectories (t1 back, t6 gone)")
	}
}

func TestCoverageSaveView(t *testing.T) {
	form := url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"2"}, "name": {"core-8B"}}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			st := newFakeCoverage()
			h, _ := coverageRouter(st, researcher)
			rec, _ := do(t, h, postForm("/coverage/views", form), m.htmx)
			if m.htmx {
				if rec.Code != http.StatusNoContent || rec.Header().Get(HXRedirect) != "/coverage/views/41" {
					t.Fatalf("POST (htmx) = %d, HX-Redirect %q", rec.Code, rec.Header().Get(HXRedirect))
				}
			} else if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/coverage/views/41" {
				t.Fatalf("POST = %d, Location %q\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
			}
			if len(st.views) != 1 {
				t.Fatalf("saved %d views", len(st.views))
			}
			v := st.views[0]
			if v.Name != "core-8B" || v.Scale != (grounding.Scale{Name: "8B", Depth: 3}) || v.Budget != 2 || v.Method != grounding.MethodStructured ||
				!slices.Equal(v.Runs, []int64{1}) || v.CreatedBy != researcher.ID {
				t.Errorf("saved view %+v", v)
			}
			var parents []string
			for _, mb := range st.members[v.ID] {
				parents = append(parents, mb.Parent+":"+mb.Stage)
			}
			if !slices.Equal(parents, []string{"P2:breadth", "P3:breadth"}) {
				t.Errorf("members' parents = %v, want P2 and P3 by breadth", parents)
			}

			// The view page: weights next to per-row averaging.
			rec, doc := do(t, h, httptest.NewRequest(http.MethodGet, "/coverage/views/41", nil), m.htmx)
			if rec.Code != 200 || doc.Find(`[data-testid="weight-histogram"]`).Length() != 1 || doc.Find(`[data-testid="member-row"]`).Length() != 2 {
				t.Fatalf("GET view = %d\n%s", rec.Code, rec.Body)
			}
			if doc.Find(`[data-testid="scheme-row"]`).Length() != 3 || !strings.Contains(rec.Body.String(), "ceil(b/4)") {
				t.Errorf("view page lacks the schemes or the token count")
			}
		})
	}
}

func TestCoverageSaveViewRefused(t *testing.T) {
	tests := []struct {
		name   string
		form   url.Values
		status int
		code   string
		want   string
	}{
		{"existing name", url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"2"}, "name": {"taken"}}, 409, "conflict",
			"A view named &#34;taken&#34; already exists in run demo; nothing was saved. Choose another name."},
		{"unknown scale", url.Values{"run": {"1"}, "scale": {"9B"}, "budget": {"2"}, "name": {"x"}}, 422, "invalid", "Unknown scale &#34;9B&#34;"},
		{"budget zero", url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"0"}, "name": {"x"}}, 422, "invalid", "at least 1 parent interaction"},
		{"budget over pool", url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"99"}, "name": {"x"}}, 422, "invalid", "exceeds the 4 with a certified trajectory"},
		{"blank name", url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"2"}, "name": {"  "}}, 422, "invalid", "A view needs a name."},
		{"slash in name", url.Values{"run": {"1"}, "scale": {"8B"}, "budget": {"2"}, "name": {"a/b"}}, 422, "invalid", "may not contain"},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				st := newFakeCoverage()
				st.views = []grounding.CoverageView{{ID: 9, Name: "taken", Runs: []int64{1}}}
				h, _ := coverageRouter(st, researcher)
				rec, doc := do(t, h, postForm("/coverage/views", tt.form), m.htmx)
				if rec.Code != tt.status {
					t.Fatalf("POST = %d, want %d\n%s", rec.Code, tt.status, rec.Body)
				}
				if hasHTML(rec) == m.htmx {
					t.Errorf("layout present = %v for htmx %v", hasHTML(rec), m.htmx)
				}
				e := doc.Find(`[data-testid="save-view-error"]`)
				if e.Length() != 1 || e.AttrOr("data-status", "") != tt.code {
					t.Errorf("no save-view-error with status %s", tt.code)
				}
				if !strings.Contains(rec.Body.String(), tt.want) {
					t.Errorf("body lacks %q:\n%s", tt.want, rec.Body)
				}
				if st.saved != 0 || len(st.views) != 1 {
					t.Errorf("something was saved: %d", st.saved)
				}
			})
		}
	}
}

func TestCoverageScales(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			st := newFakeCoverage()
			h, _ := coverageRouter(st, researcher)
			rec, _ := do(t, h, postForm("/coverage/scales", url.Values{"name": {"70B"}, "depth": {"12"}, "back": {"/coverage?run=1"}}), m.htmx)
			if m.htmx {
				if rec.Header().Get(HXRedirect) != "/coverage?run=1" {
					t.Errorf("POST scale (htmx) HX-Redirect = %q", rec.Header().Get(HXRedirect))
				}
			} else if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/coverage?run=1" {
				t.Errorf("POST scale = %d %q", rec.Code, rec.Header().Get("Location"))
			}
			if len(st.scales) != 6 {
				t.Errorf("scales = %v", st.scales)
			}
			rec, _ = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=1&scale=70B", nil), m.htmx)
			if rec.Code != 200 || !strings.Contains(rec.Body.String(), "70B → target depth 12") {
				t.Errorf("GET with the new scale = %d", rec.Code)
			}
			for _, bad := range []url.Values{{"name": {"x"}, "depth": {"0"}}, {"name": {""}, "depth": {"2"}}, {"name": {"x"}, "depth": {"two"}}} {
				rec, doc := do(t, h, postForm("/coverage/scales", bad), m.htmx)
				if rec.Code != 422 || doc.Find(`[data-testid="scale-error"]`).Length() != 1 {
					t.Errorf("POST scale %v = %d, want 422 with a message", bad, rec.Code)
				}
			}
			rec, _ = do(t, h, postForm("/coverage/scales/delete", url.Values{"name": {"70b"}, "back": {"https://evil.example/"}}), m.htmx)
			if len(st.scales) != 5 {
				t.Errorf("after delete scales = %v", st.scales)
			}
			if loc := rec.Header().Get("Location") + rec.Header().Get(HXRedirect); loc != "/coverage" {
				t.Errorf("delete went back to %q, want /coverage", loc)
			}
			rec, _ = do(t, h, postForm("/coverage/scales/delete", url.Values{"name": {"nope"}}), m.htmx)
			if rec.Code != 404 {
				t.Errorf("delete unknown scale = %d", rec.Code)
			}
		})
	}
}

// TestCoverageTransitionsSVG compares the transitions heatmap of the small
// pool at 8B with a golden SVG (go test ./handlers -update rewrites it).
func TestCoverageTransitionsSVG(t *testing.T) {
	p := grounding.NewPool(coverageSmallPool())
	rep := grounding.Analyze(p, grounding.Scale{Name: "8B", Depth: 3})
	h := transitionsHeatmap(rep, url.Values{"run": {"1"}, "scale": {"8B"}})
	var buf bytes.Buffer
	if err := views.HeatmapSVG(h).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	for _, want := range []string{"<title>read:id → respond: 3 certified trajectories over 1 path</title>",
		"write:id+amount → error: 1 certified trajectory over 1 path; below the target depth 3 (deficit 2)",
		`class="hm-deficit"`, `href="/coverage/trajectories?from=read%3Aid&amp;run=1&amp;scale=8B&amp;to=respond"`} {
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	path := filepath.Join("testdata", "coverage_transitions.golden.svg")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./handlers -run TestCoverageTransitionsSVG -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("transitions SVG differs from %s (run with -update to accept):\n%s", path, got)
	}
}

func TestHeatLegend(t *testing.T) {
	for _, tt := range []struct {
		max  int
		want []string
	}{
		{0, []string{"0"}},
		{1, []string{"0", "1"}},
		{5, []string{"0", "1", "2", "3", "4", "5"}},
		{100, []string{"0", "1–2", "3–6", "7–15", "16–39", "40–99", "100"}},
	} {
		var got []string
		for _, b := range heatLegend(tt.max) {
			got = append(got, b.Label)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("heatLegend(%d) = %v, want %v", tt.max, got, tt.want)
		}
	}
	if heatBin(100, 100) != 6 || heatBin(1, 100) != 1 || heatBin(0, 100) != 0 {
		t.Errorf("heatBin edges wrong")
	}
}

// Without a run in the query, coverage opens on the newest run that has
// certified trajectories and says which newer run it passed over; a pool
// without any certified trajectory says so instead of drawing empty maps.
func TestCoverageDefaultPool(t *testing.T) {
	f := newFakeCoverage()
	// The newest run, "fresh", holds only t5 and t7, neither certified.
	for i := range f.pool {
		if f.pool[i].ExtID == "t5" || f.pool[i].ExtID == "t7" {
			f.pool[i].Run = 2
		}
	}
	f.runs = []grounding.Run{{ID: 2, Name: "fresh", Trajectories: 2}, {ID: 1, Name: "demo", Trajectories: 5, Certified: 5}}
	h, _ := coverageRouter(f, researcher)
	rec, doc := do(t, h, httptest.NewRequest(http.MethodGet, "/coverage", nil), false)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body)
	}
	if got := doc.Find("[data-testid=pool]").Text(); !strings.HasPrefix(got, "demo · 5 trajectories") {
		t.Errorf("default pool = %q, want demo, the newest run with certified trajectories", got)
	}
	if got := doc.Find("[data-testid=pool-note]").Text(); !strings.Contains(got, "showing demo, the newest run with certified trajectories (fresh, newer, has none yet)") {
		t.Errorf("pool note = %q", got)
	}
	if got := strings.Join(strings.Fields(doc.Find("[data-testid=pool-picker] label").First().Text()), " "); got != "fresh 2 · 0 certified" {
		t.Errorf("run choice = %q, want its trajectories and certified ones", got)
	}
	if doc.Find("[data-testid=heatmap-transitions]").Length() != 1 {
		t.Error("the default pool has no heatmap")
	}

	// Asked for explicitly, the uncertified run gets a plain explanation and
	// no empty heatmaps, deficit table or selection simulator.
	rec, doc = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=2", nil), false)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body)
	}
	if got := doc.Find("[data-testid=coverage-no-certified]").Text(); !strings.Contains(got, "None of the 2 trajectories in this pool is certified yet.") {
		t.Errorf("no-certified message = %q", got)
	}
	if n := doc.Find("[data-testid^=heatmap-], [data-testid=deficits], [data-testid=selection]").Length(); n != 0 {
		t.Errorf("%d empty heatmaps or panels shown for a pool without certified trajectories", n)
	}
	if doc.Find("[data-testid=pool-note]").Length() != 0 {
		t.Error("a chosen pool carries the default-pool note")
	}

	// No run has certified trajectories: the newest, with the explanation.
	f.runs[1].Certified = 0
	_, doc = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage", nil), false)
	if got := doc.Find("[data-testid=pool]").Text(); !strings.HasPrefix(got, "fresh") || doc.Find("[data-testid=coverage-no-certified]").Length() != 1 {
		t.Errorf("all uncertified: pool %q, want the newest run with the explanation", got)
	}
}

// The selection simulator opened on its own (a reload, a new tab, no
// JavaScript) names its pool and leads back to the pool's coverage page;
// the htmx swap stays the bare panel. Its figures use thousands separators
// and spaced middle dots.
func TestCoverageSelectionStandalone(t *testing.T) {
	h, _ := coverageRouter(newFakeCoverage(), researcher)
	const path = "/coverage/selection?run=1&scale=8B&budget=2"
	rec, doc := do(t, h, httptest.NewRequest(http.MethodGet, path, nil), false)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body)
	}
	if href := doc.Find("[data-testid=selection-back]").AttrOr("href", ""); href != "/coverage?run=1&scale=8B" {
		t.Errorf("back link = %q, want the pool's coverage page", href)
	}
	if got := doc.Find("h1").Text(); got != "Selection: demo" {
		t.Errorf("heading = %q", got)
	}
	if got := doc.Find("[data-testid=selection-pool]").Text(); got != "demo" {
		t.Errorf("result names pool %q, want demo", got)
	}
	stages := strings.Join(strings.Fields(doc.Find("[data-testid=selection-result] p.small").First().Text()), " ")
	if !strings.HasPrefix(stages, "structured stages: ") || strings.Contains(stages, "·") && !strings.Contains(stages, " · ") {
		t.Errorf("stages = %q, want spaced middle dots", stages)
	}
	rec, doc = do(t, h, httptest.NewRequest(http.MethodGet, path, nil), true)
	if rec.Code != 200 || doc.Find("[data-testid=selection-back]").Length() != 0 || doc.Find("#selection").Length() != 1 {
		t.Errorf("htmx selection: status %d, want the bare panel", rec.Code)
	}
}

func TestCovDecimal(t *testing.T) {
	for x, want := range map[float64]string{6594.24: "6,594.2", 18.2: "18.2", 0: "0.0", 1234567.89: "1,234,567.9", -1500.5: "-1,500.5"} {
		if got := covDecimal(x); got != want {
			t.Errorf("covDecimal(%v) = %q, want %q", x, got, want)
		}
	}
}

// A domain × action cell counts decisions; the trajectories it links to
// say so, with both numbers, so the two are not read as one count.
func TestCoverageDomainActionUnit(t *testing.T) {
	h, _ := coverageRouter(newFakeCoverage(), researcher)
	_, doc := do(t, h, httptest.NewRequest(http.MethodGet, "/coverage/trajectories?run=1&scale=8B&domain=airline&action=read", nil), false)
	got := doc.Find("[data-testid=cell-unit]").Text()
	if !strings.Contains(got, "counts decisions: its cell is 3 certified decisions of action read in domain airline") ||
		!strings.Contains(got, "This list counts trajectories: the 3 certified trajectories that hold them.") {
		t.Errorf("unit note = %q", got)
	}
	_, doc = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage/trajectories?run=1&scale=8B&from=read:id&to=respond", nil), false)
	if doc.Find("[data-testid=cell-unit]").Length() != 0 {
		t.Error("a transitions cell carries the decisions note")
	}
	_, doc = do(t, h, httptest.NewRequest(http.MethodGet, "/coverage?run=1&scale=8B", nil), false)
	if got := doc.Find("[data-testid=heatmap-domain-action] figcaption").Text(); !strings.Contains(got, "click for the trajectories that hold them") {
		t.Errorf("domain × action caption = %q", got)
	}
}
