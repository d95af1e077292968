package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"strings"

	"groundwork/grounding"
)

// Seq yields ts in order, as an importer would.
func Seq(ts ...*grounding.Trajectory) iter.Seq2[*grounding.Trajectory, error] {
	return func(yield func(*grounding.Trajectory, error) bool) {
		for _, t := range ts {
			if !yield(t, nil) {
				return
			}
		}
	}
}

// FileMeta describes an imported file named file whose SHA-256 is derived
// from the name, so distinct names are distinct contents.
func FileMeta(file string) grounding.ImportResult {
	sum := sha256.Sum256([]byte(file))
	return grounding.ImportResult{File: file, Format: "canonical", SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(file)) * 100}
}

// Simple returns a small trajectory with id id: a user turn, one tool call
// of tool answered by an observation, and a text reply.
func Simple(id, domain string, success bool, tool string) *grounding.Trajectory {
	return &grounding.Trajectory{
		ID:      id,
		Domain:  domain,
		Success: &success,
		Source:  grounding.Source{Format: "canonical"},
		Messages: []grounding.Message{
			{Role: grounding.RoleUser, Content: "please help with " + id},
			{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{
				{ID: "c1", Name: tool, Arguments: json.RawMessage(`{"id":"` + id + `"}`)},
			}},
			{Role: grounding.RoleTool, ToolCallID: "c1", Name: tool, Content: `{"ok":true}`},
			{Role: grounding.RoleAssistant, Content: "done"},
		},
	}
}

