package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// summary is what the importer tests compare: the parts of a trajectory an
// importer decides, in a shape that prints readably when it differs.
type importSummary struct {
	ID, Parent, Domain string
	Source             Source
	Succeeded          bool
	Roles              string   // message roles in order, space-separated
	Calls              []string // "m<msg> <id> <name> <arguments>" or "... raw:<string>"
	Errors             []int    // messages with Error
	Nulls              []int    // messages with ContentNull
	HiddenMsgs         []int    // messages with visibility hidden
	Hidden             []string // "kind" or "kind@at", then the content
}

func summarizeImport(t *Trajectory) importSummary {
	s := importSummary{ID: t.ID, Parent: t.Parent(), Domain: t.Domain, Source: t.Source, Succeeded: t.Succeeded()}
	var roles []string
	for i, m := range t.Messages {
		roles = append(roles, m.Role)
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if !c.ArgumentsValid() {
				args = "raw:" + c.RawArguments
			}
			s.Calls = append(s.Calls, fmt.Sprintf("m%d %s %s %s", i, c.ID, c.Name, args))
		}
		if m.Error {
			s.Errors = append(s.Errors, i)
		}
		if m.ContentNull {
			s.Nulls = append(s.Nulls, i)
		}
		if m.IsHidden() {
			s.HiddenMsgs = append(s.HiddenMsgs, i)
		}
	}
	s.Roles = strings.Join(roles, " ")
	for _, h := range t.Hidden {
		k := h.Kind
		if h.At != nil {
			k = fmt.Sprintf("%s@%d", k, *h.At)
		}
		s.Hidden = append(s.Hidden, k+" "+string(h.Content))
	}
	return s
}

// readAll runs Read to the end and returns the trajectories and the error.
func readAllTrajectories(r io.Reader, file string, f Format) ([]*Trajectory, error) {
	var out []*Trajectory
	for t, err := range Read(r, file, f) {
		if err != nil {
			return out, err
		}
		out = append(out, t)
	}
	return out, nil
}

