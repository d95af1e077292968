package grounding

import (
	"reflect"
	"testing"
)

func msgUser(s string) Message    { return Message{Role: RoleUser, Content: s} }
func msgReply(s string) Message   { return Message{Role: RoleAssistant, Content: s} }
func msgHidden(m Message) Message { m.Visibility = Hidden; return m }
func callTo(id, name string) ToolCall {
	return ToolCall{ID: id, Name: name, Arguments: []byte(`{}`)}
}
func msgCalls(text string, cs ...ToolCall) Message {
	return Message{Role: RoleAssistant, Content: text, ContentNull: text == "", ToolCalls: cs}
}
func msgAnswer(id string) Message { return Message{Role: RoleTool, ToolCallID: id, Content: "ok"} }
func msgFailure(id string) Message {
	return Message{Role: RoleTool, ToolCallID: id, Content: "Error: no", Error: true}
}

func TestDecisions(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want []Decision
	}{
		{
			name: "text replies",
			msgs: []Message{msgUser("hi"), msgReply("hello"), msgUser("bye"), msgReply("goodbye")},
			want: []Decision{
				{Ordinal: 0, Message: 1, Call: -1, Observation: -1},
				{Ordinal: 1, Message: 3, Call: -1, Observation: -1},
			},
		},
		{
			name: "empty assistant message makes no decision",
			msgs: []Message{msgUser("hi"), msgReply("")},
			want: nil,
		},
		{
			name: "text then calls, answered out of order",
			msgs: []Message{msgUser("hi"), msgCalls("Checking both.", callTo("a", "f"), callTo("b", "g")), msgAnswer("b"), msgAnswer("a")},
			want: []Decision{
				{Ordinal: 0, Message: 1, Call: -1, Observation: -1},
				{Ordinal: 1, Message: 1, Call: 0, Tool: "f", Observation: 3},
				{Ordinal: 2, Message: 1, Call: 1, Tool: "g", Observation: 2},
			},
		},
		{
			name: "error observation",
			msgs: []Message{msgUser("hi"), msgCalls("", callTo("a", "f")), msgFailure("a"), msgCalls("", callTo("b", "f")), msgAnswer("b")},
			want: []Decision{
				{Ordinal: 0, Message: 1, Call: 0, Tool: "f", Observation: 2, Error: true},
				{Ordinal: 1, Message: 3, Call: 0, Tool: "f", Observation: 4},
			},
		},
		{
			name: "call without observation",
			msgs: []Message{msgUser("hi"), msgCalls("", callTo("a", "f"), callTo("b", "g")), msgAnswer("a"), msgReply("done")},
			want: []Decision{
				{Ordinal: 0, Message: 1, Call: 0, Tool: "f", Observation: 2},
				{Ordinal: 1, Message: 1, Call: 1, Tool: "g", Observation: -1},
				{Ordinal: 2, Message: 3, Call: -1, Observation: -1},
			},
		},
		{
			// Paired by position, as the checker does.
			name: "call without id",
			msgs: []Message{msgCalls("", callTo("", "f")), msgAnswer("")},
			want: []Decision{{Ordinal: 0, Message: 0, Call: 0, Tool: "f", Observation: 1}},
		},
		{
			name: "an answer after the next turn is not the call's",
			msgs: []Message{msgCalls("", callTo("a", "f")), msgReply("let me see"), msgAnswer("a")},
			want: []Decision{{Ordinal: 0, Message: 0, Call: 0, Tool: "f", Observation: -1}, {Ordinal: 1, Message: 1, Call: -1, Observation: -1}},
		},
		{
			// The agent never saw it (the audit's hidden db_state answer).
			name: "a hidden answer is not the observation",
			msgs: []Message{msgCalls("", callTo("a", "f")), msgHidden(msgAnswer("a"))},
			want: []Decision{{Ordinal: 0, Message: 0, Call: 0, Tool: "f", Observation: -1}},
		},
		{
			name: "hidden assistant messages skipped",
			msgs: []Message{
				msgUser("hi"),
				msgHidden(msgCalls("teacher peeks", callTo("h", "get_db"))),
				msgAnswer("h"),
				msgHidden(msgReply("teacher note")),
				msgCalls("", callTo("v", "f")),
				msgAnswer("v"),
			},
			want: []Decision{{Ordinal: 0, Message: 4, Call: 0, Tool: "f", Observation: 5}},
		},
		{
			// A hidden call takes no part in the pairing: the first
			// visible answer after the visible call is its own.
			name: "hidden call takes no answer",
			msgs: []Message{msgHidden(msgCalls("", callTo("x", "peek"))), msgCalls("", callTo("x", "f")), msgAnswer("x"), msgAnswer("x")},
			want: []Decision{{Ordinal: 0, Message: 1, Call: 0, Tool: "f", Observation: 2}},
		},
		{
			// OpenAI reissues call ids across turns; the τ-bench airline
			// log does this in 50 of 200 trajectories.
			name: "id reused after its answer",
			msgs: []Message{msgUser("hi"), msgCalls("", callTo("c", "f")), msgAnswer("c"), msgCalls("", callTo("c", "g")), msgFailure("c")},
			want: []Decision{
				{Ordinal: 0, Message: 1, Call: 0, Tool: "f", Observation: 2},
				{Ordinal: 1, Message: 3, Call: 0, Tool: "g", Observation: 4, Error: true},
			},
		},
		{
			name: "answer before the call does not count",
			msgs: []Message{msgAnswer("c"), msgCalls("", callTo("c", "f"))},
			want: []Decision{{Ordinal: 0, Message: 1, Call: 0, Tool: "f", Observation: -1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Trajectory{ID: "t", Messages: tt.msgs}
			got := Decisions(tr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decisions(%s) = %+v, want %+v", tt.name, got, tt.want)
			}
			// The store refuses an import where the check pairs otherwise.
			r := Check(tr, nil)
			for i, d := range r.Decisions {
				if i >= len(got) || d.Message != got[i].Message || d.Call != got[i].Call || d.Observation != got[i].Observation {
					t.Errorf("the check's decision %d (message %d, call %d, observation %d) is not Decisions'", i, d.Message, d.Call, d.Observation)
				}
			}
		})
	}
}

func TestVisibleBeforeAndHiddenKnownAt(t *testing.T) {
	at := func(i int) *int { return &i }
	tr := &Trajectory{
		Messages: []Message{msgUser("hi"), msgHidden(Message{Role: RoleSystem, Content: "hint"}), msgReply("a"), msgUser("b"), msgReply("c")},
		Hidden:   []HiddenEntry{{Kind: HiddenUserInstruction}, {Kind: HiddenDBState, At: at(3)}, {Kind: "late", At: at(5)}},
	}
	tests := []struct {
		msg                  int
		visible, hMsgs, hEnt []int
	}{
		{0, nil, nil, []int{0}},
		{2, []int{0}, []int{1}, []int{0}},
		{4, []int{0, 2, 3}, []int{1}, []int{0, 1}},
		{9, []int{0, 2, 3, 4}, []int{1}, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		if got := VisibleBefore(tr, tt.msg); !reflect.DeepEqual(got, tt.visible) {
			t.Errorf("VisibleBefore(%d) = %v, want %v", tt.msg, got, tt.visible)
		}
		m, e := HiddenKnownAt(tr, tt.msg)
		if !reflect.DeepEqual(m, tt.hMsgs) || !reflect.DeepEqual(e, tt.hEnt) {
			t.Errorf("HiddenKnownAt(%d) = %v, %v; want %v, %v", tt.msg, m, e, tt.hMsgs, tt.hEnt)
		}
	}
}
