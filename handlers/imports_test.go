package handlers

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"groundwork/grounding"
)

// multipartBody builds an upload with the file part last, as browsers send
// the form's fields in order.
func multipartBody(t *testing.T, run, format, fileName string, content []byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("run", run)
	_ = mw.WriteField("format", format)
	if fileName != "" || content != nil {
		fw, err := mw.CreateFormFile("file", fileName)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(content)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func TestImport(t *testing.T) {
	const limit = 1000
	content := []byte(`{"id":"t-1","messages":[]}` + "\n")
	tests := []struct {
		name    string
		file    string
		content []byte
		format  string
		result  grounding.ImportResult
		err     error
		status  int
		testid  string
		text    string
	}{
		{name: "ok", file: "a.jsonl", content: content, format: "auto",
			result: grounding.ImportResult{File: "a.jsonl", Format: "canonical", RunID: 3, RunName: "a", Trajectories: 1200, Messages: 5, Decisions: 2},
			status: 200, testid: "import-ok", text: "1,200 trajectories"},
		{name: "duplicate", file: "a.jsonl", content: content, format: "canonical",
			result: grounding.ImportResult{Duplicate: true, RunName: "b", PreviousRun: "a", PreviousAt: time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)},
			status: 200, testid: "import-duplicate", text: "already imported into run a on 2026-03-01 09:30 UTC; nothing was added"},
		{name: "over the cap", file: "big.jsonl", content: bytes.Repeat([]byte("x"), limit+1), format: "auto",
			status: 413, testid: "import-error", text: "file is larger than the 1000 bytes upload limit"},
		{name: "exactly the cap", file: "a.jsonl", content: bytes.Repeat([]byte("x"), limit), format: "auto",
			result: grounding.ImportResult{RunID: 1, RunName: "a"}, status: 200, testid: "import-ok"},
		{name: "invalid content", file: "bad.jsonl", content: content, format: "auto",
			err:    fmt.Errorf("store: import bad.jsonl: %w", &grounding.ImportError{File: "bad.jsonl", Record: 3, Line: 4, Field: "messages[2].role", Expected: "one of system, user, assistant, tool", Got: `"robot"`}),
			status: 422, testid: "import-error", text: `bad.jsonl: record 3 (line 4): messages[2].role: expected one of system, user, assistant, tool; got "robot"`},
		{name: "id clash", file: "a.jsonl", content: content, format: "auto",
			err:    fmt.Errorf("a.jsonl: record 0: trajectory id t-1 already exists in run a: %w", grounding.ErrConflict),
			status: 422, testid: "import-error", text: "trajectory id t-1 already exists in run a"},
		{name: "internal failure", file: "a.jsonl", content: content, format: "auto", err: errBoom, status: 500},
		{name: "no file", format: "auto", status: 422, testid: "import-error", text: "Choose a file"},
		{name: "unknown format", file: "a.jsonl", content: content, format: "swe-agent", status: 422, testid: "import-error", text: "unknown format"},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				dir := t.TempDir()
				called := false
				st := &fakeStore{t: t, ImportFileFn: func(runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error) {
					called = true
					got, err := os.ReadFile(path)
					if err != nil || !bytes.Equal(got, tt.content) {
						t.Errorf("temp file content differs (err %v)", err)
					}
					if runName != "my run" || displayName != tt.file {
						t.Errorf("ImportFile(%q, %q)", runName, displayName)
					}
					if want, _ := grounding.ParseFormat(tt.format); format != want {
						t.Errorf("format = %q, want %q", format, want)
					}
					return tt.result, tt.err
				}}
				h := testRouter(st, &fakeSessions{}, researcher, dir, limit)
				body, ct := multipartBody(t, " my run ", tt.format, tt.file, tt.content)
				req := httptest.NewRequest("POST", "/import", body)
				req.Header.Set("Content-Type", ct)
				rec, doc := do(t, h, req, m.htmx)
				if rec.Code != tt.status {
					t.Fatalf("status = %d, want %d\n%s", rec.Code, tt.status, rec.Body)
				}
				if rec.Code == 413 && called {
					t.Errorf("ImportFile called for an oversized file")
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Errorf("temp files left behind: %v", entries)
				}
				if hasHTML(rec) == m.htmx {
					t.Errorf("<html> present = %v for htmx=%v", hasHTML(rec), m.htmx)
				}
				if tt.status == 500 {
					if strings.Contains(rec.Body.String(), "secret") {
						t.Errorf("500 leaks the error")
					}
					return
				}
				el := doc.Find(`[data-testid=` + tt.testid + `]`)
				if el.Length() != 1 {
					t.Fatalf("no [data-testid=%s] in %s", tt.testid, rec.Body)
				}
				if strings.Contains(el.Text(), "store:") {
					t.Errorf("message keeps an internal prefix: %q", el.Text())
				}
				if !strings.Contains(el.Text(), tt.text) {
					t.Errorf("%s = %q, want it to contain %q", tt.testid, el.Text(), tt.text)
				}
			})
		}
	}
}

