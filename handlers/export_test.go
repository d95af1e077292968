package handlers

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
)

// fakeExport implements exportStore and tokenStore for the export tests.
type fakeExport struct {
	runs    []grounding.Run
	summary grounding.ExportSummary
	ts      []*grounding.ExportTrajectory
	// failAt makes Export fail before begin (-1), or after that many
	// trajectories (>= 0); nil error means success.
	err    error
	failAt int
	got    grounding.ExportFilter // the last filter Export or ExportSummary saw

	tokens  []grounding.APIToken
	revoked []int64
}

func (f *fakeExport) Runs(context.Context) ([]grounding.Run, error) { return f.runs, nil }
func (f *fakeExport) Run(_ context.Context, id int64) (grounding.Run, error) {
	for _, r := range f.runs {
		if r.ID == id {
			return r, nil
		}
	}
	return grounding.Run{}, grounding.ErrNotFound
}
func (f *fakeExport) RunByName(_ context.Context, name string) (grounding.Run, error) {
	for _, r := range f.runs {
		if r.Name == name {
			return r, nil
		}
	}
	return grounding.Run{}, grounding.ErrNotFound
}
func (f *fakeExport) RunFacets(context.Context, int64) ([]string, []string, error) {
	return []string{"airline", "retail"}, nil, nil
}
func (f *fakeExport) CoverageScales(context.Context) ([]grounding.Scale, error) {
	return grounding.DefaultScales(), nil
}
func (f *fakeExport) Views(context.Context, []int64) ([]grounding.CoverageView, error) {
	return []grounding.CoverageView{{ID: 5, Name: "core-8b", Scale: grounding.Scale{Name: "8B", Depth: 3}, Parents: 2}}, nil
}
func (f *fakeExport) ViewByName(_ context.Context, runID int64, name string) (grounding.CoverageView, error) {
	if runID == 7 && name == "core-8b" {
		return grounding.CoverageView{ID: 5, Name: "core-8b", Scale: grounding.Scale{Name: "8B", Depth: 3}}, nil
	}
	return grounding.CoverageView{}, grounding.ErrNotFound
}
func (f *fakeExport) ExportSummary(_ context.Context, flt grounding.ExportFilter) (grounding.ExportSummary, error) {
	f.got = flt
	return f.summary, nil
}
func (f *fakeExport) Export(_ context.Context, flt grounding.ExportFilter, begin func(time.Time) error, each func(*grounding.ExportTrajectory) error) (grounding.ExportSummary, error) {
	f.got = flt
	if f.err != nil && f.failAt < 0 {
		return grounding.ExportSummary{}, f.err
	}
	if err := begin(f.summary.Snapshot); err != nil {
		return grounding.ExportSummary{}, err
	}
	for i, t := range f.ts {
		if f.err != nil && i == f.failAt {
			return grounding.ExportSummary{}, f.err
		}
		t.Prepare(flt.Source)
		if err := each(t); err != nil {
			return grounding.ExportSummary{}, err
		}
	}
	return f.summary, nil
}
func (f *fakeExport) APITokens(context.Context, int64) ([]grounding.APIToken, error) {
	return f.tokens, nil
}
func (f *fakeExport) CreateAPIToken(_ context.Context, userID int64, name string) (grounding.APIToken, string, error) {
	t := grounding.APIToken{ID: int64(len(f.tokens) + 1), UserID: userID, Name: name, Prefix: "gw_secret", CreatedAt: time.Now()}
	f.tokens = append([]grounding.APIToken{t}, f.tokens...)
	return t, "gw_secretsecretsecret", nil
}
func (f *fakeExport) RevokeAPIToken(_ context.Context, _, id int64) error {
	for i := range f.tokens {
		if f.tokens[i].ID == id {
			f.tokens[i].RevokedAt = time.Now()
			f.revoked = append(f.revoked, id)
			return nil
		}
	}
	return grounding.ErrNotFound
}

