package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/alexedwards/scs/v2"
	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// fakeImporter records the upload instead of importing it.
type fakeImporter struct {
	content []byte
	name    string
}

func (f *fakeImporter) ImportFile(_ context.Context, runName, path, displayName string, _ grounding.Format) (grounding.ImportResult, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return grounding.ImportResult{}, err
	}
	f.content, f.name = b, displayName
	return grounding.ImportResult{File: displayName, RunID: 1, RunName: "uploaded", Trajectories: 1}, nil
}

const smokeLog = `{"id":"smoke-1","domain":"airline","reward":1,"success":true,"source":{"format":"canonical","file":"smoke.jsonl","index":0},` +
	`"messages":[{"role":"user","content":"Please cancel NO6JO3 <script>alert(1)</script>"},` +
	`{"role":"system","content":"teacher note: use certificate_9921331","visibility":"hidden","hidden_kind":"teacher_hint"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"get_reservation_details","arguments":{"reservation_id":"NO6JO3"}}]},` +
	`{"role":"tool","tool_call_id":"c1","name":"get_reservation_details","content":"{\"status\":\"ok\"}"}]}` + "\n"

type app struct {
	t   *testing.T
	url string
	db  *store.DB
	imp *fakeImporter
}

func startApp(t *testing.T) *app {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "groundwork.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	for _, u := range []struct{ name, role string }{{"rita", grounding.RoleResearcher}, {"ann", grounding.RoleAnnotator}} {
		hash, _ := bcrypt.GenerateFromPassword([]byte("password-"+u.name), bcrypt.MinCost)
		if _, err := db.CreateUser(ctx, u.name, u.role, hash); err != nil {
			t.Fatalf("create user: %v", err)
		}
	}
	if _, err := web.ImportBytes(ctx, db, "smoke", "smoke.jsonl", []byte(smokeLog)); err != nil {
		t.Fatalf("seed: %v", err)
	}
	imp := &fakeImporter{}
	h, err := web.NewHandler(web.Config{
		MaxUploadBytes: 1 << 20,
		UploadDir:      t.TempDir(),
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, db, imp)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &app{t: t, url: srv.URL, db: db, imp: imp}
}

