package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
)

// fakeSWE implements sweStore over fixed data.
type fakeSWE struct {
	runs      []grounding.Run
	outcomes  map[int64][]grounding.SWEOutcome
	subjects  map[int64]grounding.SWESubject
	instances map[string]*grounding.SWEInstance
	refreshed []int64
	loads     int
	stamp     int
	err       error
}

func (f *fakeSWE) SWERuns(context.Context) ([]grounding.Run, error) { return f.runs, f.err }
func (f *fakeSWE) Run(_ context.Context, id int64) (grounding.Run, error) {
	for _, r := range f.runs {
		if r.ID == id {
			return r, f.err
		}
	}
	return grounding.Run{}, fmt.Errorf("run %d: %w", id, grounding.ErrNotFound)
}
func (f *fakeSWE) SWEStamp(_ context.Context, id int64) (string, error) {
	return fmt.Sprint(len(f.outcomes[id]), f.stamp), f.err
}
func (f *fakeSWE) RefreshSWEDiagnostics(_ context.Context, id int64) (int, error) {
	f.refreshed = append(f.refreshed, id)
	return 0, f.err
}
func (f *fakeSWE) SWEOutcomes(_ context.Context, id int64, after string, limit int) ([]grounding.SWEOutcome, string, error) {
	f.loads++
	var out []grounding.SWEOutcome
	for _, o := range f.outcomes[id] {
		if o.ExtID > after {
			out = append(out, o)
		}
	}
	next := ""
	if limit > 0 && len(out) > limit {
		out, next = out[:limit], out[limit-1].ExtID
	}
	return out, next, f.err
}
func (f *fakeSWE) SWESubject(_ context.Context, id int64) (grounding.SWESubject, error) {
	s, ok := f.subjects[id]
	if !ok {
		return s, fmt.Errorf("trajectory %d: %w", id, grounding.ErrNotFound)
	}
	return s, f.err
}
func (f *fakeSWE) SWEInstance(_ context.Context, id string) (*grounding.SWEInstance, error) {
	in, ok := f.instances[id]
	if !ok {
		return nil, fmt.Errorf("instance %q: %w", id, grounding.ErrNotFound)
	}
	return in, f.err
}
func (f *fakeSWE) SWEInstances(_ context.Context, after string, limit int) ([]grounding.SWEInstanceSummary, string, error) {
	var out []grounding.SWEInstanceSummary
	for id, in := range f.instances {
		if id > after {
			ev := grounding.SWEEvidenceOf(in)
			out = append(out, grounding.SWEInstanceSummary{InstanceID: id, Repo: in.Repo, Files: in.PatchFiles(),
				LOCTokens: ev.LOCTokens, REPTokens: ev.REPTokens, PATCHTokens: ev.PATCHTokens})
		}
	}
	return out, "", f.err
}

const sweTestPatch = "diff --git a/pkg/calc.py b/pkg/calc.py\n--- a/pkg/calc.py\n+++ b/pkg/calc.py\n@@ -1,2 +1,2 @@\n def div(a, b):\n-    return a / b\n+    return a / b if b else 0\n"

