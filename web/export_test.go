package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/web"
	"groundwork/web/demo"
)

// bearer is the header of an API token.
func bearer(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

func TestExportAuth(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	rita, _ := a.db.UserByName(ctx, "rita")
	ann, _ := a.db.UserByName(ctx, "ann")
	_, good, err := a.db.CreateAPIToken(ctx, rita.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	revoked, old, _ := a.db.CreateAPIToken(ctx, rita.ID, "old")
	if err := a.db.RevokeAPIToken(ctx, rita.ID, revoked.ID); err != nil {
		t.Fatal(err)
	}
	// The CLI and page refuse annotators tokens; one made directly must
	// still not export.
	_, annTok, _ := a.db.CreateAPIToken(ctx, ann.ID, "sneaky")

	const path = "/api/export/smoke/sft.jsonl?complete=false"
	c := a.client()
	for _, tt := range []struct {
		name   string
		hdr    map[string]string
		status int
		says   string
	}{
		{"no credentials", nil, 401, "Log in, or send an API token"},
		{"wrong token", bearer(good + "x"), 401, "not valid"},
		{"revoked token", bearer(old), 401, "was revoked"},
		{"basic auth", map[string]string{"Authorization": "Basic cml0YTpwdw=="}, 401, "Bearer TOKEN"},
		{"annotator token", bearer(annTok), 403, "annotator"},
		{"good token", bearer(good), 200, `{"groundwork_export"`},
	} {
		resp, body := a.do(c, "GET", path, nil, tt.hdr)
		if resp.StatusCode != tt.status || !strings.Contains(body, tt.says) {
			t.Errorf("%s: GET = %d %q, want %d saying %q", tt.name, resp.StatusCode, body, tt.status, tt.says)
		}
		if tt.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="groundwork"`) {
			t.Errorf("%s: WWW-Authenticate = %q", tt.name, resp.Header.Get("WWW-Authenticate"))
		}
		if tt.status != 200 && (strings.Contains(body, "groundwork_export") || resp.Header.Get("Location") != "") {
			t.Errorf("%s: partial export or redirect: %v %q", tt.name, resp.Header, body)
		}
	}
	// A token request sets no session cookie.
	resp, _ := a.do(c, "GET", path, nil, bearer(good))
	if len(resp.Cookies()) != 0 {
		t.Errorf("token request set cookies %v", resp.Cookies())
	}
	// The use is recorded, off the request path.
	deadline := time.Now().Add(5 * time.Second)
	for {
		ts, _ := a.db.APITokens(ctx, rita.ID)
		if len(ts) == 2 && !ts[1].LastUsedAt.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("last use never recorded: %+v", ts)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Browser sessions: researchers download, annotators are refused, on
	// the API and on the page.
	annC := a.client()
	a.login(annC, "ann")
	if resp, body := a.do(annC, "GET", path, nil, nil); resp.StatusCode != 403 || strings.Contains(body, "groundwork_export") {
		t.Errorf("annotator session = %d %q", resp.StatusCode, body)
	}
	if resp, _ := a.do(annC, "GET", "/export", nil, nil); resp.StatusCode != 403 {
		t.Errorf("annotator export page = %d", resp.StatusCode)
	}
	if resp, _ := a.do(annC, "GET", "/tokens", nil, nil); resp.StatusCode != 403 {
		t.Errorf("annotator tokens page = %d", resp.StatusCode)
	}
	ritaC := a.client()
	a.login(ritaC, "rita")
	resp, body := a.do(ritaC, "GET", path, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(body, `"groundwork_trailer":{"complete":true`) {
		t.Errorf("researcher session download = %d %q", resp.StatusCode, body)
	}
	resp, body = a.do(ritaC, "GET", "/export?run=smoke", nil, nil)
	doc := parse(t, body)
	if href, _ := doc.Find(`[data-testid=export-link]`).Attr("href"); resp.StatusCode != 200 || href != "/api/export/smoke/sft.jsonl" {
		t.Errorf("export page = %d, link %q", resp.StatusCode, href)
	}
	if doc.Find(`[data-testid=nav-export]`).Length() != 1 {
		t.Error("no Export entry in the navigation")
	}
	// A token made on the page works at once; the page is a same-origin POST.
	resp, body = a.do(ritaC, "POST", "/tokens", strings.NewReader("name=page"),
		a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	secret := strings.TrimSpace(parse(t, body).Find(`[data-testid=token-secret]`).Text())
	if resp.StatusCode != 201 || !strings.HasPrefix(secret, "gw_") {
		t.Fatalf("create token on the page = %d %q", resp.StatusCode, secret)
	}
	if resp, _ := a.do(a.client(), "GET", path, nil, bearer(secret)); resp.StatusCode != 200 {
		t.Errorf("page token = %d", resp.StatusCode)
	}
}

// leakyLog is a canonical JSONL pool whose hidden context is full of unique
// markers: hidden messages of every role (a hidden call and its hidden
// answer included) and hidden entries of every kind.
func leakyLog(n int) ([]byte, []string) {
	var markers []string
	mark := func(kind string, i int) string {
		m := fmt.Sprintf("LEAK%s%03dZ", kind, i)
		markers = append(markers, m)
		return m
	}
	var b bytes.Buffer
	for i := range n {
		hint, instr, call, obs, ref, dbs, note, ans := mark("HINT", i), mark("INSTR", i), mark("CALL", i), mark("OBS", i), mark("REF", i), mark("DB", i), mark("NOTE", i), mark("ANS", i)
		t := map[string]any{
			"id": fmt.Sprintf("leak-%d", i), "parent_id": fmt.Sprintf("leak-task-%d", i/3), "domain": "airline", "reward": 1, "success": true,
			"tools": []any{map[string]any{"name": "get_reservation_details", "parameters": map[string]any{"type": "object", "properties": map[string]any{"reservation_id": map[string]any{"type": "string"}}}}},
			"messages": []any{
				map[string]any{"role": "system", "content": "Airline policy."},
				map[string]any{"role": "system", "content": "teacher hint " + hint, "visibility": "hidden", "hidden_kind": "teacher_hint"},
				map[string]any{"role": "user", "content": fmt.Sprintf("Please look up reservation RES%04d.", i)},
				map[string]any{"role": "user", "content": "simulator instruction " + instr, "visibility": "hidden", "hidden_kind": "user_instruction"},
				map[string]any{"role": "assistant", "content": nil, "visibility": "hidden", "tool_calls": []any{map[string]any{"id": "h1", "name": "get_reservation_details", "arguments": map[string]any{"reservation_id": call}}}},
				map[string]any{"role": "tool", "tool_call_id": "h1", "name": "get_reservation_details", "content": "secret answer " + obs, "visibility": "hidden"},
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "name": "get_reservation_details", "arguments": map[string]any{"reservation_id": fmt.Sprintf("RES%04d", i)}}}},
				map[string]any{"role": "tool", "tool_call_id": "c1", "name": "get_reservation_details", "content": fmt.Sprintf(`{"reservation_id":"RES%04d","status":"active"}`, i)},
				map[string]any{"role": "assistant", "content": fmt.Sprintf("Reservation RES%04d is active.", i)},
				map[string]any{"role": "assistant", "content": "private aside " + note, "visibility": "hidden", "hidden_kind": "teacher_hint"},
				// A visible call whose only answer the agent never saw
				// (once refused at import: the pairing differed).
				map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c2", "name": "get_reservation_details", "arguments": map[string]any{"reservation_id": fmt.Sprintf("RES%04d", i)}}}},
				map[string]any{"role": "tool", "tool_call_id": "c2", "name": "get_reservation_details", "content": "collector-only answer " + ans, "visibility": "hidden", "hidden_kind": "db_state"},
			},
			"hidden": []any{
				map[string]any{"kind": "reference_actions", "content": []any{map[string]any{"name": "get_reservation_details", "arguments": map[string]any{"reservation_id": ref}}}},
				map[string]any{"kind": "db_state", "content": map[string]any{"secret": dbs}, "at": 2},
			},
		}
		line, _ := json.Marshal(t)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), markers
}

// TestExportNeverLeaks imports logs whose hidden context holds unique
// markers and downloads every format: none may contain any marker, while the
// visible values are there.
func TestExportNeverLeaks(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	log, markers := leakyLog(9)
	if _, err := web.ImportBytes(ctx, a.db, "leaky", "leaky.jsonl", log); err != nil {
		t.Fatal(err)
	}
	rita, _ := a.db.UserByName(ctx, "rita")
	_, tok, _ := a.db.CreateAPIToken(ctx, rita.ID, "t")
	for _, file := range []string{"sft.jsonl", "masks.jsonl", "decisions.csv"} {
		for _, q := range []string{"", "?include_empty=true&complete=false&ids=true"} {
			resp, body := a.do(a.client(), "GET", "/api/export/leaky/"+file+q, nil, bearer(tok))
			if resp.StatusCode != 200 || !strings.Contains(body, `"complete":true`) {
				t.Fatalf("GET %s%s = %d\n%s", file, q, resp.StatusCode, body)
			}
			for _, m := range markers {
				if strings.Contains(body, m) {
					t.Errorf("%s%s contains hidden marker %s", file, q, m)
				}
			}
			if strings.Contains(body, `"leak-0"`) == false && file != "decisions.csv" && q != "" {
				t.Errorf("%s%s lacks trajectory leak-0:\n%s", file, q, body)
			}
		}
	}
	_, sft := a.do(a.client(), "GET", "/api/export/leaky/sft.jsonl", nil, bearer(tok))
	if !strings.Contains(sft, "RES0004") || strings.Count(sft, `"messages"`) != 9 {
		t.Errorf("SFT export lacks the visible projection:\n%s", sft)
	}
}

// sftLines returns the data lines of an SFT download and checks that the
// first is the header and the last a complete trailer.
func sftLines(t *testing.T, body string) []string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], `{"groundwork_export"`) || !strings.HasPrefix(lines[len(lines)-1], `{"groundwork_trailer":{"complete":true`) {
		t.Fatalf("SFT download lacks header or trailer:\n%.500s", body)
	}
	return lines[1 : len(lines)-1]
}

// checkSFTRoundTrip downloads the SFT export of run, re-imports it through
// the OpenAI-chat importer and compares, trajectory by trajectory, the
// messages with the stored visible projection and the weights with the
// stored masks (weight 1 exactly when every decision of the message has
// mask 1).
func checkSFTRoundTrip(t *testing.T, a *app, tok, run string) int {
	t.Helper()
	ctx := context.Background()
	resp, body := a.do(a.client(), "GET", "/api/export/"+run+"/sft.jsonl?complete=false&include_empty=true&ids=true", nil, bearer(tok))
	if resp.StatusCode != 200 {
		t.Fatalf("SFT download = %d %s", resp.StatusCode, body)
	}
	lines := sftLines(t, body)
	data := strings.Join(lines, "\n") + "\n"
	var got []*grounding.Trajectory
	for tr, err := range grounding.Read(strings.NewReader(data), "sft.jsonl", grounding.FormatOpenAI) {
		if err != nil {
			t.Fatalf("re-import of the SFT export: %v", err)
		}
		got = append(got, tr)
	}
	r, err := a.db.RunByName(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(lines) || len(got) != r.Trajectories {
		t.Fatalf("re-imported %d trajectories from %d lines, run has %d", len(got), len(lines), r.Trajectories)
	}
	for i, tr := range got {
		h, err := a.db.TrajectoryByExtID(ctx, r.ID, tr.ID)
		if err != nil {
			t.Fatalf("re-imported id %q: %v", tr.ID, err)
		}
		if tr.ParentID != h.ParentID {
			t.Errorf("%s: parent %q, want %q", tr.ID, tr.ParentID, h.ParentID)
		}
		stored, err := a.db.LoadTrajectory(ctx, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		var want []grounding.Message
		for k, m := range stored.Messages {
			if !m.IsHidden() {
				m.Index, m.Visibility, m.HiddenKind, m.Error = k, "", "", false
				want = append(want, m)
			}
		}
		var have []grounding.Message
		for _, m := range tr.Messages {
			m.Index, m.Error = 0, false
			have = append(have, m)
		}
		for k := range want {
			want[k].Index = 0
		}
		if !reflect.DeepEqual(normalizeCalls(have), normalizeCalls(want)) {
			t.Errorf("%s: re-imported messages differ from the visible projection\n got %+v\nwant %+v", tr.ID, have, want)
		}
		if !reflect.DeepEqual(tr.Tools, stored.Tools) && (len(tr.Tools) > 0 || len(stored.Tools) > 0) {
			t.Errorf("%s: tools %+v, want %+v", tr.ID, tr.Tools, stored.Tools)
		}
		// Weights, read from the line, against the stored masks.
		var line struct {
			Messages []struct {
				Role   string
				Weight *int
			}
		}
		if err := json.Unmarshal([]byte(lines[i]), &line); err != nil {
			t.Fatal(err)
		}
		ds, err := a.db.Decisions(ctx, h.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		vis := 0
		for k, m := range stored.Messages {
			if m.IsHidden() {
				continue
			}
			lm := line.Messages[vis]
			vis++
			if m.Role != grounding.RoleAssistant {
				if lm.Weight != nil {
					t.Errorf("%s message %d (%s) has a weight", tr.ID, k, m.Role)
				}
				continue
			}
			n, all := 0, true
			for _, d := range ds {
				if d.Message == k {
					n++
					all = all && d.Mask == 1
				}
			}
			want := 0
			if n > 0 && all {
				want = 1
			}
			if lm.Weight == nil || *lm.Weight != want {
				got := "none"
				if lm.Weight != nil {
					got = fmt.Sprint(*lm.Weight)
				}
				t.Errorf("%s message %d: weight %s, want %d (masks of its %d decisions)", tr.ID, k, got, want, n)
			}
		}
	}
	return len(got)
}

// normalizeCalls makes tool-call arguments comparable as JSON values.
func normalizeCalls(ms []grounding.Message) []grounding.Message {
	out := make([]grounding.Message, len(ms))
	for i, m := range ms {
		if len(m.ToolCalls) > 0 {
			calls := make([]grounding.ToolCall, len(m.ToolCalls))
			for k, c := range m.ToolCalls {
				if len(c.Arguments) > 0 {
					var v any
					if json.Unmarshal(c.Arguments, &v) == nil {
						c.Arguments, _ = json.Marshal(v)
					}
				}
				calls[k] = c
			}
			m.ToolCalls = calls
		} else {
			m.ToolCalls = nil
		}
		out[i] = m
	}
	return out
}

func TestSFTRoundTrip(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	if _, err := web.ImportBytes(ctx, a.db, demo.RunName, demo.FileName, demo.JSONL); err != nil {
		t.Fatal(err)
	}
	log, _ := leakyLog(4)
	if _, err := web.ImportBytes(ctx, a.db, "leaky", "leaky.jsonl", log); err != nil {
		t.Fatal(err)
	}
	rita, _ := a.db.UserByName(ctx, "rita")
	_, tok, _ := a.db.CreateAPIToken(ctx, rita.ID, "t")
	for _, run := range []string{demo.RunName, "leaky", "smoke"} {
		checkSFTRoundTrip(t, a, tok, run)
	}
}

func TestSFTRoundTripRealTau(t *testing.T) {
	needRealTau(t)
	a := startApp(t)
	ctx := context.Background()
	if _, err := (web.Importer{DB: a.db}).ImportFile(ctx, "tau", realTauAirline, "gpt-4o-airline.json", grounding.FormatAuto); err != nil {
		t.Fatal(err)
	}
	rita, _ := a.db.UserByName(ctx, "rita")
	_, tok, _ := a.db.CreateAPIToken(ctx, rita.ID, "t")
	if n := checkSFTRoundTrip(t, a, tok, "tau"); n != 200 {
		t.Errorf("round trip covered %d trajectories, want 200", n)
	}
}

func TestCLIExportAndToken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "smoke.jsonl"), []byte(smokeLog), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cli(t, dir, "", "import", "--run", "smoke", filepath.Join(dir, "smoke.jsonl")); err != nil {
		t.Fatal(err)
	}
	for _, u := range [][2]string{{"rita", "researcher"}, {"ann", "annotator"}} {
		if _, _, err := cli(t, dir, "password-"+u[0]+"\n", "user", "add", u[0], "--role", u[1]); err != nil {
			t.Fatal(err)
		}
	}
	out, stderr, err := cli(t, dir, "", "token", "create", "--user", "rita", "--name", "ci")
	secret := strings.TrimSpace(out)
	if err != nil || !strings.HasPrefix(secret, "gw_") || strings.Count(out, "\n") != 1 || !strings.Contains(stderr, "shown once") {
		t.Fatalf("token create = %v %q %q", err, out, stderr)
	}
	if _, _, err := cli(t, dir, "", "token", "create", "--user", "ann"); err == nil || !strings.Contains(err.Error(), "only researchers and admins") {
		t.Errorf("token for an annotator = %v", err)
	}
	out, _, err = cli(t, dir, "", "token", "list", "--user", "rita")
	if err != nil || !strings.Contains(out, secret[:9]) || strings.Contains(out, secret) || !strings.Contains(out, "active") {
		t.Errorf("token list = %v %q", err, out)
	}

	for _, format := range []string{"masks", "sft", "csv"} {
		out, stderr, err = cli(t, dir, "", "export", "--run", "smoke", "--format", format, "--scale", "8B", "--complete=false", "--include-empty")
		if err != nil || !strings.Contains(stderr, "exported 1 trajectories") {
			t.Fatalf("export %s = %v %q", format, err, stderr)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		var lines []string
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		first, last := strings.TrimPrefix(lines[0], "# "), strings.TrimPrefix(lines[len(lines)-1], "# ")
		if !strings.HasPrefix(first, `{"groundwork_export":{"version":1,"format":"`+format+`"`) || !strings.Contains(first, `"scale":"8B"`) ||
			!strings.HasPrefix(last, `{"groundwork_trailer":{"complete":true,"trajectories":1`) {
			t.Errorf("export %s:\n%s", format, out)
		}
		if strings.Contains(out, "certificate_9921331") {
			t.Errorf("export %s leaks the hidden hint", format)
		}
	}
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"export", "--run", "nope"}, `no run named "nope"`},
		{[]string{"export", "--run", "smoke", "--scale", "70B"}, "1.7B, 4B, 8B, 14B, 30B-A3B"},
		{[]string{"export", "--run", "smoke", "--view", "v1"}, `run "smoke" has no saved view named "v1"`},
		{[]string{"export", "--run", "smoke", "--format", "parquet"}, "masks, sft or csv"},
		{[]string{"export"}, "usage"},
	} {
		out, _, err := cli(t, dir, "", tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.says) || out != "" {
			t.Errorf("%v = %v, output %q; want an error saying %q and no output", tt.args, err, out, tt.says)
		}
	}
	out, _, err = cli(t, dir, "", "token", "revoke", "--user", "rita", "1")
	if err != nil || !strings.Contains(out, "revoked token 1") {
		t.Errorf("token revoke = %v %q", err, out)
	}
}
