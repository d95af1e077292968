package grounding

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseExportOptions(t *testing.T) {
	for _, s := range []string{"masks", "SFT", "csv"} {
		if _, err := ParseExportFormat(s); err != nil {
			t.Errorf("ParseExportFormat(%q) error: %v", s, err)
		}
	}
	if _, err := ParseExportFormat("parquet"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseExportFormat(parquet) = %v, want ErrInvalid", err)
	}
	for in, want := range map[string]VerdictSource{"": VerdictSourceAny, "any": VerdictSourceAny, "Auto": VerdictSourceAuto, "human": VerdictSourceHuman} {
		if got, err := ParseVerdictSource(in); got != want || err != nil {
			t.Errorf("ParseVerdictSource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseVerdictSource("lead"); !errors.Is(err, ErrInvalid) {
		t.Errorf("ParseVerdictSource(lead) = %v, want ErrInvalid", err)
	}
}

// exportFixture has, by message index: 0 system, 1 user, 2 assistant with
// two calls (c1 mask 1, c2 mask 0), 3 tool c1, 4 tool c2, 5 assistant text
// and a call (both mask 1; the text reply is human-judged), 6 tool c3,
// 7 assistant text (mask 1), 8 tool answering a hidden call.
func exportFixture() *ExportTrajectory {
	reward := 1.0
	return &ExportTrajectory{
		ID: 7, ExtID: "t-1", ParentID: "p-1", Domain: "airline", Success: true, Reward: &reward, WorkflowOK: true,
		EngineVersion: "1.0.0", Profile: "airline@1",
		Tools: json.RawMessage(`[{"name":"get_user","description":"Get a user.","parameters":{"type":"object","properties":{"id":{"type":"string"}}}},{"name":"book"}]`),
		Messages: []Message{
			{Index: 0, Role: RoleSystem, Content: "policy \"quoted\"\nline two"},
			{Index: 1, Role: RoleUser, Content: "I am <mia> & co \u2028"},
			{Index: 2, Role: RoleAssistant, ContentNull: true, ToolCalls: []ToolCall{
				{ID: "c1", Name: "get_user", Arguments: json.RawMessage(`{"id":"mia"}`)},
				{ID: "c2", Name: "book", RawArguments: `{"amount": 12,`},
			}},
			{Index: 3, Role: RoleTool, ToolCallID: "c1", Name: "get_user", Content: `{"ok":true}`},
			{Index: 4, Role: RoleTool, ToolCallID: "c2", Name: "book", Content: "Error: bad", Error: true},
			{Index: 5, Role: RoleAssistant, Content: "Booking now.", ToolCalls: []ToolCall{{ID: "c3", Name: "book", Arguments: json.RawMessage(`{"amount":12}`)}}},
			{Index: 6, Role: RoleTool, ToolCallID: "c3", Name: "book", Content: "done"},
			{Index: 7, Role: RoleAssistant, Content: "All set."},
			{Index: 8, Role: RoleTool, ToolCallID: "hidden-call", Name: "peek", Content: "answer to a hidden call"},
		},
		Decisions: []ExportDecision{
			{Ordinal: 0, Message: 2, Call: 0, Tool: "get_user", Verdict: VerdictPass, AutoVerdict: VerdictPass, Mask: 1},
			{Ordinal: 1, Message: 2, Call: 1, Tool: "book", Verdict: VerdictFail, AutoVerdict: VerdictFail, Mask: 0, Reasons: []string{"exec.error", "exec.schema"}},
			{Ordinal: 2, Message: 5, Call: -1, Verdict: VerdictPass, AutoVerdict: VerdictAmbiguous, HumanVerdict: VerdictPass, Mask: 1,
				Annotator: "=ann", DecidedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Reasons: []string{"vis.knowledge"}},
			{Ordinal: 3, Message: 5, Call: 0, Tool: "book", Verdict: VerdictPass, AutoVerdict: VerdictPass, Mask: 1},
			{Ordinal: 4, Message: 7, Call: -1, Verdict: VerdictPass, AutoVerdict: VerdictPass, Mask: 1},
		},
	}
}

func TestPrepare(t *testing.T) {
	tests := []struct {
		src                  VerdictSource
		weights              []int // of the assistant messages 2, 5 and 7
		selected, supervised int
		tokens               int
	}{
		// Message 2 has a failed call: weight 0 although c1 passed.
		{VerdictSourceAny, []int{0, 1, 1}, 5, 3, (len("Booking now.")+len("book")+len(`{"amount":12}`)+3)/4 + (len("All set.")+3)/4},
		// Only the human-judged text reply is selected; its message also
		// has an auto call, so nothing is supervised.
		{VerdictSourceHuman, []int{0, 0, 0}, 1, 0, 0},
		{VerdictSourceAuto, []int{0, 0, 1}, 4, 1, (len("All set.") + 3) / 4},
	}
	for _, tt := range tests {
		tr := exportFixture()
		tr.Prepare(tt.src)
		if !reflect.DeepEqual(tr.weights, tt.weights) || tr.SelectedDecisions != tt.selected || tr.SupervisedDecisions != tt.supervised || tr.Tokens != tt.tokens {
			t.Errorf("Prepare(%s) = weights %v, %d selected, %d supervised, %d tokens; want %v, %d, %d, %d", tt.src,
				tr.weights, tr.SelectedDecisions, tr.SupervisedDecisions, tr.Tokens, tt.weights, tt.selected, tt.supervised, tt.tokens)
		}
	}
}

func TestParentWeights(t *testing.T) {
	a, b, c := &ExportTrajectory{Tokens: 30}, &ExportTrajectory{Tokens: 10}, &ExportTrajectory{Tokens: 0}
	ParentWeights([]*ExportTrajectory{a, b, c}, 4)
	if a.Weight != 0.75/4 || b.Weight != 0.25/4 || c.Weight != 0 {
		t.Errorf("ParentWeights = %v %v %v, want 0.1875 0.0625 0", a.Weight, b.Weight, c.Weight)
	}
	d := &ExportTrajectory{Tokens: 0, Weight: 9}
	ParentWeights([]*ExportTrajectory{d}, 4)
	if d.Weight != 0 {
		t.Errorf("a parent without target tokens weighs %v, want 0", d.Weight)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\back`, "nl\nr\rt\tnul\x00\x1f\x7f", "<tag> & é 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8", strings.Repeat("x", 100)} {
		got := appendJSONString(nil, s)
		if !json.Valid(got) {
			t.Fatalf("appendJSONString(%q) = %s: invalid JSON", s, got)
		}
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		// encoding/json also turns each invalid byte into U+FFFD.
		std, _ := json.Marshal(s)
		var want string
		json.Unmarshal(std, &want)
		if back != want {
			t.Errorf("appendJSONString(%q) decodes to %q, want %q", s, back, want)
		}
		if strings.Contains(s, "<") && !bytes.Contains(got, []byte("<")) {
			t.Errorf("appendJSONString(%q) = %s: HTML-escaped", s, got)
		}
	}
}

func TestExportSFTLine(t *testing.T) {
	tr := exportFixture()
	tr.Prepare(VerdictSourceAny)
	tr.Weight = 0.125
	for _, ids := range []bool{false, true} {
		enc := NewExportEncoder(ExportFilter{Format: ExportSFT, IDs: ids})
		line, err := enc.Trajectory(nil, tr)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("SFT line is not one line: %q", line)
		}
		var got map[string]any
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("SFT line %s: %v", line, err)
		}
		var want map[string]any
		json.Unmarshal([]byte(`{"messages":[
			{"role":"system","content":"policy \"quoted\"\nline two"},
			{"role":"user","content":"I am <mia> & co \u2028"},
			{"role":"assistant","content":null,"tool_calls":[
				{"id":"c1","type":"function","function":{"name":"get_user","arguments":"{\"id\":\"mia\"}"}},
				{"id":"c2","type":"function","function":{"name":"book","arguments":"{\"amount\": 12,"}}],"weight":0},
			{"role":"tool","tool_call_id":"c1","name":"get_user","content":"{\"ok\":true}"},
			{"role":"tool","tool_call_id":"c2","name":"book","content":"Error: bad"},
			{"role":"assistant","content":"Booking now.","tool_calls":[{"id":"c3","type":"function","function":{"name":"book","arguments":"{\"amount\":12}"}}],"weight":1},
			{"role":"tool","tool_call_id":"c3","name":"book","content":"done"},
			{"role":"assistant","content":"All set.","weight":1}],
			"tools":[{"type":"function","function":{"name":"get_user","description":"Get a user.","parameters":{"type":"object","properties":{"id":{"type":"string"}}}}},
			         {"type":"function","function":{"name":"book"}}]}`), &want)
		if ids {
			want["id"], want["parent_id"], want["sample_weight"] = "t-1", "p-1", 0.125
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("SFT line (ids=%v) =\n%s\nwant\n%v", ids, line, want)
		}
	}
}

func TestExportMasksLine(t *testing.T) {
	tr := exportFixture()
	tr.Prepare(VerdictSourceAny)
	tr.Weight = 0.5
	enc := NewExportEncoder(ExportFilter{Format: ExportMasks})
	line, err := enc.Trajectory(nil, tr)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID           string
		ParentID     string `json:"parent_id"`
		Weight       float64
		TargetTokens int `json:"target_tokens"`
		R            int
		WorkflowOK   bool `json:"workflow_ok"`
		Decisions    []struct {
			Message   int
			Call      *int
			Tool      *string
			Mask      int
			Source    string
			Verdict   string
			Reasons   []string
			Annotator *string
			DecidedAt *time.Time `json:"decided_at"`
		}
	}
	if err := json.Unmarshal(line, &got); err != nil {
		t.Fatalf("masks line %s: %v", line, err)
	}
	if got.Weight != 0.5 || got.R != 1 || !got.WorkflowOK || got.TargetTokens != tr.Tokens || len(got.Decisions) != 5 {
		t.Fatalf("masks line = %s", line)
	}
	reply := got.Decisions[2]
	if reply.Call != nil || reply.Tool != nil || reply.Source != "human" || reply.Annotator == nil || *reply.Annotator != "=ann" ||
		reply.DecidedAt == nil || !reply.DecidedAt.Equal(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("human text reply decision = %+v", reply)
	}
	auto := got.Decisions[1]
	if auto.Call == nil || *auto.Call != 1 || auto.Source != "auto" || auto.Annotator != nil || auto.DecidedAt != nil ||
		!reflect.DeepEqual(auto.Reasons, []string{"exec.error", "exec.schema"}) || auto.Mask != 0 {
		t.Errorf("auto call decision = %+v", auto)
	}
	// source=human lists only the judged decision.
	tr.Prepare(VerdictSourceHuman)
	line, _ = NewExportEncoder(ExportFilter{Format: ExportMasks, Source: VerdictSourceHuman}).Trajectory(nil, tr)
	if n := bytes.Count(line, []byte(`"ordinal"`)); n != 1 {
		t.Errorf("source=human masks line lists %d decisions, want 1: %s", n, line)
	}
}

func TestExportCSV(t *testing.T) {
	tr := exportFixture()
	tr.ExtID = "t,1 \"x\""
	tr.Prepare(VerdictSourceAny)
	tr.Weight = 0.25
	enc := NewExportEncoder(ExportFilter{Format: ExportCSV, RunName: "-run", Complete: true})
	out := enc.Header(nil, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	out, err := enc.Trajectory(out, tr)
	if err != nil {
		t.Fatal(err)
	}
	out = enc.Trailer(out, ExportSummary{Trajectories: 1, Decisions: 5, Supervised: 3, Parents: 1})
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if !strings.HasPrefix(lines[0], `# {"groundwork_export":`) || !strings.HasPrefix(lines[len(lines)-1], `# {"groundwork_trailer":{"complete":true`) {
		t.Fatalf("CSV comment lines = %q … %q", lines[0], lines[len(lines)-1])
	}
	var body []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "# ") {
			body = append(body, l)
		}
	}
	r := csv.NewReader(strings.NewReader(strings.Join(body, "\n")))
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v\n%s", err, out)
	}
	if len(recs) != 6 || len(recs[0]) != 19 || recs[0][0] != "run" || recs[0][16] != "reasons" {
		t.Fatalf("CSV = %d records, header %v", len(recs), recs[0])
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	row := recs[2] // decision 1: the failed call
	if row[col["run"]] != "'-run" || row[col["trajectory"]] != `t,1 "x"` || row[col["call"]] != "1" || row[col["mask"]] != "0" ||
		row[col["reasons"]] != "exec.error;exec.schema" || row[col["source"]] != "auto" || row[col["weight"]] != "0.25" {
		t.Errorf("CSV row = %v", row)
	}
	reply := recs[3]
	if reply[col["call"]] != "" || reply[col["annotator"]] != "'=ann" || reply[col["human_verdict"]] != "pass" || reply[col["decided_at"]] != "2026-11-29T10:00:00Z" {
		t.Errorf("CSV text reply row = %v (formulas must be defused)", reply)
	}
}