// sweSubject is a small mini-swe-agent-shaped trajectory: reproduce, fix,
// re-run, submit.
func sweSubject() grounding.SWESubject {
	steps := []struct{ cmd, out string }{
		{"ls", "pkg"},
		{"cat <<'EOF' > reproduce.py\nprint(1/0)\nEOF", ""},
		{"python reproduce.py", "Traceback (most recent call last):\nZeroDivisionError: division by zero"},
		{"sed -i 's/a \\/ b/a \\/ b if b else 0/' pkg/calc.py", ""},
		{"python reproduce.py", "<script>alert(1)</script>"},
		{"echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff --cached", sweTestPatch},
	}
	t := &grounding.Trajectory{ID: "acme__calc-1", Domain: "swe", Source: grounding.Source{Format: "mini-swe-agent", File: "calc.traj.json"},
		Messages: []grounding.Message{{Role: grounding.RoleUser, Content: "fix div"}}}
	for i, s := range steps {
		id := fmt.Sprint("c", i)
		args, _ := json.Marshal(map[string]string{"command": s.cmd})
		t.Messages = append(t.Messages,
			grounding.Message{Role: grounding.RoleAssistant, ToolCalls: []grounding.ToolCall{{ID: id, Name: "bash", Arguments: args}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: id, Name: "bash", Content: s.out})
	}
	t.Meta, _ = json.Marshal(map[string]any{"instance_id": "acme__calc-1", "exit_status": "Submitted", "submission": sweTestPatch, "scaffold": "mini-swe-agent"})
	yes := true
	return grounding.SWESubject{ID: 7, RunID: 1, RunName: "base", Trajectory: t,
		Instance: &grounding.SWEInstance{InstanceID: "acme__calc-1", Repo: "acme/calc", Patch: sweTestPatch, FailToPass: []string{"t::test"}},
		Resolved: &yes}
}

func sweFake() *fakeSWE {
	loc, yes, no := 1.0, true, false
	half := 0.5
	return &fakeSWE{
		runs: []grounding.Run{{ID: 2, Name: "grpo", Trajectories: 2}, {ID: 1, Name: "base", Trajectories: 2}}, // newest first
		outcomes: map[int64][]grounding.SWEOutcome{
			1: {
				{TrajectoryID: 7, ExtID: "acme__calc-1", InstanceID: "acme__calc-1", Steps: 6, Stages: "LRRPrR", Localization: &half, Reproduction: &yes, Verification: &yes, Completed: true, Resolved: &yes},
				{TrajectoryID: 8, ExtID: "acme__calc-2", InstanceID: "acme__calc-2", Steps: 2, Stages: "LL", Reproduction: &no, Completed: false},
			},
			2: {
				{TrajectoryID: 9, ExtID: "acme__calc-1", InstanceID: "acme__calc-1", Steps: 4, Stages: "LRPr", Localization: &loc, Reproduction: &yes, Verification: &no, Completed: true},
				{TrajectoryID: 10, ExtID: "acme__calc-3", InstanceID: "acme__calc-3", Steps: 3, Stages: "LPP", Reproduction: &no, Verification: &no, Completed: true},
			},
		},
		subjects:  map[int64]grounding.SWESubject{7: sweSubject()},
		instances: map[string]*grounding.SWEInstance{"acme__calc-1": sweSubject().Instance},
	}
}

func sweRouter(st sweStore) http.Handler {
	h := NewSWE(quietLog(), st)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), *researcher)))
		})
	})
	r.Get("/swe", h.Compare)
	r.Get("/swe/runs/{runID}", h.Run)
	r.Get("/swe/trajectories/{trajectoryID}", h.Trajectory)
	r.Get("/swe/trajectories/{trajectoryID}/steps/{step}", h.Step)
	r.Get("/swe/instances", h.Instances)
	r.Get("/swe/instances/{instanceID}", h.Instance)
	return r
}