func TestReadFixtures(t *testing.T) {
	tests := []struct {
		file   string
		format Format // FormatAuto exercises detection too
		want   []importSummary
	}{
		{
			file: "canonical.jsonl",
			want: []importSummary{
				{
					ID: "airline-t0-trial0", Parent: "airline-task-0", Domain: "airline", Succeeded: true,
					Source: Source{Format: "canonical", File: "canonical.jsonl", Index: 0, Line: 1},
					Roles:  "system user assistant tool assistant system",
					Calls:  []string{`m2 c1 get_user_details {"user_id":"mia_li_3668"}`},
					Nulls:  []int{2}, HiddenMsgs: []int{5},
					Hidden: []string{
						`user_instruction "You are mia_li_3668 ..."`,
						`reference_actions [{"name":"book_reservation","arguments":{}}]`,
						`db_state@2 {}`,
					},
				},
				{
					ID: "airline-t0-trial1", Parent: "airline-task-0", Domain: "airline",
					Source: Source{Format: "canonical", File: "canonical.jsonl", Index: 1, Line: 3},
					Roles:  "user assistant tool tool assistant",
					Calls: []string{
						`m1 c1 get_reservation_details {"reservation_id":"ABC123"}`,
						`m1 c2 cancel_reservation raw:{reservation_id: ABC123`,
					},
					Errors: []int{3},
				},
				{
					ID: "retail-t3", Parent: "retail-t3",
					Source: Source{Format: "canonical", File: "canonical.jsonl", Index: 2, Line: 4},
				},
			},
		},
		{
			file: "openai.jsonl",
			want: []importSummary{
				{
					ID: "openai-0", Parent: "openai-0",
					Source: Source{Format: "openai-jsonl", File: "openai.jsonl", Index: 0, Line: 1},
					Roles:  "system user assistant tool assistant",
					Calls:  []string{`m2 call_1 find_user_id_by_zip {"zip": "19122"}`},
					Nulls:  []int{2},
					Hidden: []string{`user_instruction "You are yusuf_rossi_9620"`},
					// "Error:" does not make an error here: only "error": true does.
				},
				{
					ID: "conv-b", Parent: "task-b", Domain: "retail", Succeeded: true,
					Source: Source{Format: "openai-jsonl", File: "openai.jsonl", Index: 1, Line: 2},
					Roles:  "user assistant tool tool assistant",
					Calls: []string{
						`m1 call_1 get_order_details raw:{"order_id": "#W1"`,
						`m1 call_2 get_order_details {"order_id": "#W2"}`,
					},
					Errors: []int{2}, Nulls: []int{1},
				},
				{
					ID: "openai-2", Parent: "openai-2",
					Source: Source{Format: "openai-jsonl", File: "openai.jsonl", Index: 2, Line: 3},
					Roles:  "user assistant",
				},
			},
		},
		{
			file: "tau-airline.json",
			want: []importSummary{
				{
					ID: "tau-airline-task0-trial0", Parent: "tau-airline-task0", Domain: "airline", Succeeded: true,
					Source: Source{Format: "tau-bench", File: "tau-airline.json", Index: 0, Line: 2},
					Roles:  "system user assistant tool assistant tool assistant",
					Calls: []string{
						`m2 call_A get_user_details {"user_id":"mia_li_3668"}`,
						`m4 call_A think {"thought": "reusing the id after its answer"}`,
					},
					Nulls: []int{2, 4},
					Hidden: []string{
						`user_instruction "You are mia_li_3668. You want to know your membership."`,
						`reference_actions [
          {
            "name": "get_user_details",
            "kwargs": {
              "user_id": "mia_li_3668"
            }
          }
        ]`,
						`task_user_id "mia_li_3668"`,
					},
				},
				{
					ID: "tau-airline-task0-trial1", Parent: "tau-airline-task0", Domain: "airline",
					Source: Source{Format: "tau-bench", File: "tau-airline.json", Index: 1, Line: 81},
					Roles:  "system user assistant tool assistant",
					Calls:  []string{`m2 call_B get_user_details raw:{"user_id": mia}`},
					Errors: []int{3}, Nulls: []int{2},
					Hidden: []string{
						`user_instruction "You are mia_li_3668. You want to know your membership."`,
						`reference_actions []`,
						`task_user_id "mia_li_3668"`,
						`reference_outputs [
          "gold"
        ]`,
					},
				},
				{
					ID: "tau-airline-task1-trial0", Parent: "tau-airline-task1", Domain: "airline",
					Source: Source{Format: "tau-bench", File: "tau-airline.json", Index: 2, Line: 130},
					Roles:  "user assistant",
					Hidden: []string{
						`user_instruction "You want to cancel."`,
						`reference_actions [
          {
            "name": "cancel_reservation",
            "kwargs": {
              "reservation_id": "ABC123"
            }
          }
        ]`,
					},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", "import", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			trajs, err := readAllTrajectories(f, tt.file, FormatAuto)
			if err != nil {
				t.Fatalf("Read(%s) error: %v", tt.file, err)
			}
			var got []importSummary
			for _, tr := range trajs {
				got = append(got, summarizeImport(tr))
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Read(%s) = %d trajectories, want %d", tt.file, len(got), len(tt.want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], tt.want[i]) {
					t.Errorf("Read(%s)[%d] =\n%+v\nwant\n%+v", tt.file, i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestReadDetails checks fields the summary leaves out.
func TestReadDetails(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "import", "canonical.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	trajs, err := readAllTrajectories(f, "canonical.jsonl", FormatCanonical)
	if err != nil || len(trajs) != 3 {
		t.Fatalf("Read(canonical.jsonl) = %d, %v; want 3 trajectories", len(trajs), err)
	}
	tr := trajs[0]
	if len(tr.Tools) != 1 || tr.Tools[0].Name != "get_user_details" || !strings.Contains(string(tr.Tools[0].Parameters), `"required":["user_id"]`) {
		t.Errorf("Read(canonical.jsonl)[0].Tools = %+v, want get_user_details with its schema", tr.Tools)
	}
	if tr.Request != "book a flight" || *tr.Reward != 1 || string(tr.Meta) != `{"model":"gpt-4o","trial":0}` {
		t.Errorf("Read(canonical.jsonl)[0] request, reward, meta = %q, %v, %s", tr.Request, *tr.Reward, tr.Meta)
	}
	if m := tr.Messages[5]; m.HiddenKind != HiddenTeacherHint || m.Content != "teacher note: use certificate_7504069" {
		t.Errorf("Read(canonical.jsonl)[0].Messages[5] = %+v, want the hidden teacher hint", m)
	}
	if m := tr.Messages[3]; m.ToolCallID != "c1" || m.Name != "get_user_details" || m.Content != `{"name": "Mia"}` {
		t.Errorf("Read(canonical.jsonl)[0].Messages[3] = %+v, want the get_user_details observation", m)
	}
	for i, m := range tr.Messages {
		if m.Index != i {
			t.Errorf("Read(canonical.jsonl)[0].Messages[%d].Index = %d, want %d", i, m.Index, i)
		}
	}
	if m := trajs[1].Messages[4]; m.Content != "" || m.ContentNull {
		t.Errorf("Read(canonical.jsonl)[1].Messages[4] = %+v, want an empty, non-null assistant message kept", m)
	}
	if trajs[2].Messages == nil {
		t.Errorf("Read(canonical.jsonl)[2].Messages = nil, want an empty list")
	}

	f2, err := os.Open(filepath.Join("testdata", "import", "openai.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	trajs, err = readAllTrajectories(f2, "dir/openai.jsonl", FormatOpenAI)
	if err != nil || len(trajs) != 3 {
		t.Fatalf("Read(openai.jsonl) = %d, %v; want 3 trajectories", len(trajs), err)
	}
	if got := trajs[0].Messages[1].Content; got != "My zip is 19122." {
		t.Errorf("Read(openai.jsonl)[0].Messages[1].Content = %q, want the text parts joined", got)
	}
	if tools := trajs[0].Tools; len(tools) != 1 || tools[0].Name != "find_user_id_by_zip" || tools[0].Description != "Find a user id." {
		t.Errorf("Read(openai.jsonl)[0].Tools = %+v, want find_user_id_by_zip from the OpenAI shape", tools)
	}
	if trajs[0].ID != "openai-0" || trajs[0].Source.File != "dir/openai.jsonl" {
		t.Errorf("Read(openai.jsonl)[0] id, file = %q, %q; want openai-0, dir/openai.jsonl", trajs[0].ID, trajs[0].Source.File)
	}
	if r := trajs[0].Reward; r == nil || *r != 0.5 || trajs[0].Succeeded() {
		t.Errorf("Read(openai.jsonl)[0].Reward = %v, want 0.5 and not successful", r)
	}
}

func TestReadErrors(t *testing.T) {
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	tests := []struct {
		name   string
		format Format
		in     string
		record int
		line   int
		field  string
		msg    string // a part of the error message
	}{
		{"bad role", FormatAuto,
			`{"id":"a","messages":[{"role":"user","content":"x"},{"role":"robot","content":"y"}]}`,
			0, 1, "messages[1].role", `expected one of system, user, assistant, tool; got "robot"`},
		{"line numbers count blank lines", FormatCanonical,
			"{\"id\":\"a\",\"messages\":[]}\n\n{\"id\":\"b\",\"messages\":[{\"role\":\"robot\"}]}\n",
			1, 3, "messages[0].role", `got "robot"`},
		{"messages not an array", FormatCanonical, `{"id":"a","messages":{"role":"user"}}`,
			0, 1, "messages", "expected an array of messages; got an object"},
		{"messages missing", FormatCanonical, `{"id":"a"}`,
			0, 1, "messages", "got nothing"},
		{"content a number", FormatCanonical, `{"id":"a","messages":[{"role":"user","content":42}]}`,
			0, 1, "messages[0].content", "expected a string or null; got a number (42)"},
		{"reward a string", FormatCanonical, `{"id":"a","reward":"1","messages":[]}`,
			0, 1, "reward", `expected a number; got "1"`},
		{"success a string", FormatOpenAI, `{"success":"yes","messages":[]}`,
			0, 1, "success", `got "yes"`},
		{"canonical id missing", FormatCanonical, `{"messages":[]}`,
			0, 1, "id", "expected a non-empty string"},
		{"id a number", FormatCanonical, `{"id":7,"messages":[]}`,
			0, 1, "id", "expected a string; got a number (7)"},
		{"truncated JSON", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n{\"id\":\"b\",\"messages\":[{\"role\":",
			1, 2, "", "truncated JSON"},
		{"invalid JSON", FormatCanonical, `{"id":"a","messages":[] oops}`,
			0, 1, "", "expected valid JSON"},
		{"not an object", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n[1,2]",
			1, 2, "", "expected a JSON object (one trajectory per line); got an array"},
		{"invalid UTF-8", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n{\"id\":\"b\xff\",\"messages\":[]}",
			1, 2, "", "expected UTF-8 text; got invalid byte 0xff at byte 8 of the record"},
		{"tool answer without a call", FormatCanonical,
			`{"id":"a","messages":[{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":{}}]},{"role":"tool","tool_call_id":"c9","content":"x"}]}`,
			0, 1, "messages[1].tool_call_id", `"c9", which no earlier message calls`},
		{"tool answer before its call", FormatCanonical,
			`{"id":"a","messages":[{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":{}}]}]}`,
			0, 1, "messages[0].tool_call_id", `"c1", which no earlier message calls`},
		{"tool message without id", FormatCanonical,
			`{"id":"a","messages":[{"role":"tool","content":"x"}]}`,
			0, 1, "messages[0].tool_call_id", "expected the id of an earlier tool call; got nothing"},
		{"call id reused in one message", FormatCanonical,
			`{"id":"a","messages":[{"role":"assistant","tool_calls":[{"id":"c1","name":"f","arguments":{}},{"id":"c1","name":"g","arguments":{}}]}]}`,
			0, 1, "messages[0].tool_calls[1].id", `"c1", still unanswered from messages[0]`},
		{"call id reused before the answer", FormatOpenAI,
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
			0, 1, "messages[1].tool_calls[0].id", "still unanswered from messages[0]"},
		{"duplicate trajectory id", FormatCanonical,
			"{\"id\":\"a\",\"messages\":[]}\n{\"id\":\"b\",\"messages\":[]}\n{\"id\":\"a\",\"messages\":[]}",
			2, 3, "id", `"a", already used by record 0`},
		{"nesting too deep", FormatCanonical, `{"id":"a","messages":[],"meta":` + deep + `}`,
			0, 1, "meta[0][0][0][0][0][0][0]…", "JSON nested at most 10000 levels deep"},
		{"bad visibility", FormatCanonical, `{"id":"a","messages":[{"role":"user","content":"x","visibility":"secret"}]}`,
			0, 1, "messages[0].visibility", `got "secret"`},
		{"hidden at out of range", FormatCanonical, `{"id":"a","messages":[{"role":"user"}],"hidden":[{"kind":"k","content":1,"at":5}]}`,
			0, 1, "hidden[0].at", "expected a message index from 0 to 1; got a number (5)"},
		{"hidden kind missing", FormatCanonical, `{"id":"a","messages":[],"hidden":[{"content":1}]}`,
			0, 1, "hidden[0].kind", "expected a non-empty kind"},
		{"OpenAI call in canonical", FormatCanonical,
			`{"id":"a","messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`,
			0, 1, "messages[0].tool_calls[0]", "import the file as openai-jsonl"},
		{"tool calls on a user message", FormatCanonical,
			`{"id":"a","messages":[{"role":"user","tool_calls":[{"id":"c1","name":"f","arguments":{}}]}]}`,
			0, 1, "messages[0].tool_calls", "tool calls only on assistant messages"},
		{"tool name missing", FormatOpenAI,
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"arguments":"{}"}}]}]}`,
			0, 1, "messages[0].tool_calls[0].function.name", "expected a non-empty tool name"},
		{"arguments a number", FormatOpenAI,
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":3}}]}]}`,
			0, 1, "messages[0].tool_calls[0].function.arguments", "expected a JSON string or object; got a number (3)"},
		{"legacy function_call", FormatOpenAI,
			`{"messages":[{"role":"assistant","function_call":{"name":"f","arguments":"{}"}}]}`,
			0, 1, "messages[0].function_call", "legacy function_call is not supported"},
		{"image content part", FormatOpenAI,
			`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`,
			0, 1, "messages[0].content[0].text", "only text parts are supported"},
		{"tools not an array", FormatOpenAI, `{"messages":[],"tools":{"name":"f"}}`,
			0, 1, "tools", "expected an array of tool schemas; got an object"},
		{"tool parameters not an object", FormatOpenAI, `{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":"x"}}]}`,
			0, 1, "tools[0].function.parameters", "expected a JSON Schema object"},

		{"tau traj missing", FormatAuto, "[\n  {\"task_id\": 0, \"trial\": 0, \"reward\": 1}\n]",
			0, 2, "traj", "expected an array of chat messages; got nothing"},
		{"tau traj not an array", FormatAuto, `[{"task_id": 0, "traj": "hello"}]`,
			0, 1, "traj", `got "hello"`},
		{"tau reward a string", FormatAuto, `[{"task_id": 0, "reward": "1.0", "traj": []}]`,
			0, 1, "reward", `expected a number; got "1.0"`},
		{"tau task_id missing", FormatAuto, `[{"traj": [], "trial": 0}]`,
			0, 1, "task_id", "expected a number or a string; got nothing"},
		{"tau bad role, pretty printed", FormatAuto,
			"[\n  {\"task_id\": 0, \"traj\": []},\n  {\n    \"task_id\": 1,\n    \"traj\": [\n      {\"role\": \"function\"}\n    ]\n  }\n]\n",
			1, 3, "traj[0].role", `got "function"`},
		{"tau orphan tool message", FormatAuto,
			`[{"task_id": 0, "traj": [{"role": "tool", "tool_call_id": "call_1", "content": "x"}]}]`,
			0, 1, "traj[0].tool_call_id", `"call_1", which no earlier message calls`},
		{"tau invalid UTF-8", FormatAuto, "[{\"task_id\": 0, \"traj\": []},\n {\"task_id\": 1, \"traj\": [{\"role\": \"user\", \"content\": \"\xc3\"}]}]",
			1, 2, "", "expected UTF-8 text"},
		{"tau truncated", FormatAuto, "[{\"task_id\": 0, \"traj\": []},\n {\"task_id\": 1, \"traj\": [{\"role\": \"us",
			1, 2, "", "truncated JSON"},
		{"tau array not closed", FormatAuto, "[{\"task_id\": 0, \"traj\": []}\n",
			-1, 2, "", "truncated JSON"},
		{"tau missing comma", FormatAuto, "[{\"task_id\": 0, \"traj\": []}\n {\"task_id\": 1, \"traj\": []}]",
			1, 2, "", "expected valid JSON"},
		{"tau element not an object", FormatTauBench, `[1]`,
			0, 1, "", "expected a τ-bench record {task_id, reward, info, traj, trial}; got a number (1)"},
		{"tau not an array", FormatTauBench, `{"task_id": 0}`,
			-1, 1, "", "expected a JSON array of τ-bench records; got an object"},
		{"tau trailing data", FormatTauBench, "[{\"task_id\": 0, \"traj\": []}]\n\n{\"x\": 1}",
			-1, 3, "", "expected the end of the input after the τ-bench array; got an object"},
		{"tau duplicate task and trial", FormatAuto, `[{"task_id": 3, "trial": 1, "traj": []}, {"task_id": 3, "trial": 1, "traj": []}]`,
			1, 1, "task_id", `"x-task3-trial1", already used by record 0`},
		{"tau nesting too deep", FormatTauBench, `[{"task_id": 0, "traj": [], "info": ` + deep + `}]`,
			0, 1, "", "JSON nested at most 10000 levels deep"},
		{"tau info not an object", FormatAuto, `[{"task_id": 0, "traj": [], "info": 3}]`,
			0, 1, "info", "expected an object; got a number (3)"},

		{"empty", FormatAuto, "", -1, 0, "", "file is empty"},
		{"only white space", FormatAuto, " \n\t\n", -1, 0, "", "file is empty"},
		{"empty tau-bench", FormatTauBench, "  ", -1, 0, "", "file is empty"},
		{"empty canonical", FormatCanonical, "\n\r\n  \n", -1, 0, "", "file is empty"},
		{"empty openai", FormatOpenAI, "", -1, 0, "", "file is empty"},
		{"junk", FormatAuto, "hello world", -1, 1, "",
			`expected a JSON array of τ-bench records, JSON Lines of canonical/OpenAI-chat trajectories, or a SWE-agent, mini-swe-agent or OpenHands trajectory; got "hello world"`},
		{"unknown format", Format("xml"), `{}`, -1, 0, "", `got "xml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := "x.json"
			trajs, err := readAllTrajectories(strings.NewReader(tt.in), file, tt.format)
			var ie *ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("Read(%s) = %d trajectories, %v; want an *ImportError", tt.name, len(trajs), err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Read(%s) error %v does not wrap ErrInvalid", tt.name, err)
			}
			got := fmt.Sprintf("record %d line %d field %q", ie.Record, ie.Line, ie.Field)
			want := fmt.Sprintf("record %d line %d field %q", tt.record, tt.line, tt.field)
			if got != want {
				t.Errorf("Read(%s) error at %s, want %s (%v)", tt.name, got, want, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, file+": ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("Read(%s) = %q, want it to start with %q and contain %q", tt.name, msg, file+": ", tt.msg)
			}
			if len(ie.Got) > 120 {
				t.Errorf("Read(%s) error Got is %d bytes long, want a short excerpt", tt.name, len(ie.Got))
			}
		})
	}
}

func TestImportErrorString(t *testing.T) {
	tests := []struct {
		err  *ImportError
		want string
	}{
		{&ImportError{File: "airline.jsonl", Record: 3, Line: 4, Field: "messages[2].role",
			Expected: "one of system, user, assistant, tool", Got: `"robot"`},
			`airline.jsonl: record 3 (line 4): messages[2].role: expected one of system, user, assistant, tool; got "robot"`},
		{&ImportError{File: "a.json", Record: 2, Err: errors.New("record exceeds 64 MiB")},
			"a.json: record 2: record exceeds 64 MiB"},
		{&ImportError{File: "a.json", Record: -1, Line: 7, Expected: "the end of the input"},
			"a.json: line 7: expected the end of the input"},
		{&ImportError{Record: -1}, "invalid input"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("(%+v).Error() = %q, want %q", *tt.err, got, tt.want)
		}
	}
	cause := errors.New("cause")
	err := error(&ImportError{Record: -1, Err: cause})
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, cause) {
		t.Errorf("errors.Is(%v, ErrInvalid / cause) = %v / %v, want true / true", err, errors.Is(err, ErrInvalid), errors.Is(err, cause))
	}
}

func TestParseFormat(t *testing.T) {
	tests := []struct {
		in   string
		want Format
		ok   bool
	}{
		{"", FormatAuto, true},
		{"auto", FormatAuto, true},
		{"canonical", FormatCanonical, true},
		{" Tau-Bench ", FormatTauBench, true},
		{"openai-jsonl", FormatOpenAI, true},
		{"openai", "", false},
		{"swe-agent", "", false},
	}
	for _, tt := range tests {
		got, err := ParseFormat(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err != nil && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "auto, canonical, tau-bench, openai-jsonl")) {
			t.Errorf("ParseFormat(%q) error = %v, want ErrInvalid naming the accepted values", tt.in, err)
		}
	}
}

func TestDetect(t *testing.T) {
	fixture := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "import", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	big := strings.Repeat("x", 5000)
	tests := []struct {
		name string
		in   string
		size int    // bufio size; 0 for Read's
		want Format // "" for an error
		msg  string // part of the error message
	}{
		{"tau-bench fixture", fixture("tau-airline.json"), 0, FormatTauBench, ""},
		{"canonical fixture", fixture("canonical.jsonl"), 0, FormatCanonical, ""},
		{"openai fixture", fixture("openai.jsonl"), 0, FormatOpenAI, ""},
		{"byte order mark", "\ufeff" + fixture("canonical.jsonl"), 0, FormatCanonical, ""},
		{"leading blank lines", "\n\n" + fixture("canonical.jsonl"), 0, FormatCanonical, ""},
		{"id and OpenAI calls", `{"id":"a","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, 0, FormatOpenAI, ""},
		{"messages without id", `{"messages":[]}`, 0, FormatOpenAI, ""},
		{"empty tau-bench list", " [ ] ", 0, FormatTauBench, ""},
		{"tau-bench cut inside the first record", `[{"task_id": 0, "reward": 1, "info": {"task": `, 0, FormatTauBench, ""},
		{"canonical cut inside the first record", `{"id": "a", "messages": [{"role": "us`, 0, FormatCanonical, ""},
		// First records larger than what the reader can buffer.
		{"large tau-bench record", `[{"task_id": 0, "info": {"x": "` + big + `"}, "traj": []}]`, 64, FormatTauBench, ""},
		{"large canonical record", `{"id": "a", "messages": [{"role": "user", "content": "` + big + `"}]}`, 64, FormatCanonical, ""},
		{"large OpenAI record", `{"tools": [{"name": "` + big + `"}], "messages": []}`, 64, FormatOpenAI, ""},

		{"empty", "", 0, "", "file is empty"},
		{"junk", "\x00\x01binary", 0, "", `expected a JSON array of τ-bench records, JSON Lines of canonical/OpenAI-chat trajectories, or a SWE-agent, mini-swe-agent or OpenHands trajectory; got "\x00\x01binary"`},
		{"array of numbers", "[1, 2]", 0, "", "got a JSON array whose first element is a number"},
		{"array without traj", `[{"a": 1}, {"traj": []}]`, 0, "", `first element has no "traj" (keys: a)`},
		{"object without messages", `{"instance_id": "x", "patch": "y"}`, 0, "", `a JSON object without "messages" (keys: instance_id, patch)`},
		{"pretty-printed object", "{\n  \"id\": \"a\",\n  \"messages\": []\n}\n", 0, "", "does not end on its first line"},
		{"broken JSON line", `{"a" 1}`, 0, "", "not valid JSON"},
		{"string", `"hello"`, 0, "", `got "\"hello\""`},
		// From the import audit: detection sends these to the importer,
		// which names the field, or says what the file is instead.
		{"messages that are not an array", `{"id": "t0", "reward": 1, "messages": "hi"}`, 0, FormatCanonical, ""},
		{"a number too large for a float", `{"id": "t0", "reward": 1e999, "messages": []}`, 0, FormatCanonical, ""},
		{"canonical records in an array", `[{"id": "t0", "reward": 1, "messages": []}]`, 0, "", "canonical and OpenAI-chat trajectories go one per line (JSON Lines), not in an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = readBufferSize
			}
			br := bufio.NewReaderSize(strings.NewReader(tt.in), size)
			got, err := Detect(br)
			if tt.want != "" {
				if got != tt.want || err != nil {
					t.Errorf("Detect(%s) = %q, %v; want %q", tt.name, got, err, tt.want)
				}
			} else {
				var ie *ImportError
				if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("Detect(%s) = %q, %v; want an *ImportError containing %q", tt.name, got, err, tt.msg)
				}
			}
			rest, _ := io.ReadAll(br)
			if string(rest) != tt.in {
				t.Errorf("Detect(%s) consumed input: %d bytes left of %d", tt.name, len(rest), len(tt.in))
			}
		})
	}
}

// failingReader returns data, then a non-EOF error.
type failingImportReader struct {
	data []byte
	err  error
}

func (r *failingImportReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadReaderFailure checks that a broken reader is not reported as an
// invalid file.
func TestReadReaderFailure(t *testing.T) {
	cause := errors.New("connection reset")
	tests := []struct {
		name   string
		format Format
		data   string
	}{
		{"detect", FormatAuto, ""},
		{"jsonl", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n{\"id\":"},
		{"tau-bench", FormatTauBench, `[{"task_id": 0, "traj": []}, {"task_id": 1, `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAllTrajectories(&failingImportReader{data: []byte(tt.data), err: cause}, "x.json", tt.format)
			var ie *ImportError
			if !errors.Is(err, cause) || errors.Is(err, ErrInvalid) || errors.As(err, &ie) {
				t.Errorf("Read(%s) = %v, want the reader's error, not an *ImportError", tt.name, err)
			}
		})
	}
}

func TestReadStopsWhenConsumerStops(t *testing.T) {
	for _, name := range []string{"canonical.jsonl", "openai.jsonl", "tau-airline.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "import", name))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, err := range Read(bytes.NewReader(b), name, FormatAuto) {
			if err != nil {
				t.Fatalf("Read(%s) error: %v", name, err)
			}
			n++
			break
		}
		if n != 1 {
			t.Errorf("Read(%s) yielded %d times after break, want 1", name, n)
		}
	}
}

// TestRecordLimit lowers the cap to check that oversized records are refused
// with their coordinates in both readers.
func TestRecordLimit(t *testing.T) {
	defer func(n int) { recordLimit = n }(recordLimit)
	recordLimit = 100
	long := strings.Repeat("a", 200)
	tests := []struct {
		name   string
		format Format
		in     string
		record int
		line   int
	}{
		{"jsonl line", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n\n{\"id\":\"" + long + "\",\"messages\":[]}\n", 1, 3},
		{"jsonl last line", FormatCanonical, "{\"id\":\"a\",\"messages\":[]}\n{\"id\":\"" + long + "\"}", 1, 2},
		{"tau-bench element", FormatTauBench, "[{\"task_id\": 0, \"traj\": []},\n {\"task_id\": \"" + long + "\", \"traj\": []}]", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trajs, err := readAllTrajectories(strings.NewReader(tt.in), "x.json", tt.format)
			var ie *ImportError
			if !errors.As(err, &ie) || ie.Record != tt.record || ie.Line != tt.line ||
				!strings.Contains(err.Error(), "record exceeds 100 bytes") {
				t.Fatalf("Read(%s) = %d trajectories, %v; want record %d (line %d): record exceeds 100 bytes",
					tt.name, len(trajs), err, tt.record, tt.line)
			}
			if len(trajs) != 1 {
				t.Errorf("Read(%s) yielded %d trajectories before the error, want 1", tt.name, len(trajs))
			}
		})
	}
}

// endlessRecord is an io.Reader producing one JSON record that never ends:
// prefix followed by 'a's.
type endlessImportRecord struct {
	prefix string
	n      int64
}

func (r *endlessImportRecord) Read(p []byte) (int, error) {
	i := 0
	for ; i < len(p) && r.n < int64(len(r.prefix)); i++ {
		p[i] = r.prefix[r.n]
		r.n++
	}
	for ; i < len(p); i++ {
		p[i] = 'a'
	}
	r.n += int64(len(p))
	if r.n > 1<<30 {
		return 0, errors.New("endlessRecord: read 1 GiB, the cap did not stop the reader")
	}
	return len(p), nil
}

// TestRecordLimitReal checks the real 64 MiB cap against records that never
// end: the importers must stop at the cap instead of buffering forever.
func TestRecordLimitReal(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB per case")
	}
	tests := []struct {
		name   string
		format Format
		prefix string
	}{
		{"jsonl", FormatAuto, `{"id": "a", "messages": [], "meta": "`},
		{"tau-bench", FormatAuto, `[{"task_id": 0, "traj": [], "info": "`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readAllTrajectories(&endlessImportRecord{prefix: tt.prefix}, "big.json", tt.format)
			if err == nil || !strings.Contains(err.Error(), "big.json: record 0 (line 1): record exceeds 64 MiB") {
				t.Errorf("Read(%s) = %v, want record 0 (line 1): record exceeds 64 MiB", tt.name, err)
			}
		})
	}
}

// recordStream lazily generates n canonical records, so the test input never
// exists in memory as a whole.
type canonicalStream struct {
	n, next int
	buf     []byte
}

func (s *canonicalStream) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.next == s.n {
			return 0, io.EOF
		}
		s.buf = fmt.Appendf(s.buf[:0],
			`{"id":"t%d","parent_id":"p%d","reward":1,"messages":[{"role":"user","content":"find order #W%d"},`+
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"get_order_details","arguments":{"order_id":"#W%d"}}]},`+
				`{"role":"tool","tool_call_id":"c1","content":"{\"status\": \"delivered\"}"},{"role":"assistant","content":"Delivered."}]}`+"\n",
			s.next, s.next/4, s.next, s.next)
		s.next++
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func TestReadStreaming(t *testing.T) {
	const n = 20000
	count, calls := 0, 0
	parents := make(map[string]bool)
	for tr, err := range Read(&canonicalStream{n: n}, "stream.jsonl", FormatAuto) {
		if err != nil {
			t.Fatalf("Read(stream) error after %d records: %v", count, err)
		}
		if tr.Source.Index != count || tr.Source.Line != count+1 || tr.ID != fmt.Sprintf("t%d", count) {
			t.Fatalf("Read(stream)[%d] = %s at %+v, want t%d at index %d line %d", count, tr.ID, tr.Source, count, count, count+1)
		}
		count++
		parents[tr.Parent()] = true
		for _, m := range tr.Messages {
			calls += len(m.ToolCalls)
		}
	}
	if count != n || calls != n || len(parents) != n/4 {
		t.Errorf("Read(stream) = %d trajectories, %d calls, %d parents; want %d, %d, %d", count, calls, len(parents), n, n, n/4)
	}
}

func BenchmarkReadCanonical(b *testing.B) {
	input, err := io.ReadAll(&canonicalStream{n: 5000})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, err := range Read(bytes.NewReader(input), "bench.jsonl", FormatCanonical) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 5000 {
			b.Fatalf("Read(bench) = %d trajectories, want 5000", n)
		}
	}
}

// FuzzRead feeds arbitrary bytes to Read with detection. The seed corpus in
// testdata/fuzz/FuzzRead holds one input per format plus broken ones. Read
// must never panic, must stop after an error, and every trajectory it yields
// must be usable: an id, source coordinates, valid roles and decisions whose
// indexes stay in range.
func FuzzRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		if json.Valid(data) && utf8.Valid(data) {
			checkJSONScan(t, data)
		}
		next := 0
		failed := false
		for tr, err := range Read(bytes.NewReader(data), "fuzz.json", FormatAuto) {
			if failed {
				t.Fatalf("Read yielded %v after an error", tr)
			}
			if err != nil {
				var ie *ImportError
				if !errors.As(err, &ie) {
					t.Fatalf("Read error %v (%T) is not an *ImportError", err, err)
				}
				failed = true
				continue
			}
			if tr.ID == "" || tr.Source.Index != next || tr.Source.File != "fuzz.json" || tr.Source.Line < 1 {
				t.Fatalf("Read yielded id %q at %+v, want an id at index %d with a line", tr.ID, tr.Source, next)
			}
			switch Format(tr.Source.Format) {
			case FormatCanonical, FormatOpenAI, FormatTauBench, FormatSWEAgent, FormatMiniSWE, FormatOpenHands:
			default:
				t.Fatalf("Read yielded Source.Format %q", tr.Source.Format)
			}
			for i, m := range tr.Messages {
				switch m.Role {
				case RoleSystem, RoleUser, RoleAssistant, RoleTool:
				default:
					t.Fatalf("Read yielded message %d with role %q", i, m.Role)
				}
			}
			for _, d := range Decisions(tr) {
				m := tr.Messages[d.Message]
				if d.Call >= len(m.ToolCalls) || d.Observation >= len(tr.Messages) ||
					d.Observation >= 0 && d.Observation <= d.Message {
					t.Fatalf("Decisions yielded %+v out of range", d)
				}
			}
			next++
		}
	})
}

// checkScan compares the importers' JSON splitter with encoding/json on a
// valid JSON value: the same members (last duplicate wins) or elements.
func checkJSONScan(t *testing.T, data []byte) {
	t.Helper()
	switch jsonKind(data) {
	case '{':
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("json.Unmarshal(%q) = %v", data, err)
		}
		got := map[string]json.RawMessage{}
		jsonMembers(data, func(key []byte, val json.RawMessage) { got[string(key)] = val })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("members(%q) = %q, want %q", data, got, want)
		}
	case '[':
		var want []json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("json.Unmarshal(%q) = %v", data, err)
		}
		if got := jsonElements(data); len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("elements(%q) = %q, want %q", data, got, want)
		}
	}
}

func TestScan(t *testing.T) {
	tests := []string{
		`{}`,
		`[]`,
		` { "a" : 1 , "b" : [ 1 , { "c" : "]}" } ] , "d" : null } `,
		`{"a\"b": "x\\", "c": "\\\"", "d": true, "e": -1.5e3}`,
		`{"\u0072ole": "user", "role": "assistant"}`,
		`[1, "two", [3], {"4": 4}, false, null, "\"]"]`,
		`[[[[]]], {"k": [{}]}]`,
		`{"emoji": "\ud83d\ude00 é", "é": 1}`,
	}
	for _, in := range tests {
		if !json.Valid([]byte(in)) {
			t.Fatalf("test input %q is not valid JSON", in)
		}
		checkJSONScan(t, []byte(in))
	}
}

// TestTauCompositeReward: a τ-bench fork that reports a composite reward
// (0.93: success less an efficiency penalty plus a resilience bonus) keeps
// the binary outcome in info.reward_info.components.base_success; that is
// the trajectory's success, the reward stays as reported, and meta says
// where the success came from. Without it, reward >= 1 decides.
func TestTauCompositeReward(t *testing.T) {
	task := 0
	rec := func(reward float64, info string) string {
		task++
		return fmt.Sprintf(`{"task_id": %d, "trial": 0, "reward": %v, "info": %s, "traj": [{"role": "user", "content": "hi"}]}`, task, reward, info)
	}
	src := "[" + strings.Join([]string{
		rec(0.93, `{"task": {"instruction": "x"}, "reward_info": {"reward": 0.93, "components": {"base_success": 1.0, "efficiency_penalty": -0.17, "composite": 0.93}}}`),
		rec(0.0, `{"task": {"instruction": "x"}, "reward_info": {"reward": 0.0, "components": {"base_success": 0.0}}}`),
		rec(0.93, `{"task": {"instruction": "x"}}`),
		rec(1.0, `{"task": {"instruction": "x"}, "reward_info": {"components": {"base_success": "yes"}}}`),
	}, ",") + "]"
	ts, err := readAllTrajectories(strings.NewReader(src), "grok-retail.json", FormatTauBench)
	if err != nil || len(ts) != 4 {
		t.Fatalf("Read = %d trajectories, %v", len(ts), err)
	}
	for i, want := range []struct {
		success bool
		reward  float64
		from    bool
	}{{true, 0.93, true}, {false, 0, true}, {false, 0.93, false}, {true, 1, false}} {
		tr := ts[i]
		if tr.Succeeded() != want.success || tr.Reward == nil || *tr.Reward != want.reward {
			t.Errorf("record %d: success %v reward %v; want %v, %v", i, tr.Succeeded(), tr.Reward, want.success, want.reward)
		}
		if got := strings.Contains(string(tr.Meta), `"success_from":"info.reward_info.components.base_success"`); got != want.from {
			t.Errorf("record %d: meta %s; success_from present %v, want %v", i, tr.Meta, got, want.from)
		}
	}
}

// TestCanonicalArgumentsNotAnObject: a canonical call's arguments are an
// object; a JSON string is decoded as OpenAI's are, and anything else is
// kept verbatim so the call fails the execution check (import audit: "{bad"
// and 42 used to pass it).
func TestCanonicalArgumentsNotAnObject(t *testing.T) {
	in := `{"id":"a1","messages":[{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"c1","name":"f","arguments":"{bad"},{"id":"c2","name":"f","arguments":42},` +
		`{"id":"c3","name":"f","arguments":"{\"x\":1}"},{"id":"c4","name":"f","arguments":{"x":2}},{"id":"c5","name":"f"}]}]}` + "\n"
	var got []ToolCall
	for tr, err := range Read(strings.NewReader(in), "a.jsonl", FormatCanonical) {
		if err != nil {
			t.Fatal(err)
		}
		got = tr.Messages[0].ToolCalls
	}
	for i, want := range []struct {
		valid bool
		raw   string
		args  string
	}{{false, "{bad", ""}, {false, "42", ""}, {true, "", `{"x":1}`}, {true, "", `{"x":2}`}, {false, "", ""}} {
		c := got[i]
		if c.ArgumentsValid() != want.valid || c.RawArguments != want.raw || string(c.Arguments) != want.args {
			t.Errorf("call %d: valid %v, raw %q, args %s; want %v, %q, %s", i, c.ArgumentsValid(), c.RawArguments, c.Arguments, want.valid, want.raw, want.args)
		}
	}
}