// RoundTrip returns a trajectory that exercises every stored field: hidden
// messages and entries (with and without At), a content-null tool-call
// message, a call whose arguments failed to decode (RawArguments), an error
// observation, HTML-ish text, tools with schemas, reward and meta.
//
// Its messages, by index (h = hidden):
//
//	0 system  1 user  2 assistant→c1  3 tool c1  4 assistant text→c2,c3
//	5 tool c2 (error)  6 h system hint  7 tool c3  8 assistant text  9 h user
func RoundTrip(id string) *grounding.Trajectory {
	reward, success, at := 1.0, true, 3
	return &grounding.Trajectory{
		ID:       id,
		ParentID: "task-7",
		Domain:   "airline",
		Source:   grounding.Source{Format: "tau-bench", File: "gpt-4o-airline.json", Index: 4, Line: 5},
		Request:  "Book the <cheapest> flight & keep my \"certificate\"",
		Tools: []grounding.Tool{
			{Name: "get_user_details", Description: "Get the details of a user.", Parameters: json.RawMessage(
				`{"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}`)},
			{Name: "book_reservation", Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}}}`)},
			{Name: "get_reservation_details"},
		},
		Reward:  &reward,
		Success: &success,
		Messages: []grounding.Message{
			{Role: grounding.RoleSystem, Content: "policy: be helpful"},
			{Role: grounding.RoleUser, Content: "Hi, my user id is mia_li_3668"},
			{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{
				{ID: "c1", Name: "get_user_details", Arguments: json.RawMessage(`{"user_id": "mia_li_3668"}`)},
			}},
			{Role: grounding.RoleTool, ToolCallID: "c1", Name: "get_user_details", Content: `{"name": "Mia Li", "payment": ["certificate_7504069"]}`},
			{Role: grounding.RoleAssistant, Content: "Let me book it.", ToolCalls: []grounding.ToolCall{
				{ID: "c2", Name: "book_reservation", RawArguments: `{"amount": 12,`},
				{ID: "c3", Name: "get_reservation_details", Arguments: json.RawMessage(`{"reservation_id":"ZFA04Y","nested":{"a":[1,2.5,null,true]}}`)},
			}},
			{Role: grounding.RoleTool, ToolCallID: "c2", Name: "book_reservation", Content: "Error: invalid arguments", Error: true},
			{Role: grounding.RoleSystem, Content: "teacher note: use certificate_7504069", Visibility: grounding.Hidden, HiddenKind: grounding.HiddenTeacherHint},
			{Role: grounding.RoleTool, ToolCallID: "c3", Name: "get_reservation_details", Content: ""},
			{Role: grounding.RoleAssistant, Content: "Your reservation <ZFA04Y> is booked & paid.", Visibility: grounding.Visible},
			{Role: grounding.RoleUser, Content: "###STOP###", Visibility: grounding.Hidden, HiddenKind: grounding.HiddenUserInstruction},
		},
		Hidden: []grounding.HiddenEntry{
			{Kind: grounding.HiddenUserInstruction, Content: json.RawMessage(`"You are mia_li_3668 <and> you want"`)},
			{Kind: grounding.HiddenReferenceActions, Content: json.RawMessage(`[{"name": "book_reservation", "arguments": {}}]`), At: &at},
			{Kind: grounding.HiddenDBState, Content: json.RawMessage(`{}`)},
		},
		Meta: json.RawMessage(`{"model": "gpt-4o", "trial": 0}`),
	}
}

// TauLike returns the i-th trajectory of a generated τ-bench-like pool:
// a long system policy, about twenty messages, tool calls with JSON
// arguments and observations (some errors), a hidden instruction and
// reference actions, and a 0/1 reward. It is deterministic.
func TauLike(prefix string, i int) *grounding.Trajectory {
	domains := []string{"airline", "retail"}
	tools := [][]string{
		{"get_user_details", "get_reservation_details", "search_direct_flight", "update_reservation_baggages", "book_reservation", "cancel_reservation"},
		{"find_user_id_by_email", "get_order_details", "get_product_details", "exchange_delivered_order_items", "return_delivered_order_items", "cancel_pending_order"},
	}
	d := i % 2
	reward := 0.0
	if i%3 != 0 {
		reward = 1
	}
	user := fmt.Sprintf("user_%d_%04d", i%97, i)
	t := &grounding.Trajectory{
		ID:       fmt.Sprintf("%s-%s-task%d-trial%d", prefix, domains[d], i/4, i%4),
		ParentID: fmt.Sprintf("%s-%s-task%d", prefix, domains[d], i/4),
		Domain:   domains[d],
		Source:   grounding.Source{Format: "tau-bench", File: prefix + ".json", Index: i},
		Reward:   &reward,
		Messages: []grounding.Message{
			{Role: grounding.RoleSystem, Content: strings.Repeat("# "+domains[d]+" agent policy\nYou must verify the user id before any write and get explicit confirmation. ", 16)},
			{Role: grounding.RoleUser, Content: "Hi! My user id is " + user + " and I need help with my booking."},
		},
		Hidden: []grounding.HiddenEntry{
			{Kind: grounding.HiddenUserInstruction, Content: json.RawMessage(fmt.Sprintf(`"You are %s. You want to change reservation R%05d."`, user, i))},
			{Kind: grounding.HiddenReferenceActions, Content: json.RawMessage(fmt.Sprintf(`[{"name":%q,"arguments":{"user_id":%q}}]`, tools[d][4], user))},
		},
		Meta: json.RawMessage(fmt.Sprintf(`{"model":"gpt-4o","trial":%d}`, i%4)),
	}
	for _, name := range tools[d] {
		t.Tools = append(t.Tools, grounding.Tool{Name: name, Description: "Tool " + name + " of the " + domains[d] + " domain.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"string"},"reservation_id":{"type":"string"}},"required":["user_id"]}`)})
	}
	rounds := 6 + i%3
	for k := range rounds {
		id := fmt.Sprintf("call_%d_%d", i, k)
		name := tools[d][k%len(tools[d])]
		t.Messages = append(t.Messages,
			grounding.Message{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{{
				ID: id, Name: name, Arguments: json.RawMessage(fmt.Sprintf(`{"user_id":%q,"reservation_id":"R%05d"}`, user, i+k)),
			}}})
		obs := grounding.Message{Role: grounding.RoleTool, ToolCallID: id, Name: name,
			Content: fmt.Sprintf(`{"reservation_id":"R%05d","user_id":%q,"origin":"SFO","destination":"JFK","flights":[{"flight_number":"HAT%03d","date":"2024-05-%02d","price":%d}],"payment_history":[{"payment_id":"credit_card_%d","amount":%d}]}`,
				i+k, user, k, 1+k, 100+k*37, i, 100+k*37)}
		if (i+k)%9 == 0 {
			obs.Content, obs.Error = "Error: reservation not found", true
		}
		t.Messages = append(t.Messages, obs)
		if k%3 == 2 {
			t.Messages = append(t.Messages,
				grounding.Message{Role: grounding.RoleAssistant, Content: fmt.Sprintf("I found reservation R%05d. Shall I proceed?", i+k)},
				grounding.Message{Role: grounding.RoleUser, Content: "Yes, please proceed."})
		}
	}
	if i%7 == 0 {
		t.Messages = append(t.Messages, grounding.Message{Role: grounding.RoleSystem, Content: "teacher hint: use the certificate",
			Visibility: grounding.Hidden, HiddenKind: grounding.HiddenTeacherHint})
	}
	t.Messages = append(t.Messages, grounding.Message{Role: grounding.RoleAssistant, Content: "Your request is complete. Anything else?"})
	return t
}