func TestSWEPages(t *testing.T) {
	tests := []struct {
		name         string
		path         string
		store        func() *fakeSWE
		status       int
		fragment     bool // an htmx request gets a fragment
		fragmentOnly bool
		testid       string
	}{
		{name: "compare default", path: "/swe", store: sweFake, status: 200, fragment: true, testid: "swe-compare-row"},
		{name: "compare chosen", path: "/swe?run=2&run=1&baseline=1", store: sweFake, status: 200, fragment: true, testid: "swe-compare-row"},
		{name: "compare one run", path: "/swe?run=1", store: sweFake, status: 200, fragment: true, testid: "swe-compare-row"},
		{name: "compare nothing", path: "/swe", store: func() *fakeSWE { return &fakeSWE{} }, status: 200, fragment: true, testid: "swe-compare-empty"},
		{name: "compare unknown run", path: "/swe?run=5", store: sweFake, status: 404},
		{name: "compare bad run", path: "/swe?run=x", store: sweFake, status: 400},
		{name: "compare store failure", path: "/swe", store: func() *fakeSWE { f := sweFake(); f.err = errBoom; return f }, status: 500},
		{name: "timelines", path: "/swe/runs/1", store: sweFake, status: 200, testid: "swe-bar"},
		{name: "timelines paged", path: "/swe/runs/1?after=acme__calc-1", store: sweFake, status: 200, testid: "swe-timeline"},
		{name: "timelines unknown run", path: "/swe/runs/9", store: sweFake, status: 404},
		{name: "timelines bad id", path: "/swe/runs/x", store: sweFake, status: 400},
		{name: "trajectory", path: "/swe/trajectories/7?step=2", store: sweFake, status: 200, testid: "swe-figures"},
		{name: "trajectory missing", path: "/swe/trajectories/99", store: sweFake, status: 404},
		{name: "trajectory bad step", path: "/swe/trajectories/7?step=x", store: sweFake, status: 400},
		{name: "step", path: "/swe/trajectories/7/steps/2", store: sweFake, status: 200, fragmentOnly: true, testid: "swe-step"},
		{name: "step out of range", path: "/swe/trajectories/7/steps/60", store: sweFake, status: 404},
		{name: "instances", path: "/swe/instances", store: sweFake, status: 200, testid: "swe-instance-row"},
		{name: "instances empty", path: "/swe/instances", store: func() *fakeSWE { return &fakeSWE{} }, status: 200, testid: "swe-instances-empty"},
		{name: "instance", path: "/swe/instances/acme__calc-1", store: sweFake, status: 200, testid: "swe-loc"},
		{name: "instance missing", path: "/swe/instances/nope__nope-1", store: sweFake, status: 404},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				rec, doc := do(t, sweRouter(tt.store()), httptest.NewRequest("GET", tt.path, nil), m.htmx)
				if rec.Code != tt.status {
					t.Fatalf("GET %s = %d, want %d\n%s", tt.path, rec.Code, tt.status, rec.Body)
				}
				if v := rec.Header().Values("Vary"); !contains(v, HXRequest) {
					t.Errorf("Vary = %q, want HX-Request", v)
				}
				isErr := tt.status >= 400
				wantHTML := !tt.fragmentOnly && (!m.htmx || !tt.fragment) || isErr && !m.htmx
				if isErr && m.htmx {
					wantHTML = false
				}
				if got := hasHTML(rec); got != wantHTML {
					t.Errorf("<html> present = %v, want %v", got, wantHTML)
				}
				if isErr {
					if m.htmx && rec.Header().Get(HXRetarget) != "#alerts" {
						t.Errorf("htmx error without HX-Retarget: %v", rec.Header())
					}
					if strings.Contains(rec.Body.String(), "secret database detail") {
						t.Errorf("body leaks the error")
					}
					return
				}
				if tt.testid != "" && doc.Find(`[data-testid=`+tt.testid+`]`).Length() == 0 {
					t.Errorf("no [data-testid=%s] in\n%s", tt.testid, rec.Body)
				}
				if m.htmx && tt.fragment && rec.Header().Get(HXPushURL) == "" {
					t.Errorf("comparison fragment without HX-Push-Url")
				}
			})
		}
	}
}

