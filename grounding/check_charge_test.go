package grounding

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckCharges covers the airline profile's charges rule: the reply
// right after a write that reports what it charged or refunded must state
// a payment the write's result records (task17-trial2 of the real log said
// "$495 has been charged" where the result records 1302; task22-trial0
// reported a refund of 114 as a charge).
func TestCheckCharges(t *testing.T) {
	updated := func(payment string) string {
		return strings.Replace(reservationNO6, `"amount": 305}]`, `"amount": 305}, `+payment+`]`, 1)
	}
	report := func(result, reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. Please move NO6JO3 to business; I expect about $495, $1302 at most, or a refund of $114, $38 per passenger.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I will upgrade NO6JO3 to business, paid with credit_card_4421486. Shall I proceed?").user("Yes.").
			call("update_reservation_flights", `{"reservation_id":"NO6JO3","cabin":"business","flights":[{"flight_number":"HAT136","date":"2024-05-20"},{"flight_number":"HAT039","date":"2024-05-20"}],"payment_id":"credit_card_4421486"}`, result).
			say(reply).build()
	}
	charged := updated(`{"payment_id": "credit_card_4421486", "amount": 1302}`)
	refunded := updated(`{"payment_id": "credit_card_4421486", "amount": -114}`)
	runCheckCases(t, []checkCase{
		{name: "another amount reported as charged", in: report(charged, "Done. The additional cost of $495 has been charged to your credit card."),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, arg: "$495", status: StatusContradiction,
			where: "reported as charged, but the result of the update_reservation_flights (message 7) records a payment of 305 and a payment of 1302"},
		{name: "the recorded payment reported", in: report(charged, "Done. The additional cost of $1302 has been charged to your credit card."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a refund reported as a charge", in: report(refunded, "Done. The additional cost of $114 has been charged to your credit card."),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, arg: "$114", where: "records it as money going back"},
		{name: "a refund reported as a payment, no amount", in: report(refunded, "Done. The payment for the price difference has been processed using your credit card."),
			msg: 8, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "reported as a payment, but the result of the update_reservation_flights (message 7) records a refund of 114"},
		{name: "the refund reported", in: report(refunded, "Done. A refund of $114 will be credited back to your credit card."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a refund reported per passenger", in: report(strings.Replace(refunded, `"amount": -114`, `"amount": -38`, 1), "Done. The refund of $38 per passenger has been credited back to your card."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the payment said to use a method the result records no payment by", in: traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. Please add a bag to NO6JO3 and pay with gift_card_7219486.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I will set NO6JO3 to 1 checked bag, none paid, using gift_card_7219486. Shall I proceed?").user("Yes.").
			call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":1,"nonfree_baggages":0,"payment_id":"gift_card_7219486"}`, reservationNO6).
			say("The payment method for your reservation has been successfully updated to use your gift card.").build(),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg:   "The payment method for your reservation has been successfully updated to use your gift card",
			where: "says the payment was made with gift_card_7219486, but the result of the update_reservation_baggages (message 7) records no payment by it"},
		{name: "a payment method's balance beside the charge word", in: report(charged, "Done. The payment of $1302 was processed; your $495 gift card was not used."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
	// Only the report right after the write: a later reply answers other
	// questions.
	later := report(charged, "Done: NO6JO3 is now in business.")
	later.Messages = append(later.Messages, Message{Role: RoleUser, Content: "What did it cost?"},
		Message{Role: RoleAssistant, Content: "About $495 has been charged, I believe."})
	runCheckCases(t, []checkCase{
		{name: "a later reply", in: later, msg: 10, call: -1, absent: ReasonContradiction, verdict: VerdictPass},
	})
}

// TestCheckPricedConfirmation: a write that charges or refunds (the
// airline profile's confirm.priced) needs a listing that told the user an
// amount, or that nothing is charged; a yes to an unpriced listing sends
// the write to a human (the reviewers of task2-trial1 and task26-trial0
// failed such downgrades and upgrades).
func TestCheckPricedConfirmation(t *testing.T) {
	upgrade := func(listing string) *Trajectory {
		return traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. Please move NO6JO3 to business.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say(listing).user("Yes.").
			call("update_reservation_flights", `{"reservation_id":"NO6JO3","cabin":"business","flights":[{"flight_number":"HAT136","date":"2024-05-20"},{"flight_number":"HAT039","date":"2024-05-20"}],"payment_id":"credit_card_4421486"}`,
				strings.Replace(reservationNO6, `"cabin": "economy"`, `"cabin": "business"`, 1)).build()
	}
	runCheckCases(t, []checkCase{
		{name: "no price listed", in: upgrade("I will upgrade NO6JO3 to business, paid with credit_card_4421486. Shall I proceed?"),
			msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", where: "states no price"},
		{name: "the price listed", in: upgrade("I will upgrade NO6JO3 to business for $305, paid with credit_card_4421486. Shall I proceed?"),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a price nothing supports, accepted", in: upgrade("I will upgrade NO6JO3 to business; the price difference is $1,118. Shall I proceed?"),
			msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", where: "states $1,118, which nothing visible supports as this write's price"},
		{name: "nothing to pay, said", in: upgrade("I will upgrade NO6JO3 to business at no additional cost, paid with credit_card_4421486. Shall I proceed?"),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestRecordedPayments reads payment amounts as written, refunds negative,
// and nothing from text that is not the record's array.
func TestRecordedPayments(t *testing.T) {
	for _, tt := range []struct {
		obs  string
		want []float64
	}{
		{`{"payment_history": [{"payment_id": "a", "amount": 305}, {"payment_id": "a", "amount": -114.5}]}`, []float64{305, -114.5}},
		{`{"payment_history": []}`, nil},
		{`{"payment_history": "none", "amount": 5}`, nil},
		{`{"flights": [{"amount": 9}]}`, nil},
		{`Error: reservation not found`, nil},
		{`{"payment_history": [{"amount" : 1e2}, {"amount": "x"}]}`, []float64{100}},
	} {
		got := recordedPayments(tt.obs, "payment_history", "amount")
		if !slices.Equal(got, tt.want) {
			t.Errorf("recordedPayments(%s) = %v, want %v", tt.obs, got, tt.want)
		}
	}
}
