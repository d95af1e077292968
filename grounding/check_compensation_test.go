package grounding

import (
	"strings"
	"testing"
)

// TestCheckCertificate covers the compensation rule of the airline
// profile: a certificate is 100 dollars per passenger for a cancelled
// flight or 50 for a delayed one once the reservation was changed or
// cancelled, to silver or gold members, insured or business reservations.
func TestCheckCertificate(t *testing.T) {
	// NO6JO3: one passenger, economy, insured. The user is a regular member.
	uninsured := strings.Replace(reservationNO6, `"insurance": "yes"`, `"insurance": "no"`, 1)
	twoHeads := strings.NewReplacer(`"NO6JO3"`, `"AIXC49"`, `"passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}]`,
		`"passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}, {"first_name": "Noah", "last_name": "Li", "dob": "1992-01-01"}]`).Replace(reservationNO6)
	certificate := func(res string, amount string, cancel bool) *Trajectory {
		b := traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. My flight in NO6JO3 was delayed and I want compensation for it.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, res)
		if cancel {
			b = b.say("I will cancel NO6JO3, refunded to the original payment. Shall I proceed?").user("Yes.").
				call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, strings.Replace(res, `"insurance"`, `"status": "cancelled", "insurance"`, 1))
		}
		return b.say("I can send you a $"+amount+" certificate for NO6JO3. Shall I proceed?").user("Yes.").
			call("send_certificate", `{"user_id":"mia_li_3668","amount":`+amount+`}`, "Certificate certificate_9999999 added to user mia_li_3668 with amount "+amount+".").build()
	}
	runCheckCases(t, []checkCase{
		{name: "cancelled flight: 100 per passenger, insured", in: certificate(reservationNO6, "100", false),
			msg: 8, call: 0, verdict: VerdictPass, absent: ReasonUnsupported, arg: "amount", status: StatusDerived,
			where: "100 × 1 passenger = 100; the policy's compensation for a cancelled flight: reservation_id NO6JO3 at message 5; insurance yes at message 5"},
		{name: "delayed flight, reservation neither changed nor cancelled", in: certificate(reservationNO6, "50", false),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", status: StatusUnsupported,
			where: "50 × 1 passenger = 50 is the policy's compensation for a delayed flight (reservation_id NO6JO3 at message 5), but it is given once the reservation_id was changed (update_reservation_flights or cancel_reservation), and no such call on NO6JO3 succeeded before it"},
		{name: "delayed flight, the amount is still the policy's arithmetic", in: certificate(reservationNO6, "50", false),
			msg: 8, call: 0, verdict: VerdictAmbiguous, arg: "amount", status: StatusDerived,
			where: "50 × 1 passenger = 50; the policy's compensation for a delayed flight: reservation_id NO6JO3 at message 5 (its conditions: see policy)"},
		{name: "delayed flight after the cancellation", in: certificate(reservationNO6, "50", true),
			msg: 12, call: 0, verdict: VerdictPass, absent: ReasonUnsupported, arg: "amount", status: StatusDerived,
			where: "the policy's compensation for a delayed flight: reservation_id NO6JO3 at message 9"},
		{name: "regular member, uninsured economy: not eligible", in: certificate(uninsured, "100", false),
			msg: 8, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "policy", status: StatusContradiction,
			where: "it needs membership silver or gold, or insurance yes, or cabin business, and the records show membership regular at message 3, insurance no at message 5, cabin economy at message 5"},
		{name: "an amount no case gives", in: certificate(reservationNO6, "75", false),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy",
			where: "75 is no compensation the policy gives (100 for a cancelled flight, 50 for a delayed flight, per passenger) for any reservation_id of mia_li_3668 seen: NO6JO3 1 passenger (message 5)"},
	})
	// With two insured reservations read, the one the conversation names
	// is the one compensated: 100 fits AIXC49 only as a delay (2 × 50),
	// and AIXC49 was not changed; it does not borrow NO6JO3's single
	// passenger when the reply named AIXC49.
	two := func(named string) *Trajectory {
		return traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. A flight of mine was cancelled and I want compensation.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			call("get_reservation_details", `{"reservation_id":"AIXC49"}`, twoHeads).
			say("I can send you a $100 certificate for "+named+". Shall I proceed?").user("Yes.").
			call("send_certificate", `{"user_id":"mia_li_3668","amount":100}`, "Certificate added.").build()
	}
	runCheckCases(t, []checkCase{
		{name: "the named reservation fits", in: two("NO6JO3"),
			msg: 10, call: 0, verdict: VerdictPass, arg: "amount", status: StatusDerived, where: "reservation_id NO6JO3 at message 5"},
		{name: "the named reservation does not fit", in: two("AIXC49"),
			msg: 10, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy",
			where: "50 × 2 passengers = 100 is the policy's compensation for a delayed flight (reservation_id AIXC49 at message 7)"},
	})
}