// TestSWECompareFigures checks the comparison's numbers and what each is
// over: means per run, paired deltas with their sign, "no reference".
func TestSWECompareFigures(t *testing.T) {
	rec, doc := do(t, sweRouter(sweFake()), httptest.NewRequest("GET", "/swe?run=1&run=2&baseline=1", nil), false)
	if rec.Code != 200 {
		t.Fatal(rec.Code, rec.Body)
	}
	rows := doc.Find("[data-testid=swe-compare-row]")
	if rows.Length() != 2 {
		t.Fatalf("%d rows", rows.Length())
	}
	cell := func(row int, metric string) string {
		return strings.Join(strings.Fields(rows.Eq(row).Find("[data-testid=swe-"+metric+"]").Text()), " ")
	}
	checks := []struct {
		row          int
		metric, want string
	}{
		{0, "localization", "0.50 over 1 instance"},
		{0, "resolved", "1.00 over 1 instance"},
		{0, "verification", "1.00 over 1 instance"},
		{1, "localization", "1.00 +0.50 over 1 instance Δ paired on 1 instance"},
		{1, "verification", "0.00 −1.00 over 2 instances Δ paired on 1 instance"},
		{1, "completion", "1.00 ±0 over 2 instances Δ paired on 1 instance"},
		{1, "resolved", "— no evaluation results Δ nothing paired"},
		{1, "steps", "3.5 −2.0 over 2 instances Δ paired on 1 instance"},
	}
	for _, c := range checks {
		if got := cell(c.row, c.metric); got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.metric, got, c.want)
		}
	}
	if got := rows.Eq(1).Find("td").Eq(2).Text(); got != "1" {
		t.Errorf("shared with baseline = %q, want 1", got)
	}
	// Without metadata for any instance: localization says "no reference".
	f := sweFake()
	for id, outs := range f.outcomes {
		for i := range outs {
			outs[i].Localization = nil
		}
		f.outcomes[id] = outs
	}
	_, doc = do(t, sweRouter(f), httptest.NewRequest("GET", "/swe?run=1", nil), false)
	if got := doc.Find("[data-testid=swe-localization]").Text(); !strings.Contains(got, "no reference") {
		t.Errorf("localization without metadata = %q", got)
	}
}

func TestSWETimelineAndTrajectory(t *testing.T) {
	f := sweFake()
	_, doc := do(t, sweRouter(f), httptest.NewRequest("GET", "/swe/runs/1", nil), false)
	if len(f.refreshed) != 1 || f.refreshed[0] != 1 {
		t.Errorf("timelines refreshed %v, want run 1", f.refreshed)
	}
	cells := doc.Find("[data-testid=swe-bar]").First().Find("a")
	if cells.Length() != 6 {
		t.Fatalf("%d cells, want one per step", cells.Length())
	}
	fb := cells.Eq(4)
	if !fb.HasClass("swe-fallback") || !fb.HasClass("swe-rep") || !strings.Contains(fb.AttrOr("title", ""), "step 5: REP (fall-back)") {
		t.Errorf("fall-back cell = class %q title %q", fb.AttrOr("class", ""), fb.AttrOr("title", ""))
	}
	if href, hx := fb.AttrOr("href", ""), fb.AttrOr("hx-get", ""); href != "/swe/trajectories/7?step=4#step-4" || hx != "/swe/trajectories/7/steps/4" {
		t.Errorf("cell links = %q / %q", href, hx)
	}

	rec, doc := do(t, sweRouter(f), httptest.NewRequest("GET", "/swe/trajectories/7?step=4", nil), false)
	fig := func(name string) string {
		dd := doc.Find("[data-testid=swe-figure-" + name + "] dd")
		parts := []string{dd.Find(".swe-figure-value").Text(), dd.Find(".swe-figure-detail").Text()}
		dd.Find(".swe-figure-links a").Each(func(_ int, a *goquery.Selection) { parts = append(parts, a.Text()) })
		return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	}
	for name, want := range map[string]string{
		"localization": "1.00 1 of 1 reference files edited (reference: pkg/calc.py; edited: pkg/calc.py) step 4",
		"reproduction": "yes the agent created and ran reproduce.py and saw a failure signal: ZeroDivisionError: division by zero step 2 step 3",
		"verification": "yes after its last source edit (step 4) the agent re-ran its script and it passed last edit: step 4 step 5",
		"completion":   "yes a non-empty patch was submitted (Submitted) step 6",
		"resolved":     "yes SWE-bench evaluation of the submitted patch",
	} {
		if got := fig(name); got != want {
			t.Errorf("figure %s = %q\nwant %q", name, got, want)
		}
	}
	steps := doc.Find("[data-testid=swe-step]")
	if steps.Length() != 6 || steps.Eq(4).AttrOr("id", "") != "step-4" {
		t.Fatalf("steps = %d", steps.Length())
	}
	if _, open := steps.Eq(4).Attr("open"); !open {
		t.Error("step=4 is not open")
	}
	if _, open := steps.Eq(3).Attr("open"); open {
		t.Error("step 3 is open")
	}
	if body := steps.Eq(4).Text(); !strings.Contains(body, "runs a test while in PATCH: falls back to REP") || !strings.Contains(body, "python reproduce.py") {
		t.Errorf("step 5 detail = %q", body)
	}
	// Log content is text, never markup.
	if strings.Contains(rec.Body.String(), "<script>alert(1)") || !strings.Contains(rec.Body.String(), "&lt;script&gt;alert(1)") {
		t.Error("an observation's <script> was not escaped")
	}
}

