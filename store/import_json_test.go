package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
)

// tricky holds every character encoding/json treats specially: quotes,
// backslashes, control characters (NUL, \b and \f among them), DEL, the
// HTML characters it leaves alone with escaping off, U+2028 and U+2029,
// invalid UTF-8 (a lone byte, a truncated sequence) and what looks like
// escapes.
const tricky = "quote \" backslash \\ \x00\b\f\n\r\t \x01\x1f\x7f <html>&amp; \u2028\u2029 é 日本 \xff\xfe bad \xe2\x80 utf-8 \ufffd \\u0000 \\n"

// trickyRaw are raw JSON values, valid (with whitespace, newlines, escapes,
// invalid UTF-8 inside strings) and not.
var trickyRaw = []json.RawMessage{
	nil, {},
	json.RawMessage(" { \"a\" : [ 1 , \"x y\" , null ] ,\n\t\"b\":\"\\u00e9\\n\\u0000\", \"c\" : \"<&>\u2028\" } "),
	json.RawMessage(`null`), json.RawMessage(" null\n"), json.RawMessage(`[]`), json.RawMessage(`{}`),
	json.RawMessage(`-1.5e3`), json.RawMessage(`"\u2028\\u2029"`), json.RawMessage("\"\xff\xfe\""),
	json.RawMessage(`{"a":`), json.RawMessage(`{"a" 1}`), json.RawMessage(` `), json.RawMessage("\"\x01\""),
	json.RawMessage(`{"a":1}{}`), json.RawMessage(`nul`),
}

// sameAsEncodeJSON fails t unless appendJSON writes v as encodeJSON does, or
// fails where it fails. It reports whether v encoded.
func sameAsEncodeJSON[T any](t testing.TB, what string, v []T, appendJSON func([]byte, []T) ([]byte, error)) bool {
	t.Helper()
	want, wantErr := encodeJSON(v)
	got, err := appendJSON([]byte("prefix"), v)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%s %#v: error %v, encoding/json's %v", what, v, err, wantErr)
	}
	if err == nil && string(got) != "prefix"+want {
		t.Fatalf("%s %#v:\n got %q\nwant %q", what, v, got, "prefix"+want)
	}
	return err == nil
}

func noErr[T any](f func([]byte, []T) []byte) func([]byte, []T) ([]byte, error) {
	return func(dst []byte, v []T) ([]byte, error) { return f(dst, v), nil }
}

func appendCalls(dst []byte, calls []grounding.ToolCall) ([]byte, error) {
	dst, _, err := appendToolCalls(dst, calls, nil)
	return dst, err
}

// trickyValues are hand-made values of each kind the appenders write.
func trickyValues() (tools [][]grounding.Tool, hidden [][]grounding.HiddenEntry, vs [][]grounding.Violation, strs [][]string, calls [][]grounding.ToolCall) {
	at, neg := 3, -1
	tools = [][]grounding.Tool{nil, {}, {{Name: tricky}, {Name: "", Description: tricky}}}
	hidden = [][]grounding.HiddenEntry{nil, {}, {{Kind: tricky, Content: json.RawMessage(`"x"`), At: &at}, {At: &neg}}}
	vs = [][]grounding.Violation{nil, {}, {{Code: tricky, Decision: -1, Message: 1 << 40, Detail: tricky, Trajectory: true}, {}}}
	strs = [][]string{nil, {}, {tricky, "", "a"}}
	calls = [][]grounding.ToolCall{nil, {}, {{Name: "n"}}, {{ID: tricky, Name: tricky, RawArguments: tricky}, {ID: "i", Name: "n", Arguments: json.RawMessage(`{"a":1}`)}}}
	for _, raw := range trickyRaw {
		tools = append(tools, []grounding.Tool{{Name: "t", Description: "d", Parameters: raw}, {Name: "u", Parameters: json.RawMessage(`{}`)}})
		hidden = append(hidden, []grounding.HiddenEntry{{Kind: "k", Content: json.RawMessage(`1`)}, {Kind: "k", Content: raw}})
		calls = append(calls, []grounding.ToolCall{{ID: "c1", Name: "n", Arguments: raw}, {Name: tricky, Arguments: raw, RawArguments: "r"}})
	}
	return tools, hidden, vs, strs, calls
}

