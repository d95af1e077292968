package grounding

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// tb builds small trajectories for table tests: each method appends one
// message and returns the builder.
type tb struct {
	t     Trajectory
	calls int
}

func traj(domain string) *tb {
	one := 1.0
	return &tb{t: Trajectory{ID: "t-" + domain, Domain: domain, Reward: &one}}
}

func (b *tb) reward(r float64) *tb { b.t.Reward = &r; return b }

func (b *tb) tools(names ...string) *tb {
	for _, n := range names {
		b.t.Tools = append(b.t.Tools, Tool{Name: n, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	return b
}

func (b *tb) tool(name, params string) *tb {
	b.t.Tools = append(b.t.Tools, Tool{Name: name, Parameters: json.RawMessage(params)})
	return b
}

func (b *tb) msg(role, content string) *tb {
	b.t.Messages = append(b.t.Messages, Message{Role: role, Content: content})
	return b
}

func (b *tb) sys(s string) *tb  { return b.msg(RoleSystem, s) }
func (b *tb) user(s string) *tb { return b.msg(RoleUser, s) }
func (b *tb) say(s string) *tb  { return b.msg(RoleAssistant, s) }

// call appends an assistant call and, unless obs is "-", its observation.
func (b *tb) call(name, args, obs string) *tb {
	b.calls++
	id := fmt.Sprintf("c%d", b.calls)
	tc := ToolCall{ID: id, Name: name}
	if json.Valid([]byte(args)) {
		tc.Arguments = json.RawMessage(args)
	} else {
		tc.RawArguments = args
	}
	b.t.Messages = append(b.t.Messages, Message{Role: RoleAssistant, ContentNull: true, ToolCalls: []ToolCall{tc}})
	if obs != "-" {
		b.t.Messages = append(b.t.Messages, Message{Role: RoleTool, ToolCallID: id, Name: name, Content: obs, Error: strings.HasPrefix(obs, "Error:")})
	}
	return b
}

func (b *tb) hiddenMsg(kind, content string) *tb {
	b.t.Messages = append(b.t.Messages, Message{Role: RoleSystem, Content: content, Visibility: Hidden, HiddenKind: kind})
	return b
}

func (b *tb) hidden(kind, content string) *tb {
	raw, _ := json.Marshal(content)
	b.t.Hidden = append(b.t.Hidden, HiddenEntry{Kind: kind, Content: raw})
	return b
}

func (b *tb) build() *Trajectory { t := b.t; return &t }

// decisionAt returns the decision of message msg (call -1: the text reply).
func decisionAt(t *testing.T, r Result, msg, call int) DecisionResult {
	t.Helper()
	for _, d := range r.Decisions {
		if d.Message == msg && d.Call == call {
			return d
		}
	}
	t.Fatalf("no decision at message %d call %d in %d decisions", msg, call, len(r.Decisions))
	return DecisionResult{}
}

// argAt returns the evidence of the argument at path (for text: the value).
func argAt(d DecisionResult, path string) (ArgEvidence, bool) {
	for _, a := range d.Args {
		if a.Path == path {
			return a, true
		}
		var s string
		if json.Unmarshal(a.Value, &s) == nil && s == path && strings.Contains(a.Path, "[") {
			return a, true
		}
	}
	return ArgEvidence{}, false
}

func describeDecision(d DecisionResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v", d.Verdict, d.Reasons)
	for _, a := range d.Args {
		fmt.Fprintf(&b, "\n    %s=%s %s (%s)", a.Path, a.Value, a.Status, a.Where)
	}
	return b.String()
}

// airlinePolicy is the opening of the τ-bench airline policy: the current
// time resolves dates written without a year.
const airlinePolicy = "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\nBefore taking any actions that update the booking database, you must list the action details and obtain explicit user confirmation (yes) to proceed. Each extra baggage is 50 dollars."

// userDetails is a get_user_details observation with three cards, a gift
// card and two reservations.
const userDetails = `{"name": {"first_name": "Mia", "last_name": "Li"}, "dob": "1990-04-05", "payment_methods": {"credit_card_4421486": {"source": "credit_card", "brand": "visa", "last_four": "7447", "id": "credit_card_4421486"}, "credit_card_1955700": {"source": "credit_card", "brand": "visa", "last_four": "1907", "id": "credit_card_1955700"}, "credit_card_3331112": {"source": "credit_card", "brand": "mastercard", "last_four": "1111", "id": "credit_card_3331112"}, "gift_card_7359776": {"source": "gift_card", "amount": 39, "id": "gift_card_7359776"}}, "membership": "regular", "reservations": ["NO6JO3", "AIXC49"]}`

// reservationNO6 is a get_reservation_details observation for NO6JO3.
const reservationNO6 = `{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 152, "origin": "JFK", "destination": "ATL"}, {"flight_number": "HAT039", "date": "2024-05-20", "price": 103, "origin": "ATL", "destination": "SEA"}], "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "credit_card_4421486", "amount": 305}], "created_at": "2024-05-14T09:00:00", "total_baggages": 1, "nonfree_baggages": 0, "insurance": "yes"}`