func TestSWEInstanceEvidence(t *testing.T) {
	_, doc := do(t, sweRouter(sweFake()), httptest.NewRequest("GET", "/swe/instances/acme__calc-1", nil), false)
	ev := grounding.SWEEvidenceOf(sweSubject().Instance)
	if got := doc.Find("[data-testid=swe-total]").Text(); got != count(ev.TotalTokens) {
		t.Errorf("total = %q, want %d", got, ev.TotalTokens)
	}
	if got := doc.Find("[data-testid=swe-loc] li").Text(); got != "pkg/calc.py:1-2" {
		t.Errorf("LOC spans = %q", got)
	}
	if got := doc.Find("[data-testid=swe-rep] li").Text(); got != "t::test" {
		t.Errorf("REP tests = %q", got)
	}
	if !strings.Contains(doc.Find("[data-testid=swe-loc] h2").Text(), count(ev.LOCTokens)+" tokens") {
		t.Errorf("LOC heading = %q", doc.Find("[data-testid=swe-loc] h2").Text())
	}
}

// TestSWECompareCache: a second comparison reads no outcomes while the
// store's stamp is unchanged, and reads again once it changes.
func TestSWECompareCache(t *testing.T) {
	f := sweFake()
	h := sweRouter(f)
	get := func() {
		rec, _ := do(t, h, httptest.NewRequest("GET", "/swe?run=1&run=2", nil), false)
		if rec.Code != 200 {
			t.Fatal(rec.Code)
		}
	}
	get()
	if f.loads != 2 || len(f.refreshed) != 2 {
		t.Fatalf("first comparison: %d loads, %v refreshed; want 2 and both runs", f.loads, f.refreshed)
	}
	get()
	if f.loads != 2 {
		t.Errorf("second comparison loaded again (%d loads)", f.loads)
	}
	f.stamp++ // e.g. metadata imported
	get()
	if f.loads != 4 {
		t.Errorf("after the stamp changed: %d loads, want 4", f.loads)
	}
}

// TestImportSWEDataNote: an upload of SWE-bench metadata says what it
// imported instead of "0 trajectories into run ".
func TestImportSWEDataNote(t *testing.T) {
	for _, tt := range []struct {
		res  grounding.ImportResult
		want string
	}{
		{grounding.ImportResult{File: "instances.jsonl", Format: "swe-instances (78 instances)"}, "78 instances of SWE-bench metadata"},
		{grounding.ImportResult{File: "report.json", Format: "swe-results (500 results)", RunName: "gemini", RunID: 2}, "500 results of SWE-bench evaluation for run gemini"},
	} {
		for _, m := range modes {
			st := &fakeStore{t: t, ImportFileFn: func(string, string, string, grounding.Format) (grounding.ImportResult, error) { return tt.res, nil }}
			h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
			body, ct := multipartBody(t, "gemini", "auto", tt.res.File, []byte(`{"instance_id": "a__b-1", "patch": ""}`))
			req := httptest.NewRequest("POST", "/import", body)
			req.Header.Set("Content-Type", ct)
			rec, doc := do(t, h, req, m.htmx)
			if rec.Code != 200 {
				t.Fatalf("%s: POST /import = %d\n%s", m.name, rec.Code, rec.Body)
			}
			if got := doc.Find("[data-testid=import-note]").Text(); !strings.Contains(got, tt.want) {
				t.Errorf("%s: note = %q, want %q", m.name, got, tt.want)
			}
			if strings.Contains(doc.Find("[data-testid=import-ok]").Text(), "0 trajectories") {
				t.Errorf("%s: metadata import shows trajectory counts", m.name)
			}
		}
	}
}