func TestExportHeaderAndTrailer(t *testing.T) {
	f := ExportFilter{RunID: 3, RunName: "demo", Format: ExportMasks, Scale: Scale{"8B", 3}, Source: VerdictSourceAny, Complete: true}
	enc := NewExportEncoder(f)
	at := time.Date(2026, 11, 29, 10, 15, 0, 123000, time.UTC)
	h := enc.Header(nil, at)
	var got struct {
		E struct {
			Version     int
			Format, Run string
			Snapshot    time.Time
			Scale       string
			TargetDepth int `json:"target_depth"`
			Limit       *int
			Complete    bool
		} `json:"groundwork_export"`
	}
	if err := json.Unmarshal(h, &got); err != nil {
		t.Fatalf("header %s: %v", h, err)
	}
	e := got.E
	if e.Version != 1 || e.Format != "masks" || e.Run != "demo" || !e.Snapshot.Equal(at) || e.Scale != "8B" || e.TargetDepth != 3 ||
		e.Limit != nil || !e.Complete {
		t.Errorf("header = %s", h)
	}
	tr0 := enc.Trailer(nil, ExportSummary{Snapshot: at, Trajectories: 2, Decisions: 9, Supervised: 4, Parents: 1, EngineVersions: []string{"1.0.0"}, Profiles: []string{"airline@1"}})
	var trailer struct {
		T struct {
			Complete                                     bool
			Trajectories, Decisions, Supervised, Parents int
			EngineVersions                               []string `json:"engine_versions"`
			Profiles                                     []string
			Snapshot                                     time.Time
		} `json:"groundwork_trailer"`
	}
	if err := json.Unmarshal(tr0, &trailer); err != nil {
		t.Fatalf("trailer %s: %v", tr0, err)
	}
	// Counts are what the encoder wrote (nothing here); the rest is the summary's.
	x := trailer.T
	if !x.Complete || x.Trajectories != 0 || x.Parents != 1 || x.EngineVersions[0] != "1.0.0" || x.Profiles[0] != "airline@1" || !x.Snapshot.Equal(at) {
		t.Errorf("trailer = %s", tr0)
	}
	tr := enc.ErrorTrailer(nil, "internal error (request id 7)")
	if !json.Valid(tr) || !bytes.Contains(tr, []byte(`"complete":false,"error":"internal error (request id 7)"`)) {
		t.Errorf("error trailer = %s", tr)
	}
	if name := enc.FileName(at); name != "groundwork-demo-8B-20261129T101500Z-masks.jsonl" {
		t.Errorf("FileName = %q", name)
	}
	odd := NewExportEncoder(ExportFilter{RunName: `../a b"\日`, Format: ExportCSV})
	if name := odd.FileName(at); name != "groundwork-_a_b_____-20261129T101500Z-decisions.csv" {
		t.Errorf("FileName of an odd run name = %q", name)
	}
	if cd := enc.ContentDisposition(at); cd != `attachment; filename="groundwork-demo-8B-20261129T101500Z-masks.jsonl"` {
		t.Errorf("ContentDisposition of an ASCII run = %q; want filename only", cd)
	}
	cafe := NewExportEncoder(ExportFilter{RunName: "café 1:2", Format: ExportSFT})
	if cd := cafe.ContentDisposition(at); cd != `attachment; filename="groundwork-caf___1_2-20261129T101500Z-sft.jsonl"; filename*=UTF-8''groundwork-caf%C3%A9_1_2-20261129T101500Z-sft.jsonl` {
		t.Errorf("ContentDisposition of café = %q", cd)
	}
	if cd := odd.ContentDisposition(at); !strings.Contains(cd, "filename*=UTF-8''groundwork-_a_b__%E6%97%A5-") {
		t.Errorf("ContentDisposition of an odd run name = %q", cd)
	}
}

func TestDecodeStoredToolCalls(t *testing.T) {
	calls := []ToolCall{
		{ID: "c1", Name: "get_user", Arguments: json.RawMessage(`{"id":"mia","n":[1,2.5,null],"s":"a\"b"}`)},
		{ID: "c2", Name: "book", RawArguments: `{"amount": 12,`},
		{Name: "no_id"},
	}
	raw, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeStoredToolCalls(raw)
	if err != nil || !reflect.DeepEqual(got, calls) {
		t.Errorf("DecodeStoredToolCalls(%s) = %+v, %v", raw, got, err)
	}
	// Postgres json keeps the text; jsonb-style spacing decodes the same.
	spaced := []byte(`[{"id": "c1", "name": "get_user", "arguments": {"id": "mia"}}]`)
	got, err = DecodeStoredToolCalls(spaced)
	if err != nil || len(got) != 1 || string(got[0].Arguments) != `{"id": "mia"}` {
		t.Errorf("DecodeStoredToolCalls(spaced) = %+v, %v", got, err)
	}
	if _, err := DecodeStoredToolCalls([]byte(`{"id":1}`)); err == nil {
		t.Error("DecodeStoredToolCalls(object) succeeded")
	}
}
