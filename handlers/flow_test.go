package handlers

import (
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"groundwork/grounding"
)

// TestTrajectoryCardSaysWhichRuleBroke: a write whose values are all found
// but that nobody confirmed fails on the workflow; its card says so in the
// engine's words, not only with the reason code, and the other cards do
// not repeat it.
func TestTrajectoryCardSaysWhichRuleBroke(t *testing.T) {
	msgs := []grounding.Message{
		{Role: "system", Content: "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST."},
		{Role: "user", Content: "I am mia_li_3668, cancel reservation NO6JO3. I'm sick."},
		{Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c1", Name: "get_reservation_details", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "get_reservation_details", Content: policyRecord},
		{Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c2", Name: "cancel_reservation", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
		{Role: "tool", ToolCallID: "c2", Name: "cancel_reservation", Content: `{"reservation_id": "NO6JO3", "status": "cancelled"}`},
	}
	for i := range msgs {
		msgs[i].Index = i
	}
	one := 1.0
	tr := &grounding.Trajectory{ID: "t-flow", Domain: "airline", Reward: &one, Messages: msgs}
	res := grounding.CheckDefault(tr)
	st := checkedStore(t, tr)
	header := st.TrajectoryFn
	st.TrajectoryFn = func(id int64) (grounding.TrajectoryHeader, error) {
		hd, err := header(id)
		hd.Violations = res.Violations
		return hd, err
	}
	cancel := -1
	for _, d := range res.Decisions {
		if d.Tool == "cancel_reservation" {
			cancel = d.Ordinal
		}
	}
	h := testRouter(st, &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	got := strings.TrimSpace(doc.Find(`#d` + strconv.Itoa(cancel) + ` [data-testid=check-flow]`).Text())
	if !strings.HasPrefix(got, "flow.unconfirmed: no agent message listing this action was followed by the user's yes") {
		t.Errorf("the cancellation's card says %q, want the unconfirmed write in words", got)
	}
	if n := doc.Find(`[data-testid=check-flow]`).Length(); n != 1 {
		t.Errorf("%d cards name a broken rule, want only the cancellation's", n)
	}
}
