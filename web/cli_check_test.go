package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var checkFixture = filepath.Join("..", "grounding", "testdata", "check", "airline-sample.jsonl")

// TestRunCheckJSON: one JSON object per decision in the shape, then
// a summary with counts per verdict and reason, the automatic share and
// the pool audit figures.
func TestRunCheckJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runCheck(context.Background(), []string{"--json", checkFixture}, &out, &errb); err != nil {
		t.Fatalf("runCheck = %v\n%s", err, errb.String())
	}
	var lines []map[string]json.RawMessage
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) < 2 {
		t.Fatalf("runCheck printed %d lines", len(lines))
	}
	decisions, last := lines[:len(lines)-1], lines[len(lines)-1]
	want := []string{"trajectory", "source_index", "message", "call", "tool", "verdict", "mask", "reasons", "args"}
	byKey := map[string]map[string]json.RawMessage{}
	for _, d := range decisions {
		if len(d) != len(want) {
			t.Errorf("decision line has keys %v, want exactly %v", keys(d), want)
		}
		for _, k := range want {
			if _, ok := d[k]; !ok {
				t.Errorf("decision line lacks %q: %v", k, keys(d))
			}
		}
		var args []map[string]json.RawMessage
		if err := json.Unmarshal(d["args"], &args); err != nil {
			t.Fatalf("args: %v", err)
		}
		for _, a := range args {
			for _, k := range []string{"path", "value", "status", "evidence"} {
				if _, ok := a[k]; !ok || len(a) != 4 {
					t.Errorf("arg %v lacks %q or has extra keys", keys(a), k)
				}
			}
		}
		var traj string
		var msg int
		json.Unmarshal(d["trajectory"], &traj)
		json.Unmarshal(d["message"], &msg)
		byKey[traj+"/"+string(d["message"])+"/"+string(d["call"])] = d
	}
	// A text reply has null call and tool; a call has both.
	if d := byKey["sample-cancel/4/null"]; d == nil || string(d["tool"]) != "null" {
		t.Errorf("reply line = %v", d)
	}
	cancel := byKey["sample-cancel/6/0"]
	if cancel == nil || string(cancel["tool"]) != `"cancel_reservation"` || string(cancel["verdict"]) != `"pass"` || string(cancel["mask"]) != "1" {
		t.Errorf("cancel line = %s %s %s", cancel["tool"], cancel["verdict"], cancel["mask"])
	}
	leak := byKey["sample-leak/3/0"]
	if leak == nil || string(leak["verdict"]) != `"fail"` || !strings.Contains(string(leak["reasons"]), "vis.hidden_leak") ||
		!strings.Contains(string(leak["args"]), "found only in hidden context") {
		t.Errorf("leak line = %s %s %s", leak["verdict"], leak["reasons"], leak["args"])
	}
	if e := byKey["sample-search/2/0"]; e == nil || !strings.Contains(string(e["reasons"]), "exec.error") {
		t.Errorf("failed search line = %v", e)
	}

	var s struct {
		Summary struct {
			Files        int            `json:"files"`
			Trajectories int            `json:"trajectories"`
			Decisions    int            `json:"decisions"`
			Verdicts     map[string]int `json:"verdicts"`
			Reasons      map[string]int `json:"reasons"`
			AutoShare    *float64       `json:"auto_decided_share"`
			AtMostTwo    *float64       `json:"at_most_two_supervised_share"`
			AfterError   *float64       `json:"certified_after_error_share"`
			Certified    int            `json:"certified"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(mustJSON(t, last), &s); err != nil {
		t.Fatalf("summary: %v", err)
	}
	sum := s.Summary
	if sum.Files != 1 || sum.Trajectories != 3 || sum.Decisions != len(decisions) {
		t.Errorf("summary = %+v, want 1 file, 3 trajectories, %d decisions", sum, len(decisions))
	}
	if sum.Verdicts["pass"]+sum.Verdicts["fail"]+sum.Verdicts["ambiguous"] != sum.Decisions || sum.Reasons["vis.hidden_leak"] != 1 {
		t.Errorf("summary verdicts %v reasons %v", sum.Verdicts, sum.Reasons)
	}
	if sum.AutoShare == nil || sum.AtMostTwo == nil || sum.AfterError == nil || sum.Certified != 2 {
		t.Errorf("summary figures missing: %+v", sum)
	}
}

func TestRunCheckTable(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runCheck(context.Background(), []string{checkFixture, "--profile", "airline"}, &out, &errb); err != nil {
		t.Fatalf("runCheck = %v\n%s", err, errb.String())
	}
	for _, want := range []string{"TRAJECTORY", "sample-leak", "vis.hidden_leak", "found only in hidden context", "decided automatically", "pool audit"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunCheckErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runCheck(context.Background(), nil, &out, &errb); err == nil {
		t.Error("runCheck without files succeeded")
	}
	if err := runCheck(context.Background(), []string{"--profile", "nope", checkFixture}, &out, &errb); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("runCheck with an unknown profile = %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(bad, []byte("not a log\n"), 0o644)
	out.Reset()
	errb.Reset()
	err := runCheck(context.Background(), []string{"--json", bad, checkFixture}, &out, &errb)
	if err == nil || strings.Count(errb.String(), "bad.txt") != 1 {
		t.Errorf("runCheck with an unreadable file = %v, stderr %q; want the file named once", err, errb.String())
	}
	if !strings.Contains(out.String(), `"summary"`) || !strings.Contains(out.String(), "sample-cancel") {
		t.Errorf("the readable file was not checked:\n%s", out.String())
	}
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func mustJSON(t *testing.T, m map[string]json.RawMessage) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunCheckJSONPolicyRecord: a policy finding's line names the record it
// cites ("record": message, id, span of the id); its evidence line is the
// same as before, and no other argument gains the key.
func TestRunCheckJSONPolicyRecord(t *testing.T) {
	rec := `{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 152}], "created_at": "2024-05-01T05:17:41", "insurance": "no"}`
	msgs := []map[string]any{
		{"role": "system", "content": "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST."},
		{"role": "user", "content": "I am mia_li_3668, cancel reservation NO6JO3. My plans changed."},
		{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c1", "name": "get_reservation_details", "arguments": map[string]any{"reservation_id": "NO6JO3"}}}},
		{"role": "tool", "tool_call_id": "c1", "name": "get_reservation_details", "content": rec},
		{"role": "assistant", "content": "Cancel NO6JO3? Please confirm (yes/no)."},
		{"role": "user", "content": "Yes."},
		{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "c2", "name": "cancel_reservation", "arguments": map[string]any{"reservation_id": "NO6JO3"}}}},
		{"role": "tool", "tool_call_id": "c2", "name": "cancel_reservation", "content": `{"reservation_id": "NO6JO3", "status": "cancelled"}`},
	}
	line, err := json.Marshal(map[string]any{"id": "policy-cancel", "domain": "airline", "reward": 1.0, "messages": msgs})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "policy.jsonl")
	if err := os.WriteFile(file, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := runCheck(context.Background(), []string{"--json", file}, &out, &errb); err != nil {
		t.Fatalf("runCheck = %v\n%s", err, errb.String())
	}
	type arg struct {
		Path     string                     `json:"path"`
		Evidence string                     `json:"evidence"`
		Record   map[string]json.RawMessage `json:"record"`
	}
	found := 0
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct {
			Args []json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		for _, raw := range l.Args {
			var a arg
			if err := json.Unmarshal(raw, &a); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(a.Evidence, "against the policy; the record of NO6JO3 (message 3)") {
				if a.Record != nil {
					t.Errorf("argument %s has a record: %s", a.Path, raw)
				}
				continue
			}
			found++
			at := strings.Index(rec, `"NO6JO3"`) + 1
			if string(a.Record["message"]) != "3" || string(a.Record["id"]) != `"NO6JO3"` ||
				string(a.Record["start"]) != strconv.Itoa(at) || string(a.Record["end"]) != strconv.Itoa(at+len("NO6JO3")) {
				t.Errorf("policy finding %s: record %v, want message 3, id NO6JO3, span %d:%d", a.Path, a.Record, at, at+6)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d policy findings citing the record, want 1:\n%s", found, out.String())
	}
}