// TestImportJSONAppenders: the JSON columns of the trajectories, messages
// and decisions of a generated pool, and hand-made values with every escape,
// omitted field, empty and nil slice and raw value (valid or not), come out
// of the appenders byte for byte as encodeJSON writes them; the values
// encoding/json refuses, the appenders refuse.
func TestImportJSONAppenders(t *testing.T) {
	tools, hidden, vs, strs, calls := trickyValues()
	for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 400, Seed: 11, Kind: "mixed"}) {
		check := grounding.CheckDefault(tr)
		tools = append(tools, tr.Tools)
		hidden = append(hidden, tr.Hidden)
		vs = append(vs, check.Violations)
		strs = append(strs, check.Reasons)
		for _, d := range check.Decisions {
			strs = append(strs, d.Reasons)
		}
		for _, m := range tr.Messages {
			calls = append(calls, m.ToolCalls)
		}
	}
	n, failed := 0, 0
	count := func(ok bool) {
		n++
		if !ok {
			failed++
		}
	}
	for _, v := range tools {
		count(sameAsEncodeJSON(t, "tools", v, appendTools))
	}
	for _, v := range hidden {
		count(sameAsEncodeJSON(t, "hidden", v, appendHidden))
	}
	for _, v := range vs {
		count(sameAsEncodeJSON(t, "violations", v, noErr(appendViolations)))
	}
	for _, v := range strs {
		count(sameAsEncodeJSON(t, "reasons", v, noErr(appendStrings)))
	}
	for _, v := range calls {
		count(sameAsEncodeJSON(t, "tool calls", v, appendCalls))
	}
	if n < 5000 || failed < 15 {
		t.Errorf("%d values compared, %d of them invalid: the inputs do not cover the appenders", n, failed)
	}
}

// storedCallsStd is a message's tool_calls column and the calls an export
// reads back from it, the way prepare made them before storedToolCalls.
func storedCallsStd(calls []grounding.ToolCall) (string, []grounding.ToolCall, error) {
	s, err := encodeJSON(calls)
	if err != nil {
		return "", nil, err
	}
	s = cleanJSON(s)
	read, err := grounding.DecodeStoredToolCalls([]byte(s))
	return s, read, err
}

// TestStoredToolCalls: the column storedToolCalls returns, and the calls it
// says an export reads back from it, are those of encoding and then
// decoding, for calls with every escape, invalid UTF-8 and NUL in their
// strings and raw arguments, with whitespace, null or nothing in their
// arguments.
func TestStoredToolCalls(t *testing.T) {
	_, _, _, _, calls := trickyValues()
	for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 100, Seed: 2, Kind: "mixed"}) {
		for _, m := range tr.Messages {
			calls = append(calls, m.ToolCalls)
		}
	}
	calls = append(calls,
		[]grounding.ToolCall{{ID: "a\xffb", Name: "n", Arguments: json.RawMessage(`{}`)}},
		[]grounding.ToolCall{{ID: "a", Name: "n\x00", Arguments: json.RawMessage(`{}`)}},
		[]grounding.ToolCall{{ID: "a", Name: "n", Arguments: json.RawMessage(`{"k":"\u0000"}`), RawArguments: "\xc3"}},
		[]grounding.ToolCall{{ID: "a", Name: "n", Arguments: json.RawMessage(`{"k":"\\u0000"}`)}},
		[]grounding.ToolCall{{ID: "a", Name: "n", Arguments: json.RawMessage(" null ")}, {Name: "m", Arguments: json.RawMessage("{ \"a\" :\n 1 }")}})
	var s importScratch
	compared := 0
	for _, c := range calls {
		if len(c) == 0 {
			continue // prepare stores no column for them
		}
		want, wantRead, wantErr := storedCallsStd(c)
		got, read, err := s.storedToolCalls(c, true)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%#v: error %v, want %v", c, err, wantErr)
		}
		if err != nil {
			continue
		}
		if got != want || !reflect.DeepEqual(read, wantRead) {
			t.Fatalf("%#v:\n got %q, read back %#v\nwant %q, read back %#v", c, got, read, want, wantRead)
		}
		if hidden, none, _ := s.storedToolCalls(c, false); hidden != want || none != nil {
			t.Fatalf("%#v without reading back: %q, %#v", c, hidden, none)
		}
		compared++
	}
	if compared < 300 {
		t.Errorf("only %d tool call lists compared", compared)
	}
}