func TestImportForm(t *testing.T) {
	h := testRouter(&fakeStore{t: t}, &fakeSessions{}, researcher, t.TempDir(), 1<<30)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/import", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	form := doc.Find(`form[data-testid=import-form]`)
	if v, _ := form.Attr("enctype"); v != "multipart/form-data" {
		t.Errorf("enctype = %q", v)
	}
	var opts []string
	form.Find(`select[name=format] option`).Each(func(_ int, s *goquery.Selection) {
		v, _ := s.Attr("value")
		opts = append(opts, v)
	})
	if got := strings.Join(opts, ","); got != "auto,canonical,tau-bench,openai-jsonl" {
		t.Errorf("formats = %s", got)
	}
	if !strings.Contains(doc.Text(), "1 GiB") {
		t.Errorf("the limit is not shown")
	}
}

func TestImportNotMultipart(t *testing.T) {
	h := testRouter(&fakeStore{t: t}, &fakeSessions{}, researcher, t.TempDir(), 1000)
	req := httptest.NewRequest("POST", "/import", strings.NewReader("run=x"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec, _ := do(t, h, req, false)
	if rec.Code != 400 {
		t.Errorf("status %d, want 400", rec.Code)
	}
}

func TestByteSize(t *testing.T) {
	for in, want := range map[int64]string{1 << 30: "1 GiB", 1000: "1000 bytes", 1536 << 10: "1.5 MiB", 2 << 40: "2 TiB"} {
		if got := byteSize(in); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestImportRunNameRefused: a run name Postgres cannot store, or that would
// display as another, is refused with a sentence before anything is read
// into the store; a file name is cleaned instead.
func TestImportRunNameRefused(t *testing.T) {
	for _, run := range []string{"nul\x00name", "bad\xffrun", "evil\u202Etxt.lmth", strings.Repeat("r", 201)} {
		st := &fakeStore{t: t, ImportFileFn: func(runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error) {
			t.Errorf("ImportFile called for run %q", runName)
			return grounding.ImportResult{}, nil
		}}
		h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1000)
		body, ct := multipartBody(t, run, "auto", "a.jsonl", []byte(`{"id":"t"}`))
		req := httptest.NewRequest("POST", "/import", body)
		req.Header.Set("Content-Type", ct)
		rec, doc := do(t, h, req, true)
		if msg := doc.Find(`[data-testid=import-error]`).Text(); rec.Code != 422 || !strings.Contains(msg, "A run name") || !strings.Contains(msg, "Nothing was imported") {
			t.Errorf("run %q: %d %q", run, rec.Code, msg)
		}
	}
	var got string
	st := &fakeStore{t: t, ImportFileFn: func(runName, path, displayName string, format grounding.Format) (grounding.ImportResult, error) {
		got = displayName
		return grounding.ImportResult{RunID: 1, RunName: "r"}, nil
	}}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1000)
	body, ct := multipartBody(t, "", "auto", "x\xffy\u202E.jsonl", []byte(`{"id":"t"}`))
	req := httptest.NewRequest("POST", "/import", body)
	req.Header.Set("Content-Type", ct)
	if rec, _ := do(t, h, req, true); rec.Code != 200 || got != "x\uFFFDy\uFFFD.jsonl" {
		t.Errorf("upload of a file with a raw name = %d, imported as %q", rec.Code, got)
	}
}