func newFakeExport() *fakeExport {
	traj := func(id, parent string) *grounding.ExportTrajectory {
		return &grounding.ExportTrajectory{
			ExtID: id, ParentID: parent, Domain: "airline", Success: true, WorkflowOK: true,
			Messages: []grounding.Message{
				{Index: 0, Role: grounding.RoleUser, Content: "hi"},
				{Index: 1, Role: grounding.RoleAssistant, Content: "hello " + id},
			},
			Decisions: []grounding.ExportDecision{{Ordinal: 0, Message: 1, Call: -1, Verdict: grounding.VerdictPass, AutoVerdict: grounding.VerdictPass, Mask: 1}},
		}
	}
	return &fakeExport{
		runs:    []grounding.Run{{ID: 7, Name: "demo run", Trajectories: 3}},
		summary: grounding.ExportSummary{Snapshot: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Trajectories: 3, Decisions: 3, Supervised: 3, Parents: 2},
		ts:      []*grounding.ExportTrajectory{traj("a", "p1"), traj("b", "p1"), traj("c", "p2")},
		failAt:  -1,
	}
}

func exportRouter(st *fakeExport, aborted *int) http.Handler {
	h := NewExport(quietLog(), st)
	h.abort = func() { *aborted++ }
	tk := NewTokens(quietLog(), st)
	r := chi.NewRouter()
	r.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), *researcher)))
		})
	})
	r.Get("/api/export/{run}/masks.jsonl", h.Masks)
	r.Get("/api/export/{run}/sft.jsonl", h.SFT)
	r.Get("/api/export/{run}/decisions.csv", h.CSV)
	r.Get("/export", h.Page)
	r.Get("/export/count", h.Count)
	r.Get("/tokens", tk.List)
	r.Post("/tokens", tk.Create)
	r.Post("/tokens/{tokenID}/revoke", tk.Revoke)
	return r
}

func get(h http.Handler, target string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", target, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestExportBadRequests(t *testing.T) {
	tests := []struct {
		name   string
		target string
		status int
		says   string
	}{
		{"unknown run", "/api/export/nope/sft.jsonl", 404, `There is no run named "nope".`},
		{"unknown run id", "/api/export/99/sft.jsonl", 404, `There is no run named "99".`},
		{"unknown scale", "/api/export/demo%20run/sft.jsonl?scale=70B", 400, "1.7B, 4B, 8B, 14B, 30B-A3B"},
		{"unknown view", "/api/export/demo%20run/masks.jsonl?view=top", 404, `Run "demo run" has no saved view named "top".`},
		{"view of another scale", "/api/export/demo%20run/masks.jsonl?view=core-8b&scale=4B", 400, `View "core-8b" was selected for scale 8B, not 4B.`},
		{"typo", "/api/export/demo%20run/masks.jsonl?complet=false", 400, `Unknown parameter "complet"`},
		{"bad bool", "/api/export/demo%20run/masks.jsonl?complete=maybe", 400, `"complete" must be true or false`},
		{"bad source", "/api/export/demo%20run/decisions.csv?source=lead", 400, "auto, human or any"},
		{"bad limit", "/api/export/demo%20run/sft.jsonl?limit=-3", 400, "whole number"},
		{"twice", "/api/export/demo%20run/sft.jsonl?scale=8B&scale=4B", 400, "given 2 times"},
		// URL.Query drops these pairs without a word; dropped, the filter
		// would fall back to its default and widen the export.
		{"semicolon", "/api/export/demo%20run/masks.jsonl?source=human;ids=true", 400, "query is not valid"},
		{"bad escape", "/api/export/demo%20run/masks.jsonl?source=hu%ZZman", 400, "escape % as %25"},
		{"bad escape in a view", "/api/export/demo%20run/masks.jsonl?view=nope%", 400, "query is not valid"},
		{"unknown domain", "/api/export/demo%20run/masks.jsonl?domain=Airline", 400, `no trajectories of domain "Airline"; its domains are airline, retail.`},
		{"domain not UTF-8", "/api/export/demo%20run/masks.jsonl?domain=%FF", 400, `"domain" is not valid UTF-8`},
		{"NUL in a view", "/api/export/demo%20run/masks.jsonl?view=a%00b", 400, `"view" is not valid UTF-8`},
		{"run not UTF-8", "/api/export/%FF/masks.jsonl", 400, "run name in the address is not valid"},
		{"NUL in the run", "/api/export/a%00b/masks.jsonl", 400, "run name in the address is not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newFakeExport()
			aborted := 0
			rec := get(exportRouter(st, &aborted), tt.target, nil)
			body := rec.Body.String()
			if rec.Code != tt.status || !strings.Contains(body, tt.says) || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
				t.Errorf("GET %s = %d %q (%s), want %d saying %q", tt.target, rec.Code, body, rec.Header().Get("Content-Type"), tt.status, tt.says)
			}
			if strings.Contains(body, "groundwork_export") || rec.Header().Get("Content-Disposition") != "" || aborted != 0 {
				t.Errorf("GET %s sent part of an export: %q", tt.target, body)
			}
		})
	}
}

