package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// badInputs are the files of testdata/bad and what the refusal must say:
// the file, and where and what is wrong.
var badInputs = map[string][]string{
	"call-id-reused.jsonl":               {"record 0", "messages[1].tool_calls[1].id", "already awaiting an answer"},
	"canonical-then-openai.jsonl":        {"record 1", "line 2", "messages[1].tool_calls[0]", "canonical tool call"},
	"deep-nesting-in-arguments.jsonl":    {"record 0", "nested at most 10000 levels"},
	"deep-nesting.json":                  {"first element is an array"},
	"duplicate-ids.jsonl":                {"record 1", "line 2", "unique within the file", "record 0"},
	"empty-id.jsonl":                     {"record 0", "id", "non-empty string"},
	"empty.jsonl":                        {"file is empty"},
	"gzip-compressed.jsonl.gz":           {"gzip-compressed", "decompress"},
	"hidden-at-out-of-range.jsonl":       {"hidden[0].at", "message index from 0 to 3"},
	"invalid-utf8.jsonl":                 {"record 0", "UTF-8", "0xff"},
	"json-scalar.json":                   {"expected a JSON array of τ-bench records, JSON Lines"},
	"messages-missing.jsonl":             {"without \"messages\""},
	"not-json.txt":                       {"line 1", "This is a plain text file"},
	"nul-byte-outside-string.jsonl":      {"not valid JSON"},
	"openai-function-without-name.jsonl": {"messages[1].tool_calls[0].function.name"},
	"pretty-printed.json":                {"does not end on its first line"},
	"second-record-broken.jsonl":         {"record 1", "line 2", "truncated JSON"},
	"swe-binary-garbage.traj":            {"expected a JSON array"},
	"swe-garbage-after-header.traj":      {"record 0", "invalid character"},
	"tau-element-not-object.json":        {"first element is a number"},
	"tau-missing-traj.json":              {"record 0", "traj", "the field is missing"},
	"tau-traj-not-array.json":            {"record 0", "traj", "array of chat messages"},
	"tool-calls-on-user.jsonl":           {"messages[0].tool_calls", "only on assistant messages"},
	"tool-result-without-call.jsonl":     {"messages[1].tool_call_id", "earlier tool call"},
	"trailing-garbage.jsonl":             {"record 0", "after top-level value"},
	"truncated-object.jsonl":             {"record 0", "truncated JSON"},
	"truncated-tau-array.json":           {"truncated JSON"},
	"unknown-role.jsonl":                 {"messages[0].role", "system, user, assistant, tool", "robot"},
	"utf16-encoded.jsonl":                {"UTF-16"},
	"visibility-bad.jsonl":               {"messages[0].visibility", "secret"},
	"whitespace-only.jsonl":              {"file is empty"},
	"wrong-type-content.jsonl":           {"messages[0].content", "string or null", "42"},
	"wrong-type-id.jsonl":                {"id", "expected a string", "5"},
	"wrong-type-messages.jsonl":          {"record 0 (line 1): messages: expected an array of messages"},
	"wrong-type-reward.jsonl":            {"reward", "expected a number", "high"},
	"zip-bomb.jsonl.gz":                  {"gzip-compressed"},
}

// poolState is what a refused file must leave untouched.
func poolState(t *testing.T, db *store.DB) string {
	t.Helper()
	runs, err := db.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(r.Name)
		b.WriteString(":")
		b.WriteString(strings.Join([]string{itoa(int64(r.Trajectories)), itoa(int64(r.Decisions)), itoa(int64(r.Imports)), itoa(int64(r.Queued))}, "/"))
		b.WriteString(" ")
	}
	return b.String()
}

// TestBadInputs feeds every file of testdata/bad to the importer the CLI
// uses and to the upload page: each is refused with a message that names the
// file and says what is wrong, the database is unchanged, and the server
// keeps answering.
func TestBadInputs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "bad", "*"))
	if err != nil || len(files) < 30 {
		t.Fatalf("testdata/bad has %d files (%v), want at least 30", len(files), err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "bad.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	imp := web.Importer{DB: db}
	// A good file first, so "unchanged" is about a pool that has data.
	if _, err := imp.ImportFile(ctx, "good", filepath.Join("..", "grounding", "testdata", "import", "canonical.jsonl"), "canonical.jsonl", grounding.FormatAuto); err != nil {
		t.Fatal(err)
	}
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-rita"), bcrypt.MinCost)
	if _, err := db.CreateUser(ctx, "rita", grounding.RoleResearcher, hash); err != nil {
		t.Fatal(err)
	}
	h, err := web.NewHandler(web.Config{UploadDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, db, imp)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	a := &app{t: t, url: srv.URL, db: db}
	c := a.client()
	a.login(c, "rita")
	before := poolState(t, db)

	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		want, ok := badInputs[name]
		if !ok {
			t.Errorf("%s: no expectation in badInputs", name)
			continue
		}
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			_, err := imp.ImportFile(ctx, "", path, name, grounding.FormatAuto)
			if err == nil {
				t.Fatal("import succeeded")
			}
			for _, w := range append([]string{name}, want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CLI error %q does not say %q", err, w)
				}
			}
			if got := poolState(t, db); got != before {
				t.Errorf("pool changed: %s, was %s", got, before)
			}

			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			fw, _ := mw.CreateFormFile("file", name)
			fw.Write(data)
			mw.WriteField("format", "auto")
			mw.Close()
			resp, page := a.do(c, "POST", "/import", &body, a.sameOrigin(map[string]string{"Content-Type": mw.FormDataContentType()}))
			if resp.StatusCode != http.StatusUnprocessableEntity {
				t.Errorf("upload = %d, want 422", resp.StatusCode)
			}
			text := parse(t, page).Text()
			for _, w := range append([]string{name}, want...) {
				if !strings.Contains(text, w) {
					t.Errorf("upload page does not say %q:\n%s", w, text)
					break
				}
			}
			if got := poolState(t, db); got != before {
				t.Errorf("pool changed after upload: %s, was %s", got, before)
			}
			if resp, _ := a.do(c, "GET", "/healthz", nil, nil); resp.StatusCode != 200 {
				t.Errorf("healthz after %s = %d", name, resp.StatusCode)
			}
		})
	}
	for name := range badInputs {
		if !seen[name] {
			t.Errorf("badInputs names %s, which testdata/bad lacks", name)
		}
	}
}

// TestBadInputHugeLine: a 200 MB single line is refused at the 64 MiB record
// cap, naming the record, without reading it whole into memory.
func TestBadInputHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 200 MB file")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "huge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "huge-line.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"huge","messages":[{"role":"user","content":"`)
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 200 {
		f.Write(chunk)
	}
	f.WriteString("\"}]}\n")
	f.Close()
	_, err = web.Importer{DB: db}.ImportFile(ctx, "", path, "huge-line.jsonl", grounding.FormatAuto)
	if err == nil || !strings.Contains(err.Error(), "huge-line.jsonl") || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("import of a 200 MB line = %v, want a refusal at the 64 MiB record cap", err)
	}
	if runs, _ := db.Runs(ctx); len(runs) != 0 {
		t.Errorf("the refused file created runs: %+v", runs)
	}
}
