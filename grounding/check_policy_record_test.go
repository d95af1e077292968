package grounding

import (
	"strings"
	"testing"
)

// TestPolicyRecordRef: a policy finding that reads a record (a write the
// record does not allow, a reply that misstates what it allows) points at
// that record: its message, its id and where the id is written there, so a
// page can highlight it. A policy statement reads no record and points at
// none; the evidence line stays as it was, and the JSON gains "record" only
// on the findings that have one.
func TestPolicyRecordRef(t *testing.T) {
	// A longer id that starts with it comes first: the span is the id's own.
	rec := `{"linked": ["NO6JO3X"], "reservation_id": "NO6JO3", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 152}], "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "credit_card_4421486", "amount": 152}], "created_at": "2024-05-01T05:17:41", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}`
	start := traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Please cancel reservation NO6JO3, my plans changed.").
		call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, rec)
	write := start.say("Cancel NO6JO3? Please confirm (yes/no).").user("Yes.").
		call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
	claim := traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Please cancel reservation NO6JO3, my plans changed.").
		call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, rec).
		say("As a silver member, you are eligible for a full refund. Shall I cancel NO6JO3?").build()
	for _, tt := range []struct {
		name      string
		tr        *Trajectory
		msg, call int
		arg       string
	}{
		{"a write the record does not allow", write, 6, 0, "policy"},
		{"a reply that misstates what the record allows", claim, 4, -1, "As a silver member, you are eligible for a full refund"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := decisionAt(t, Check(tt.tr, nil), tt.msg, tt.call)
			a, ok := argAt(d, tt.arg)
			if !ok || a.Where.Found != "policy" {
				t.Fatalf("no policy finding %q:\n%s", tt.arg, describeDecision(d))
			}
			r := a.Where.Record
			if r == nil {
				t.Fatalf("policy finding %s points at no record", a.Where)
			}
			at := strings.Index(rec, `"reservation_id": "`) + len(`"reservation_id": "`)
			if r.Message != 3 || r.ID != "NO6JO3" || r.Start != at || r.End != at+len("NO6JO3") {
				t.Errorf("record = %+v, want message 3, id NO6JO3 and the span of the id", *r)
			}
			if s := a.Where.String(); !strings.HasPrefix(s, "against the policy; ") || !strings.Contains(s, "the record of NO6JO3 (message 3)") {
				t.Errorf("evidence line = %q", s)
			}
			b, err := AppendEvidenceJSON(nil, []ArgEvidence{a})
			if err != nil {
				t.Fatal(err)
			}
			if want := `,"record":{"message":3,"id":"NO6JO3","start":`; !strings.Contains(string(b), want) {
				t.Errorf("evidence JSON %s lacks %s", b, want)
			}
		})
	}
	t.Run("a policy statement reads no record", func(t *testing.T) {
		tr := traj("airline").sys(airlinePolicy).user("My flight HAT039 is delayed. What is going on?").
			say("I recommend checking the airline's official website for the most up-to-date information on your flight.").build()
		d := decisionAt(t, Check(tr, nil), 2, -1)
		for _, a := range d.Args {
			if a.Where.Found != "policy" {
				continue
			}
			if a.Where.Record != nil {
				t.Errorf("statement %s points at record %+v", a.Path, *a.Where.Record)
			}
			if b, _ := AppendEvidenceJSON(nil, []ArgEvidence{a}); strings.Contains(string(b), `"record"`) {
				t.Errorf("evidence JSON of a statement has a record: %s", b)
			}
			return
		}
		t.Fatalf("no policy finding:\n%s", describeDecision(d))
	})
}
