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

// Ambiguous returns the i-th trajectory of a small airline pool whose checks
// leave two decisions to a human (one when i%3 == 2), queued (the trajectory
// succeeded and its workflow holds):
//
//   - search_direct_flight with airport codes the user only named as cities
//     (vis.knowledge: New York → JFK needs outside knowledge), except when
//     i%3 == 2, where the user names the codes;
//   - update_reservation_flights paying with one of three visible cards
//     that nothing visible singled out (vis.choice).
//
// Everything else passes. It is deterministic.
func Ambiguous(prefix string, i int) *grounding.Trajectory {
	success, reward := true, 1.0
	user := fmt.Sprintf("mia_li_%04d", 3668+i)
	res := fmt.Sprintf("XE%04d", 1000+i)
	cards := []string{fmt.Sprintf("credit_card_%07d", 4421486+i), fmt.Sprintf("credit_card_%07d", 4959530+i), fmt.Sprintf("credit_card_%07d", 1955700+i)}
	cities := [][2]string{{"New York", "JFK"}, {"Seattle", "SEA"}, {"Los Angeles", "LAX"}, {"Chicago", "ORD"}}
	from, to := cities[i%len(cities)], cities[(i+1)%len(cities)]
	date := fmt.Sprintf("2024-05-%02d", 20+i%8)
	// Every third user names the airports themselves: only the card is
	// then left to a human, and the trajectory's items rank lower.
	place := func(c [2]string) string {
		if i%3 == 2 {
			return c[0] + " (" + c[1] + ")"
		}
		return c[0]
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	call := func(id, name, args string) grounding.Message {
		return grounding.Message{Role: grounding.RoleAssistant, ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: id, Name: name, Arguments: json.RawMessage(args)}}}
	}
	obs := func(id, name, content string) grounding.Message {
		return grounding.Message{Role: grounding.RoleTool, ToolCallID: id, Name: name, Content: content}
	}
	return &grounding.Trajectory{
		ID:       fmt.Sprintf("%s-%02d", prefix, i),
		ParentID: fmt.Sprintf("%s-task-%02d", prefix, i/2),
		Domain:   "airline",
		Source:   grounding.Source{Format: "canonical", File: prefix + ".jsonl", Index: i},
		Reward:   &reward,
		Success:  &success,
		Tools: []grounding.Tool{
			{Name: "get_user_details", Description: "Get the details of a user.", Parameters: json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"string"}},"required":["user_id"]}`)},
			{Name: "get_reservation_details", Description: "Get the details of a reservation.", Parameters: json.RawMessage(`{"type":"object","properties":{"reservation_id":{"type":"string"}},"required":["reservation_id"]}`)},
			{Name: "search_direct_flight", Description: "Search direct flights between two airports on a date.", Parameters: json.RawMessage(`{"type":"object","properties":{"origin":{"type":"string"},"destination":{"type":"string"},"date":{"type":"string"}},"required":["origin","destination","date"]}`)},
			{Name: "update_reservation_flights", Description: "Update the flights of a reservation.", Parameters: json.RawMessage(`{"type":"object","properties":{"reservation_id":{"type":"string"},"cabin":{"type":"string","enum":["basic_economy","economy","business"]},"flights":{"type":"array","items":{"type":"object","properties":{"flight_number":{"type":"string"},"date":{"type":"string"}}}},"payment_id":{"type":"string"}},"required":["reservation_id","cabin","flights","payment_id"]}`)},
		},
		Messages: []grounding.Message{
			{Role: grounding.RoleSystem, Content: "# Airline Agent Policy\n\nBefore taking any action that updates the booking database, list the action details and obtain explicit user confirmation (yes)."},
			{Role: grounding.RoleUser, Content: fmt.Sprintf("Hi, my user id is %s. Please move reservation %s to a flight from %s to %s on %s.", user, res, place(from), place(to), date)},
			call("c1", "get_user_details", fmt.Sprintf(`{"user_id":%q}`, user)),
			obs("c1", "get_user_details", fmt.Sprintf(`{"user_id":%q,"payment_methods":{%q:{"source":"credit_card","last_four":"7447"},%q:{"source":"credit_card","last_four":"2140"},%q:{"source":"credit_card","last_four":"9911"}},"reservations":[%q]}`,
				user, cards[0], cards[1], cards[2], res)),
			call("c0", "get_reservation_details", fmt.Sprintf(`{"reservation_id":%q}`, res)),
			obs("c0", "get_reservation_details", fmt.Sprintf(`{"reservation_id":%q,"user_id":%q,"cabin":"economy","flights":[{"flight_number":"HAT136","date":%q}]}`, res, user, date)),
			call("c2", "search_direct_flight", fmt.Sprintf(`{"origin":%q,"destination":%q,"date":%q}`, from[1], to[1], date)),
			obs("c2", "search_direct_flight", fmt.Sprintf(`[{"flight_number":"HAT%03d","scheduled_departure_time_est":"17:00:00","prices":{"economy":172}}]`, 40+i)),
			{Role: grounding.RoleAssistant, Content: fmt.Sprintf("HAT%03d leaves at 17:00 for $172 in economy. I will move %s to HAT%03d on %s. Shall I proceed (yes/no)?", 40+i, res, 40+i, date)},
			{Role: grounding.RoleUser, Content: "yes"},
			call("c3", "update_reservation_flights", fmt.Sprintf(`{"reservation_id":%q,"cabin":"economy","flights":[{"flight_number":"HAT%03d","date":%q}],"payment_id":%q}`, res, 40+i, date, cards[1+i%2])),
			obs("c3", "update_reservation_flights", fmt.Sprintf(`{"reservation_id":%q,"status":"updated"}`, res)),
			{Role: grounding.RoleAssistant, Content: fmt.Sprintf("Done: %s is now on HAT%03d.", res, 40+i)},
		},
		Hidden: []grounding.HiddenEntry{
			{Kind: grounding.HiddenUserInstruction, Content: str(fmt.Sprintf("You are %s. Move %s; pay with the card ending %s.", user, res, []string{"2140", "9911"}[i%2]))},
		},
	}
}