// TestExportRunNameDecodedOnce: the run segment is decoded exactly once,
// whether or not Go kept the escaped path: "x%2541" names run "x%41", not
// run "xA".
func TestExportRunNameDecodedOnce(t *testing.T) {
	for _, tt := range []struct{ target, run string }{
		{"/api/export/x%2541/masks.jsonl", "x%41"},
		{"/api/export/xA/masks.jsonl", "xA"},
		{"/api/export/50%25/masks.jsonl", "50%"},
		{"/api/export/a%2Fb/masks.jsonl", "a/b"},
		{"/api/export/caf%C3%A9/masks.jsonl", "café"},
		{"/api/export/sp%20ace/masks.jsonl", "sp ace"},
	} {
		st := newFakeExport()
		st.runs = []grounding.Run{{ID: 1, Name: "x%41"}, {ID: 2, Name: "xA"}, {ID: 3, Name: "50%"}, {ID: 4, Name: "a/b"}, {ID: 5, Name: "café"}, {ID: 6, Name: "sp ace"}}
		aborted := 0
		rec := get(exportRouter(st, &aborted), tt.target, nil)
		if rec.Code != http.StatusOK || st.got.RunName != tt.run {
			t.Errorf("GET %s = %d, exported run %q; want 200 and run %q", tt.target, rec.Code, st.got.RunName, tt.run)
		}
	}
}

func TestExportStoreFailsBeforeFirstByte(t *testing.T) {
	st := newFakeExport()
	st.err = errBoom
	aborted := 0
	rec := get(exportRouter(st, &aborted), "/api/export/demo%20run/sft.jsonl", nil)
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "secret database detail") || !strings.Contains(rec.Body.String(), "Internal error") || aborted != 0 {
		t.Errorf("store failure = %d %q", rec.Code, rec.Body.String())
	}
}

func TestExportMidStreamFailure(t *testing.T) {
	st := newFakeExport()
	st.err, st.failAt = errBoom, 1
	aborted := 0
	rec := get(exportRouter(st, &aborted), "/api/export/demo%20run/masks.jsonl", nil)
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	last := lines[len(lines)-1]
	if aborted != 1 || len(lines) != 3 || !strings.Contains(last, `"complete":false`) || strings.Contains(last, "secret database detail") ||
		!strings.Contains(last, `"trajectories":1`) {
		t.Errorf("mid-stream failure: aborted %d, body\n%s", aborted, rec.Body.String())
	}
}