// TestStoredToolsCache: storedTools returns the column and sha256 of each
// tool list however lists come and go, more of them than it keeps, and a
// list changed in place after it was encoded is encoded again.
func TestStoredToolsCache(t *testing.T) {
	var lists [][]grounding.Tool
	for i := range toolListsKept + 3 {
		lists = append(lists, []grounding.Tool{{Name: "get", Parameters: json.RawMessage(fmt.Sprintf(` {"n": %d} `, i))}})
	}
	lists = append(lists, nil, []grounding.Tool{}, []grounding.Tool{{Name: "get"}}, []grounding.Tool{{Name: "get", Parameters: json.RawMessage{}}})
	var s importScratch
	check := func(tools []grounding.Tool) {
		t.Helper()
		want, err := encodeJSON(nonNil(tools))
		if err != nil {
			t.Fatal(err)
		}
		want = cleanJSON(want)
		sum := sha256.Sum256([]byte(want))
		stored, sha, err := s.storedTools(tools)
		if err != nil || stored != want || sha != hex.EncodeToString(sum[:]) {
			t.Fatalf("storedTools(%s) = %q, %s, %v; want %q, %x", tools, stored, sha, err, want, sum)
		}
	}
	for round := range 3 {
		for i, l := range lists {
			check(l)
			check(lists[(i*7+round)%len(lists)])
		}
	}
	changed := lists[0]
	check(changed)
	changed[0].Parameters[7] = '9' // {"n": 9}, in the bytes the cache saw
	check(changed)
	if _, _, err := s.storedTools([]grounding.Tool{{Name: "bad", Parameters: json.RawMessage(`{`)}}); err == nil {
		t.Error("invalid parameters encoded")
	}
}

// FuzzImportJSONAppenders holds the appenders and storedToolCalls to
// encoding/json and grounding.DecodeStoredToolCalls on arbitrary strings,
// raw values and numbers.
func FuzzImportJSONAppenders(f *testing.F) {
	f.Add("name", "description", []byte(`{"type":"object"}`), 3, false)
	f.Add(tricky, "\u2028<&>", []byte(" { \"a\" :\n [1, \"\xff\"] } "), -1, true)
	f.Add("\x00", "\\u0000", []byte(`"\u0000"`), 0, true)
	f.Add("", "", []byte(`null`), 1<<40, false)
	f.Add("a", "b", []byte(`{"a":`), 2, false)
	f.Fuzz(func(t *testing.T, s1, s2 string, raw []byte, n int, b bool) {
		if b && len(raw) == 0 {
			raw = nil
		}
		var at *int
		if b {
			at = &n
		}
		sameAsEncodeJSON(t, "tools", []grounding.Tool{{Name: s1, Description: s2, Parameters: raw}, {Name: s2}}, appendTools)
		sameAsEncodeJSON(t, "hidden", []grounding.HiddenEntry{{Kind: s1, Content: raw, At: at}}, appendHidden)
		sameAsEncodeJSON(t, "violations", []grounding.Violation{{Code: s1, Decision: n, Message: -n, Detail: s2, Trajectory: b}}, noErr(appendViolations))
		sameAsEncodeJSON(t, "reasons", []string{s1, s2}, noErr(appendStrings))
		calls := []grounding.ToolCall{{ID: s1, Name: s2, Arguments: raw, RawArguments: s2 + s1}, {Name: s1}}
		if !sameAsEncodeJSON(t, "tool calls", calls, appendCalls) {
			return
		}
		want, wantRead, wantErr := storedCallsStd(calls)
		var s importScratch
		got, read, err := s.storedToolCalls(calls, true)
		if (err != nil) != (wantErr != nil) || got != want || !reflect.DeepEqual(read, wantRead) {
			t.Fatalf("storedToolCalls(%#v) = %q, %#v, %v\nwant %q, %#v, %v", calls, got, read, err, want, wantRead, wantErr)
		}
	})
}