// client is a browser without redirects followed, so each hop is checked.
func (a *app) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (a *app) do(c *http.Client, method, path string, body io.Reader, hdr map[string]string) (*http.Response, string) {
	a.t.Helper()
	req, err := http.NewRequest(method, a.url+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// sameOrigin are the headers a browser sends on a same-origin form post.
func (a *app) sameOrigin(extra map[string]string) map[string]string {
	h := map[string]string{"Origin": a.url, "Sec-Fetch-Site": "same-origin"}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

func (a *app) login(c *http.Client, name string) {
	a.t.Helper()
	form := url.Values{"name": {name}, "password": {"password-" + name}, "next": {"/runs"}}
	resp, body := a.do(c, "POST", "/login", strings.NewReader(form.Encode()),
		a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/runs" {
		a.t.Fatalf("login %s = %d %q\n%s", name, resp.StatusCode, resp.Header.Get("Location"), body)
	}
	if len(resp.Cookies()) == 0 || resp.Cookies()[0].Name != "groundwork_session" || !resp.Cookies()[0].HttpOnly {
		a.t.Fatalf("login set no HttpOnly session cookie: %v", resp.Cookies())
	}
}

func TestSmoke(t *testing.T) {
	a := startApp(t)
	c := a.client()

	resp, body := a.do(c, "GET", "/healthz", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("healthz = %d %q", resp.StatusCode, body)
	}

	resp, _ = a.do(c, "GET", "/runs", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Fatalf("GET /runs logged out = %d %q, want a redirect to /login", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, _ = a.do(c, "GET", "/runs/1?success=yes", nil, nil)
	if loc := resp.Header.Get("Location"); loc != "/login?next="+url.QueryEscape("/runs/1?success=yes") {
		t.Errorf("redirect keeps next: %q", loc)
	}
	resp, _ = a.do(c, "GET", "/runs", nil, map[string]string{"HX-Request": "true", "HX-Current-URL": a.url + "/runs/1"})
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("HX-Redirect") != "/login?next=%2Fruns%2F1" {
		t.Errorf("htmx logged out = %d HX-Redirect %q", resp.StatusCode, resp.Header.Get("HX-Redirect"))
	}

	resp, body = a.do(c, "GET", "/login", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `name="password"`) {
		t.Fatalf("login page = %d", resp.StatusCode)
	}
	for k, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP = %q", csp)
	}

	a.login(c, "rita")

	resp, body = a.do(c, "GET", "/runs", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, ">smoke</a>") {
		t.Fatalf("GET /runs = %d\n%s", resp.StatusCode, body)
	}
	run, err := a.db.RunByName(context.Background(), "smoke")
	if err != nil {
		t.Fatal(err)
	}
	resp, body = a.do(c, "GET", "/runs/"+itoa(run.ID), nil, nil)
	doc := parse(t, body)
	link, _ := doc.Find(`[data-testid=trajectory-row] a`).Attr("href")
	if resp.StatusCode != 200 || link == "" {
		t.Fatalf("run page = %d, trajectory link %q", resp.StatusCode, link)
	}
	resp, body = a.do(c, "GET", "/runs/"+itoa(run.ID)+"?q=smoke", nil, map[string]string{"HX-Request": "true"})
	if resp.StatusCode != 200 || strings.Contains(body, "<html") || !strings.Contains(body, "smoke-1") {
		t.Errorf("filter fragment = %d\n%s", resp.StatusCode, body)
	}

	resp, body = a.do(c, "GET", link, nil, map[string]string{"Accept-Encoding": "gzip"})
	if resp.StatusCode != 200 {
		t.Fatalf("trajectory page = %d", resp.StatusCode)
	}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("HTML not gzipped: %v", resp.Header)
	}
	resp, body = a.do(c, "GET", link, nil, nil)
	doc = parse(t, body)
	dec := doc.Find(`[data-testid=decision]`).First()
	vis := dec.Find(`[data-testid=visible-pane]`).Text()
	hid := dec.Find(`[data-testid=hidden-pane]`).Text()
	act := dec.Find(`[data-testid=action-pane]`).Text()
	if !strings.Contains(vis, "Please cancel NO6JO3 <script>alert(1)</script>") || strings.Contains(vis, "certificate_9921331") {
		t.Errorf("visible pane = %q", vis)
	}
	if !strings.Contains(hid, "certificate_9921331") {
		t.Errorf("hidden pane = %q", hid)
	}
	if !strings.Contains(act, "get_reservation_details") || !strings.Contains(act, `"status": "ok"`) {
		t.Errorf("action pane = %q", act)
	}
	if strings.Contains(body, "<script>alert") {
		t.Errorf("log content rendered as markup")
	}

	// Static assets are cacheable for a year; directories are not listed.
	resp, _ = a.do(c, "GET", "/static/js/htmx-2.0.11.min.js", nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("htmx = %d %q", resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	resp, _ = a.do(c, "GET", "/static/js/", nil, nil)
	if resp.StatusCode != 404 {
		t.Errorf("static dir listing = %d", resp.StatusCode)
	}

	// An upload goes to the importer through a temp file.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("format", "auto")
	fw, _ := mw.CreateFormFile("file", "up.jsonl")
	_, _ = fw.Write([]byte(smokeLog))
	_ = mw.Close()
	resp, body = a.do(c, "POST", "/import", &buf, a.sameOrigin(map[string]string{"Content-Type": mw.FormDataContentType()}))
	if resp.StatusCode != 200 || !strings.Contains(body, `data-testid="import-ok"`) || string(a.imp.content) != smokeLog || a.imp.name != "up.jsonl" {
		t.Errorf("upload = %d, importer got %q\n%s", resp.StatusCode, a.imp.name, body)
	}

	// A cross-origin POST is refused before it reaches a handler.
	resp, _ = a.do(c, "POST", "/logout", nil, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-origin POST = %d, want 403", resp.StatusCode)
	}
	resp, _ = a.do(c, "GET", "/runs", nil, nil)
	if resp.StatusCode != 200 {
		t.Errorf("the refused logout logged out anyway: %d", resp.StatusCode)
	}

	resp, _ = a.do(c, "POST", "/logout", nil, a.sameOrigin(nil))
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("logout = %d", resp.StatusCode)
	}
	resp, _ = a.do(c, "GET", "/runs", nil, nil)
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("after logout GET /runs = %d, want a redirect", resp.StatusCode)
	}
}

func TestAnnotatorCannotImport(t *testing.T) {
	a := startApp(t)
	c := a.client()
	a.login(c, "ann")
	for _, m := range []map[string]string{nil, {"HX-Request": "true"}} {
		resp, body := a.do(c, "GET", "/import", nil, m)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("annotator GET /import = %d, want 403", resp.StatusCode)
		}
		if m == nil && !strings.Contains(body, `data-testid="error"`) {
			t.Errorf("403 page = %s", body)
		}
	}
	resp, body := a.do(c, "GET", "/runs", nil, nil)
	if resp.StatusCode != 200 || strings.Contains(body, `href="/import"`) {
		t.Errorf("annotator runs page = %d; links to /import: %v", resp.StatusCode, strings.Contains(body, `href="/import"`))
	}
}

func TestLoginRefused(t *testing.T) {
	a := startApp(t)
	form := url.Values{"name": {"rita"}, "password": {"nope"}}
	resp, body := a.do(a.client(), "POST", "/login", strings.NewReader(form.Encode()),
		a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "Wrong name or password.") {
		t.Errorf("bad login = %d", resp.StatusCode)
	}
	if len(resp.Cookies()) != 0 {
		t.Errorf("a refused login set cookies: %v", resp.Cookies())
	}
}

func parse(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestSessionCarriesItsUser: logging in keeps the user's id beside the
// session, so every later request reads its user with the session (one
// statement), and that user is the one who logged in.
func TestSessionCarriesItsUser(t *testing.T) {
	a := startApp(t)
	c := a.client()
	a.login(c, "rita")
	u, _ := url.Parse(a.url)
	var token string
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "groundwork_session" {
			token = ck.Value
		}
	}
	if token == "" {
		t.Fatal("no session cookie")
	}
	ctx := store.WithSessionUser(context.Background())
	if _, found, err := a.db.SessionStore(nil).(scs.CtxStore).FindCtx(ctx, token); err != nil || !found {
		t.Fatalf("FindCtx = %v, %v", found, err)
	}
	if got, ok := store.SessionUser(ctx); !ok || got.Name != "rita" || got.Role != grounding.RoleResearcher {
		t.Errorf("the session carries %+v, %v; want rita", got, ok)
	}
	if resp, _ := a.do(c, "GET", "/runs", nil, nil); resp.StatusCode != 200 {
		t.Errorf("GET /runs = %d", resp.StatusCode)
	}
	// Logging out forgets the session, and its user with it.
	if resp, _ := a.do(c, "POST", "/logout", nil, a.sameOrigin(nil)); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("logout = %d", resp.StatusCode)
	}
	if _, found, _ := a.db.SessionStore(nil).(scs.CtxStore).FindCtx(store.WithSessionUser(context.Background()), token); found {
		t.Error("the session outlived the logout")
	}
}