// TestCheckDelayCertificateOffer: a reply offering the delay certificate
// before the reservation was changed or cancelled states what the policy
// does not allow yet (a fail: every labelled one failed); once it was
// cancelled, or when the reply states the condition, it does not.
func TestCheckDelayCertificateOffer(t *testing.T) {
	offer := func(cancel bool, reply string) *Trajectory {
		b := traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. My flight in NO6JO3 was delayed and I want compensation.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6)
		if cancel {
			b = b.say("I will cancel NO6JO3, refunded to the original payment. Shall I proceed?").user("Yes.").
				call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, strings.Replace(reservationNO6, `"insurance"`, `"status": "cancelled", "insurance"`, 1))
		}
		return b.say(reply).build()
	}
	sent := offer(false, "")
	sent.Messages = sent.Messages[:len(sent.Messages)-1]
	sent.Messages = append(sent.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c9", Name: "send_certificate", Arguments: []byte(`{"user_id":"mia_li_3668","amount":50}`)}}},
		Message{Role: RoleTool, ToolCallID: "c9", Content: "Certificate certificate_9999999 added to user mia_li_3668 with amount 50."},
		Message{Role: RoleAssistant, Content: "The $50 certificate for the delayed flight has been issued to your account."})
	const plain = "Since you have travel insurance, I can offer you a $50 certificate for the delayed flight. Would you like me to proceed?"
	runCheckCases(t, []checkCase{
		{name: "offered before any change", in: offer(false, plain),
			msg: 6, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "Since you have travel insurance, I can offer you a $50 certificate for the delayed flight", where: "no change or cancellation was made"},
		{name: "offered after the cancellation", in: offer(true, plain),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "offered with its condition", in: offer(false, "If you change or cancel NO6JO3, I can offer you a $50 certificate for the delayed flight."),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the delay in one sentence, the offer in the next", in: offer(false, "I see the delayed flight on NO6JO3. Would you like me to proceed with issuing the certificate?"),
			msg: 6, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "Would you like me to proceed with issuing the certificate", where: "no change or cancellation was made"},
		{name: "the certificate offered earlier, described", in: offer(false, "I understand the $50 certificate offered for the delay is not enough for you."),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a certificate already sent", in: sent,
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestArrayLen counts a record's array items as written, and refuses text
// that is not an array of values instead of walking it forever (the fuzz
// test found a passengers list written with a key and no brace).
func TestArrayLen(t *testing.T) {
	for _, tt := range []struct {
		in string
		n  int
		ok bool
	}{
		{`[]`, 0, true},
		{`[ ]`, 0, true},
		{`[{"a": 1}, {"b": [2, 3]}]`, 2, true},
		{`["x", "y,z", 3]`, 3, true},
		{`["first_name": "Mia", "dob": "1990"}]`, 0, false},
		{`[1, 2`, 0, false},
		{`{"a": 1}`, 0, false},
	} {
		n, ok := arrayLen(tt.in)
		if n != tt.n || ok != tt.ok {
			t.Errorf("arrayLen(%s) = %d, %v; want %d, %v", tt.in, n, ok, tt.n, tt.ok)
		}
	}
}

// TestCheckPriceDifference: an amount a reply calls a difference must come
// out of arithmetic. One fare of a visible record stated as "the price
// difference" is the new price passed off as the difference (task20 of
// the real airline log, failed by the labels); a difference of visible
// fares, or a line that shows its arithmetic, is supported.
func TestCheckPriceDifference(t *testing.T) {
	const search = `[{"flight_number": "HAT266", "origin": "JFK", "destination": "ATL", "status": "available", "available_seats": {"economy": 16}, "prices": {"basic_economy": 89, "economy": 118, "business": 373}}]`
	reply := func(s string) *Trajectory {
		return traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. I want to change the JFK to ATL flight of NO6JO3 on 2024-05-20.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			call("search_direct_flight", `{"origin":"JFK","destination":"ATL","date":"2024-05-20"}`, search).
			user("I'll take HAT266.").
			say(s).build()
	}
	runCheckCases(t, []checkCase{
		{name: "the new fare stated as the difference", in: reply("Changing to HAT266 costs a price difference of $118. Shall I proceed?"),
			msg: 7, call: -1, verdict: VerdictFail, reason: ReasonUnsupported, arg: "$118", status: StatusUnsupported,
			where: "message 5 [0].prices.economy; stated as a difference, but it is one price of a visible record, not"},
		{name: "markup between the word and the amount", in: reply("- **Price Difference:** $118\n\nShall I proceed?"),
			msg: 7, call: -1, verdict: VerdictFail, reason: ReasonUnsupported, arg: "$118", status: StatusUnsupported},
		{name: "the word after the amount", in: reply("That is a $118 price difference. Shall I proceed?"),
			msg: 7, call: -1, verdict: VerdictFail, reason: ReasonUnsupported, arg: "$118", status: StatusUnsupported},
		{name: "the real difference is derived", in: reply("HAT266 is $118 against $152 paid: a price difference of $34 refunded to you."),
			msg: 7, call: -1, verdict: VerdictPass, absent: ReasonUnsupported, arg: "$34", status: StatusDerived},
		{name: "the arithmetic shown", in: reply("Price difference: $152 - $118 = $34, refunded to you."),
			msg: 7, call: -1, verdict: VerdictPass, absent: ReasonUnsupported, arg: "$118", status: StatusLiteral},
		{name: "a fare beside a difference stated after it", in: reply("HAT266 (economy, $118). Price difference: -$34 (refund)."),
			msg: 7, call: -1, verdict: VerdictPass, absent: ReasonUnsupported, arg: "$118", status: StatusLiteral},
		{name: "a fare, not called a difference", in: reply("HAT266 costs $118 in economy. Shall I proceed?"),
			msg: 7, call: -1, verdict: VerdictPass, absent: ReasonUnsupported, arg: "$118", status: StatusLiteral},
	})
}