// nastyTrajectories are trajectories whose JSON columns need every escape
// and whose tool calls read back differently from how they came: invalid
// UTF-8 in a call id (the tool message answering it then answers no
// visible call), NUL in a name, arguments with whitespace, null or invalid
// UTF-8, a hidden message with calls; and two that share their tools.
func nastyTrajectories() []*grounding.Trajectory {
	tools := []grounding.Tool{{Name: "get_user_details", Description: tricky,
		Parameters: json.RawMessage(" {\"type\": \"object\",\n \"properties\": {\"user_id\": {\"type\": \"string\"}}} ")}}
	reward := 1.0
	nasty := &grounding.Trajectory{ID: "nasty", Domain: "airline", Request: tricky, Tools: tools, Reward: &reward,
		Hidden: []grounding.HiddenEntry{{Kind: grounding.HiddenUserInstruction, Content: json.RawMessage(` "find \u0000 <x>" `)}},
		Messages: []grounding.Message{
			{Role: grounding.RoleSystem, Content: "policy"},
			{Role: grounding.RoleUser, Content: "my id is u_1 " + tricky},
			{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{
				{ID: "c\xff1", Name: "get_user_details", Arguments: json.RawMessage(` {"user_id" : "u_1"} `)},
				{ID: "c2", Name: "get\x00user", Arguments: json.RawMessage("{\"user_id\":\"\xffu\"}")},
				{ID: "c3", Name: "get_user_details", RawArguments: "{not json " + tricky},
				{ID: "c4", Name: "get_user_details", Arguments: json.RawMessage(`null`)},
			}},
			{Role: grounding.RoleTool, ToolCallID: "c\xff1", Name: "get_user_details", Content: `{"user_id":"u_1"}`},
			{Role: grounding.RoleTool, ToolCallID: "c2", Content: "not found \x00", Error: true},
			{Role: grounding.RoleTool, ToolCallID: "c3", Content: "bad arguments", Error: true},
			{Role: grounding.RoleTool, ToolCallID: "c4", Content: "ok"},
			{Role: grounding.RoleAssistant, Visibility: grounding.Hidden, HiddenKind: grounding.HiddenTeacherHint, Content: "hint",
				ToolCalls: []grounding.ToolCall{{ID: "h\xff", Name: "get_user_details", Arguments: json.RawMessage(` {} `)}}},
			{Role: grounding.RoleAssistant, Content: "done \u2028 " + tricky},
		}}
	spaced := &grounding.Trajectory{ID: "spaced", Domain: "airline", Tools: tools, Messages: []grounding.Message{
		{Role: grounding.RoleUser, Content: "I am u_2"},
		{Role: grounding.RoleAssistant, ToolCalls: []grounding.ToolCall{{ID: "s1", Name: "get_user_details", Arguments: json.RawMessage("{ \"user_id\" :\n\"u_2\" }")}}},
		{Role: grounding.RoleTool, ToolCallID: "s1", Content: `{"user_id":"u_2"}`},
		{Role: grounding.RoleAssistant, Content: "done"},
	}}
	return []*grounding.Trajectory{nasty, spaced}
}