func TestExportFormats(t *testing.T) {
	tests := []struct {
		path, ctype, file string
	}{
		{"masks.jsonl", "application/jsonl; charset=utf-8", "groundwork-demo_run-8B-20261129T120000Z-masks.jsonl"},
		{"sft.jsonl", "application/jsonl; charset=utf-8", "groundwork-demo_run-8B-20261129T120000Z-sft.jsonl"},
		{"decisions.csv", "text/csv; charset=utf-8; header=present", "groundwork-demo_run-8B-20261129T120000Z-decisions.csv"},
	}
	for _, tt := range tests {
		for _, gz := range []bool{false, true} {
			st := newFakeExport()
			aborted := 0
			hdr := map[string]string{}
			if gz {
				hdr["Accept-Encoding"] = "br;q=1, gzip;q=0.8"
			}
			// By id, which names no run: the id fallback.
			rec := get(exportRouter(st, &aborted), "/api/export/7/"+tt.path+"?scale=8b&complete=false&source=auto&limit=2", hdr)
			if rec.Code != 200 || rec.Header().Get("Content-Type") != tt.ctype ||
				rec.Header().Get("Content-Disposition") != `attachment; filename="`+tt.file+`"` {
				t.Fatalf("GET %s = %d %v", tt.path, rec.Code, rec.Header())
			}
			body := rec.Body.Bytes()
			if gz {
				if rec.Header().Get("Content-Encoding") != "gzip" {
					t.Fatalf("GET %s with gzip accepted: not compressed", tt.path)
				}
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("gzip body: %v", err)
				}
			} else if rec.Header().Get("Content-Encoding") != "" {
				t.Errorf("compressed without Accept-Encoding")
			}
			f := st.got
			if f.RunID != 7 || f.Scale.Name != "8B" || f.Complete || f.Source != grounding.VerdictSourceAuto || f.Limit != 2 {
				t.Errorf("filter = %+v", f)
			}
			sc := bufio.NewScanner(bytes.NewReader(body))
			var lines []string
			for sc.Scan() {
				lines = append(lines, strings.TrimPrefix(sc.Text(), "# "))
			}
			if !strings.HasPrefix(lines[0], `{"groundwork_export":{"version":1,"format":`) || !strings.Contains(lines[0], `"run":"demo run"`) ||
				!strings.HasPrefix(lines[len(lines)-1], `{"groundwork_trailer":{"complete":true,"trajectories":3,"decisions":3`) {
				t.Errorf("GET %s header/trailer:\n%s\n%s", tt.path, lines[0], lines[len(lines)-1])
			}
			if rec.Header().Get("X-Groundwork-Snapshot") != "2026-11-29T12:00:00Z" || !strings.Contains(lines[len(lines)-1], `"parents":2`) {
				t.Errorf("GET %s snapshot headers: %v", tt.path, rec.Header())
			}
			if aborted != 0 {
				t.Errorf("GET %s aborted", tt.path)
			}
		}
	}
}

func TestExportHead(t *testing.T) {
	st := newFakeExport()
	aborted := 0
	req := httptest.NewRequest("HEAD", "/api/export/demo%20run/sft.jsonl", nil)
	rec := httptest.NewRecorder()
	r := chi.NewRouter()
	h := NewExport(quietLog(), st)
	r.Head("/api/export/{run}/sft.jsonl", h.SFT)
	r.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.Len() != 0 || rec.Header().Get("X-Groundwork-Snapshot") == "" || aborted != 0 {
		t.Errorf("HEAD = %d, %d bytes, %v", rec.Code, rec.Body.Len(), rec.Header())
	}
}

