package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/store/storetest"
	"groundwork/web"
)

// BenchmarkReviewSwap measures the server time of the review screen's
// next-item swap: an annotator's htmx POST of a verdict through the real
// router (session, middleware), which records the verdict, claims the next
// item and renders it (three panes, why queued, progress). Sequential
// requests; p50/p99 per request.
//
//	TEST_DATABASE_URL=… go test ./web -run '^$' -bench ReviewSwap -benchtime 500x
func BenchmarkReviewSwap(b *testing.B) {
	for name, open := range benchStores(b) {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			var pool []*grounding.Trajectory
			for i := range 1500 {
				pool = append(pool, storetest.Ambiguous("swap", i))
			}
			if _, err := db.ImportTrajectories(ctx, "swap", storetest.FileMeta("swap.jsonl"), storetest.Seq(pool...)); err != nil {
				b.Fatal(err)
			}
			post, first := reviewClient(b, db)
			item := first
			var d []time.Duration
			for b.Loop() {
				start := time.Now()
				status, body := post("/review/"+item+"/verdict", url.Values{"verdict": {"pass"}})
				d = append(d, time.Since(start))
				m := itemRe.FindStringSubmatch(body)
				if status != 200 || m == nil {
					b.Fatalf("verdict on %s = %d, next item %v", item, status, m)
				}
				item = m[1]
			}
			slices.Sort(d)
			pct := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / 1e6 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
		})
	}
}

// reviewClient logs an annotator in against a server over db and returns
// an htmx POST func and the item id of the first review screen.
func reviewClient(b *testing.B, db *store.DB) (func(path string, form url.Values) (int, string), string) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-ann"), bcrypt.MinCost)
	if _, err := db.CreateUser(context.Background(), "ann", grounding.RoleAnnotator, hash); err != nil {
		b.Fatal(err)
	}
	h, err := web.NewHandler(web.Config{UploadDir: b.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, web.Importer{DB: db})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, form url.Values) (int, string) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("HX-Request", "true")
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(url.Values{"name": {"ann"}, "password": {"password-ann"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusSeeOther {
		b.Fatalf("login: %v %v", err, resp)
	}
	resp.Body.Close()
	status, body := do("GET", "/review", nil)
	m := itemRe.FindStringSubmatch(body)
	if status != 200 || m == nil {
		b.Fatalf("GET /review = %d\n%s", status, body)
	}
	return func(path string, form url.Values) (int, string) { return do("POST", path, form) }, m[1]
}