// TestPrepareRowsUnchanged: for a generated pool and the nasty
// trajectories, prepare's JSON columns and SFT rendering are what it made
// with encodeJSON, cleanJSON and DecodeStoredToolCalls.
func TestPrepareRowsUnchanged(t *testing.T) {
	var trs []*grounding.Trajectory
	for tr := range grounding.Generate(grounding.GenOptions{Trajectories: 300, Seed: 4, Kind: "mixed"}) {
		trs = append(trs, tr)
	}
	trs = append(trs, nastyTrajectories()...)
	w := &importWriter{op: "test", runID: 1, importID: 1, at: now(), overlap: 1,
		meta: grounding.ImportResult{File: "f.jsonl", Format: "canonical"}}
	var s importScratch
	col := func(cols []string, name string) int { return slices.Index(cols, name) }
	enc := func(v any) string {
		js, err := encodeJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		return js
	}
	for _, tr := range trs {
		p, err := w.prepare(tr, &s)
		if err != nil {
			t.Fatalf("%s: %v", tr.ID, err)
		}
		check := grounding.CheckDefault(tr)
		tools := cleanJSON(enc(nonNil(tr.Tools)))
		sum := sha256.Sum256([]byte(tools))
		for name, want := range map[string]string{
			"tools": tools, "hidden": cleanJSON(enc(nonNil(tr.Hidden))),
			"flow_reasons": enc(nonNil(check.Reasons)), "violations": cleanJSON(enc(nonNil(check.Violations))),
		} {
			if got := p.row[col(trajectoryColumns, name)]; got != want {
				t.Fatalf("%s: %s %q, want %q", tr.ID, name, got, want)
			}
		}
		var visible []grounding.Message
		for i, m := range tr.Messages {
			var want any
			if len(m.ToolCalls) > 0 {
				var err error
				want, m.ToolCalls, err = storedCallsStd(m.ToolCalls)
				if err != nil {
					t.Fatal(err)
				}
			}
			if got := p.msgs[i*len(messageColumns)+col(messageColumns, "tool_calls")]; got != want {
				t.Fatalf("%s: message %d: tool_calls %q, want %q", tr.ID, i, got, want)
			}
			if !m.IsHidden() {
				m.Index, m.Content = i, cleanText(m.Content)
				visible = append(visible, m)
			}
		}
		rendering, marks := grounding.AppendSFTMessages(nil, visible)
		if want := []any{nil, string(rendering), string(grounding.AppendSFTMarks(nil, marks)), hex.EncodeToString(sum[:])}; !reflect.DeepEqual(p.sft, want) {
			t.Fatalf("%s: SFT row\n got %q\nwant %q", tr.ID, p.sft, want)
		}
		queued := 0
		for i, d := range check.Decisions {
			want := cleanJSON(enc(nonNil(d.Reasons)))
			if got := p.decs[i*len(decisionColumns)+col(decisionColumns, "reasons")]; got != want {
				t.Fatalf("%s: decision %d: reasons %q, want %q", tr.ID, i, got, want)
			}
			if d.Queued {
				if got := p.queue[queued*len(queueColumns)+col(queueColumns, "why")]; got != want {
					t.Fatalf("%s: queue item %d: why %q, want %q", tr.ID, queued, got, want)
				}
				queued++
			}
		}
	}
	// The nasty trajectory's tool message answering the call whose id had
	// invalid UTF-8 stays out of the rendering: the id reads back with
	// U+FFFD, as an export reads it.
	nasty := nastyTrajectories()[0]
	p, err := w.prepare(nasty, &s)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.sft[1].(string); !strings.Contains(r, "\"id\":\"c\uFFFD1\"") || strings.Count(r, `"role":"tool"`) != 3 {
		t.Errorf("nasty rendering %s, want the call id with U+FFFD and 3 tool messages", r)
	}
}

// TestCopyInValues: on Postgres, copyIn stores every kind of value a bulk
// row holds as the multi-row INSERT through database/sql does, inside the
// transaction: rolled back, its rows are gone.
func TestCopyInValues(t *testing.T) {
	stores := coverageStores(t)
	open, ok := stores["postgres"]
	if !ok {
		t.Skip("TEST_DATABASE_URL not set")
	}
	db := open(t)
	ctx := context.Background()
	at := now()
	if _, err := db.x.ExecContext(ctx, `CREATE TABLE copy_values (n bigint, i integer, s text, b boolean, z text, at timestamptz, v text, f double precision)`); err != nil {
		t.Fatal(err)
	}
	cols := []string{"n", "i", "s", "b", "z", "at", "v", "f"}
	rows := []any{
		int64(1 << 40), 7, "tab\there\nnew line\\ back\r é \u2028", true, nil, dbTime{at}, grounding.VerdictPass, 1.5,
		int64(-1), -7, "", false, "\\N", dbTime{at.Add(-time.Hour)}, grounding.Verdict(""), float32(-2),
	}
	read := func() []string {
		var out []string
		err := db.x.SelectContext(ctx, &out, `SELECT concat_ws('|', n, i, s, b, coalesce(z, 'NULL'), at, v, f) FROM copy_values ORDER BY n, s`)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	write := func(bulk bulkInserter, commit bool) {
		conn, tx, err := db.beginBulk(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		defer tx.Rollback()
		st := newStmts(conn, tx)
		defer st.close()
		if err := bulk(ctx, st, &db.d, "copy_values", cols, rows); err != nil {
			t.Fatal(err)
		}
		if commit {
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(copyIn, false)
	if got := read(); len(got) != 0 {
		t.Fatalf("rows of a rolled back COPY: %q", got)
	}
	write(insertValues, true)
	want := read()
	if _, err := db.x.ExecContext(ctx, `DELETE FROM copy_values`); err != nil {
		t.Fatal(err)
	}
	write(copyIn, true)
	if got := read(); !reflect.DeepEqual(got, want) || len(got) != 2 {
		t.Fatalf("copied rows\n got %q\nwant %q", got, want)
	}
}