func TestAcceptsGzip(t *testing.T) {
	for in, want := range map[string]bool{"": false, "gzip": true, "deflate, gzip": true, "gzip;q=0": false, "GZIP; q=0.5": true, "*": true, "br": false, "gzip;q=0.000": false} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Accept-Encoding", in)
		if got := acceptsGzip(req); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestExportPageAndCount(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			st := newFakeExport()
			st.runs = append(st.runs, grounding.Run{ID: 8, Name: "solo", Trajectories: 1})
			aborted := 0
			h := exportRouter(st, &aborted)
			req := httptest.NewRequest("GET", "/export?run=demo+run&format=masks&scale=8B&complete=false&limit=0", nil)
			rec, doc := do(t, h, req, m.htmx)
			if rec.Code != 200 || !strings.Contains(rec.Header().Get("Vary"), HXRequest) {
				t.Fatalf("GET /export = %d %v", rec.Code, rec.Header())
			}
			if hasHTML(rec) == m.htmx {
				t.Errorf("htmx=%v: full page %v", m.htmx, hasHTML(rec))
			}
			link, _ := doc.Find(`[data-testid=export-link]`).Attr("href")
			if link != "/api/export/demo%20run/masks.jsonl?complete=false&scale=8B" {
				t.Errorf("link = %q", link)
			}
			// The page does not wait on the count (a second on 30,000
			// trajectories): it says where the figures come from.
			countURL, _ := doc.Find(`[data-testid=export-counting]`).Attr("hx-get")
			if doc.Find(`[data-testid=export-figures]`).Length() != 0 || !strings.HasPrefix(countURL, "/export/count?") || st.got.RunName != "" {
				t.Fatalf("the page counted (figures %d, counted %q) or offers no count URL (%q)", doc.Find(`[data-testid=export-figures]`).Length(), st.got.RunName, countURL)
			}
			// Without JavaScript the form's Count button asks for them inline.
			if _, ndoc := do(t, h, httptest.NewRequest("GET", "/export?run=demo+run&count=1", nil), false); ndoc.Find(`[data-testid=export-figures]`).Length() != 1 {
				t.Error("count=1 does not show the figures in the page")
			}
			crec, cdoc := do(t, h, httptest.NewRequest("GET", countURL, nil), true)
			if got := cdoc.Find(`[data-testid=export-figures]`).Text(); crec.Code != 200 || !strings.Contains(strings.Join(strings.Fields(got), " "), "3 trajectories") {
				t.Errorf("figures from %s = %d %q", countURL, crec.Code, got)
			}
			if l, _ := cdoc.Find(`[data-testid=export-link]`).Attr("href"); l != link || st.got.Format != grounding.ExportMasks || st.got.Scale.Name != "8B" || st.got.Complete {
				t.Errorf("the count counted %+v with link %q; want the page's filter and link %q", st.got, l, link)
			}
			// P counts the parents with a supervised decision (the weight
			// denominator), and the page says so.
			if got := strings.Join(strings.Fields(cdoc.Find(`[data-testid=export-figures]`).Text()), " "); !strings.Contains(got, "2 parent interactions have a supervised decision") {
				t.Errorf("figures = %q, want the parent count said to be of parents with a supervised decision", got)
			}
			if !strings.Contains(doc.Find(`[data-testid=export-curl]`).Text(), "Authorization: Bearer $GROUNDWORK_TOKEN") {
				t.Errorf("curl = %q", doc.Find(`[data-testid=export-curl]`).Text())
			}
			if !m.htmx {
				if doc.Find(`[data-testid=export-form] option[value="8B"][selected]`).Length() != 1 {
					t.Errorf("the form does not keep the chosen scale")
				}
				if got := doc.Find(`[data-testid=export-form] select[name=run] option`).First().Text(); got != "demo run (3 trajectories)" {
					t.Errorf("run option = %q", got)
				}
				if got := doc.Find(`[data-testid=export-form] select[name=run] option`).Last().Text(); got != "solo (1 trajectory)" {
					t.Errorf("run option of a one-trajectory run = %q", got)
				}
			}

			// The count fragment: an error is a 422 message and no link.
			req = httptest.NewRequest("GET", "/export/count?run=demo+run&format=sft&scale=70B", nil)
			rec, doc = do(t, h, req, m.htmx)
			if rec.Code != 422 || hasHTML(rec) || doc.Find(`[data-testid=export-link]`).Length() != 0 ||
				!strings.Contains(doc.Find(`[data-testid=export-error]`).Text(), "30B-A3B") {
				t.Errorf("count with a bad scale = %d\n%s", rec.Code, rec.Body.String())
			}
			req = httptest.NewRequest("GET", "/export/count?run=demo+run&format=sft&source=human&include_empty=true&ids=true&limit=10", nil)
			rec, doc = do(t, h, req, m.htmx)
			link, _ = doc.Find(`[data-testid=export-link]`).Attr("href")
			u, _ := url.Parse(link)
			if rec.Code != 200 || u.Path != "/api/export/demo run/sft.jsonl" || u.Query().Get("source") != "human" || u.Query().Get("limit") != "10" ||
				!st.got.IncludeEmpty || !st.got.IDs || st.got.Source != grounding.VerdictSourceHuman || !st.got.Complete {
				t.Errorf("count = %d link %q filter %+v", rec.Code, link, st.got)
			}
			req = httptest.NewRequest("GET", "/export/count?run=gone&format=sft", nil)
			rec, doc = do(t, h, req, m.htmx)
			if rec.Code != 422 || !strings.Contains(doc.Find(`[data-testid=export-error]`).Text(), `no run named "gone"`) {
				t.Errorf("count of an unknown run = %d %s", rec.Code, rec.Body.String())
			}
		})
	}
}