// A mixed run (SWE and customer-service trajectories) is counted the same
// way everywhere on the SWE pages: by its SWE trajectories, next to the
// run's whole count, and its trajectory list opens on the SWE domain.
func TestSWEMixedRunCounts(t *testing.T) {
	f := sweFake()
	f.runs[1].Trajectories = 30 // run 1 "base": 2 SWE trajectories of 30
	_, doc := do(t, sweRouter(f), httptest.NewRequest("GET", "/swe/runs/1", nil), false)
	summary := strings.Join(strings.Fields(doc.Find("[data-testid=swe-run] > p.muted").First().Text()), " ")
	if !strings.Contains(summary, "2 SWE of 30 trajectories") {
		t.Errorf("timeline summary = %q, want the run's 2 SWE of 30 trajectories", summary)
	}
	if href := doc.Find("[data-testid=swe-run-list]").AttrOr("href", ""); href != "/runs/1?domain=swe" {
		t.Errorf("trajectory list link = %q, want the run filtered to domain swe", href)
	}
	_, doc = do(t, sweRouter(f), httptest.NewRequest("GET", "/swe", nil), false)
	var labels []string
	doc.Find(".swe-run-choice").Each(func(_ int, s *goquery.Selection) {
		labels = append(labels, strings.Join(strings.Fields(s.Text()), " "))
	})
	if got := strings.Join(labels, " | "); got != "base (2 SWE of 30 trajectories) | grpo (2 trajectories)" {
		t.Errorf("run choices = %q", got)
	}
	row := doc.Find("[data-testid=swe-compare-row]").FilterFunction(func(_ int, s *goquery.Selection) bool {
		return strings.Contains(s.Find("th").Text(), "base")
	})
	if got := row.Find("td").First().Text(); got != "2" {
		t.Errorf("compare row SWE trajectories = %q, want 2", got)
	}
}

// A failure that only came from the agent's own edit is shown as a
// regression, with a link to the step, not as a reproduction.
func TestSWEReproductionRegressionDetail(t *testing.T) {
	tr := &grounding.Trajectory{ID: "acme__calc-1", Domain: grounding.DomainSWE, Meta: json.RawMessage(`{"scaffold":"mini-swe-agent"}`),
		Messages: []grounding.Message{{Role: grounding.RoleUser, Content: "fix it"}}}
	for i, s := range [][2]string{
		{"cat <<'EOF' > reproduce.py\nfrom pkg.calc import div\nprint(div(1, 0))\nEOF", ""},
		{"python reproduce.py", "inf"},
		{"sed -i 's/a/b/' pkg/calc.py", ""},
		{"python reproduce.py", "Traceback (most recent call last):\n  File \"/testbed/pkg/calc.py\", line 2, in div\nNameError: name 'b2' is not defined"},
	} {
		id := "c" + strconv.Itoa(i)
		args, _ := json.Marshal(map[string]string{"command": s[0]})
		tr.Messages = append(tr.Messages,
			grounding.Message{Role: grounding.RoleAssistant, ToolCalls: []grounding.ToolCall{{ID: id, Name: "bash", Arguments: args}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: id, Content: s[1]})
	}
	d := grounding.DiagnoseSWE(tr, nil)
	page := trajectoryDiagnostics(grounding.SWESubject{ID: 1, Trajectory: tr}, d, -1)
	for _, f := range page.Figures {
		if f.Name != "reproduction" {
			continue
		}
		if f.Value != "no" || !strings.Contains(f.Detail, "regression") || len(f.Links) != 1 || f.Links[0].Label != "step 4" {
			t.Errorf("reproduction figure = %q %q %+v", f.Value, f.Detail, f.Links)
		}
		return
	}
	t.Fatal("no reproduction figure")
}