func TestTokensPage(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			st := newFakeExport()
			aborted := 0
			h := exportRouter(st, &aborted)
			rec, doc := do(t, h, httptest.NewRequest("GET", "/tokens", nil), m.htmx)
			if rec.Code != 200 || doc.Find(`[data-testid=token-form]`).Length() != 1 {
				t.Fatalf("GET /tokens = %d", rec.Code)
			}
			post := func(target, form string) (*httptest.ResponseRecorder, *goquery.Document) {
				req := httptest.NewRequest("POST", target, strings.NewReader(form))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec, doc := do(t, h, req, m.htmx)
				return rec, doc
			}
			rec, doc = post("/tokens", "name=")
			if rec.Code != 422 || !strings.Contains(rec.Body.String(), "Give the token a name") {
				t.Errorf("empty name = %d", rec.Code)
			}
			rec, doc = post("/tokens", "name=nightly")
			if rec.Code != 201 || doc.Find(`[data-testid=token-secret]`).Text() != "gw_secretsecretsecret" || hasHTML(rec) == m.htmx ||
				doc.Find(`[data-testid=token-row]`).Length() != 1 {
				t.Errorf("create = %d\n%s", rec.Code, rec.Body.String())
			}
			// The list never shows a secret again.
			rec, doc = do(t, h, httptest.NewRequest("GET", "/tokens", nil), m.htmx)
			if strings.Contains(rec.Body.String(), "gw_secretsecretsecret") || !strings.Contains(doc.Find(`[data-testid=token-row]`).Text(), "never") {
				t.Errorf("token list shows the secret or a use: %s", rec.Body.String())
			}
			rec, _ = post("/tokens/1/revoke", "")
			if m.htmx && (rec.Code != 200 || !strings.Contains(rec.Body.String(), "revoked")) || !m.htmx && (rec.Code != 303 || rec.Header().Get("Location") != "/tokens") {
				t.Errorf("revoke = %d %v", rec.Code, rec.Header())
			}
			rec, _ = post("/tokens/42/revoke", "")
			if rec.Code != 404 {
				t.Errorf("revoke someone else's token = %d", rec.Code)
			}
			if len(st.revoked) != 1 {
				t.Errorf("revoked %v", st.revoked)
			}
		})
	}
}

func TestExportSFTLineShape(t *testing.T) {
	st := newFakeExport()
	aborted := 0
	rec := get(exportRouter(st, &aborted), "/api/export/demo%20run/sft.jsonl?ids=true", nil)
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	var l struct {
		ID       string
		Messages []map[string]any
	}
	if err := json.Unmarshal([]byte(lines[1]), &l); err != nil || l.ID != "a" || len(l.Messages) != 2 || l.Messages[1]["weight"] != float64(1) {
		t.Errorf("SFT line = %s (%v)", lines[1], err)
	}
}

func TestExportView(t *testing.T) {
	st := newFakeExport()
	aborted := 0
	rec := get(exportRouter(st, &aborted), "/api/export/demo%20run/sft.jsonl?view=core-8b", nil)
	if rec.Code != 200 || st.got.ViewID != 5 || st.got.View != "core-8b" || st.got.Scale.Name != "8B" || st.got.Scale.Depth != 3 {
		t.Errorf("view export = %d, filter %+v", rec.Code, st.got)
	}
	if !strings.Contains(rec.Body.String(), `"view":"core-8b","scale":"8B","target_depth":3`) ||
		rec.Header().Get("Content-Disposition") != `attachment; filename="groundwork-demo_run-8B-20261129T120000Z-sft.jsonl"` {
		t.Errorf("view export header:\n%s\n%v", rec.Body.String(), rec.Header())
	}
}

// TestExportMidStreamCutsTheConnection checks, over a real connection, that
// a failure after the 200 reaches the client as a broken transfer: it gets
// the error trailer, and then a read error instead of a clean end.
func TestExportMidStreamCutsTheConnection(t *testing.T) {
	st := newFakeExport()
	st.err, st.failAt = errBoom, 2
	h := NewExport(quietLog(), st) // the real abort: panic(http.ErrAbortHandler)
	r := chi.NewRouter()
	r.Get("/api/export/{run}/sft.jsonl", h.SFT)
	srv := httptest.NewServer(r)
	defer srv.Close()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	for _, gz := range []string{"", "gzip"} {
		req, _ := http.NewRequest("GET", srv.URL+"/api/export/demo%20run/sft.jsonl", nil)
		req.Header.Set("Accept-Encoding", gz)
		resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body io.Reader = resp.Body
		if gz != "" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		got, err := io.ReadAll(body)
		resp.Body.Close()
		if resp.StatusCode != 200 || err == nil {
			t.Errorf("gzip=%q: status %d, read error %v: the client must see a broken transfer", gz, resp.StatusCode, err)
		}
		if !bytes.Contains(got, []byte(`{"groundwork_trailer":{"complete":false,"error":"internal error`)) {
			t.Errorf("gzip=%q: no error trailer in\n%s", gz, got)
		}
	}
}
