package grounding

import "testing"

// airlineRes is a get_reservation_details observation: one flight on date,
// paid amount, created long before the policy's current time.
func airlineRes(id, cabin, insurance, date, flight string, paid int) string {
	return `{"reservation_id": "` + id + `", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "` + cabin + `", ` +
		`"flights": [{"origin": "JFK", "destination": "SEA", "flight_number": "` + flight + `", "date": "` + date + `", "price": ` + itoa(paid) + `}], ` +
		`"passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "credit_card_4421486", "amount": ` + itoa(paid) + `}], ` +
		`"created_at": "2024-05-01T05:17:41", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "` + insurance + `"}`
}

func itoa(n int) string { return fmtNum(float64(n)) }

// TestCheckUpcomingTotal: a total given for the user's upcoming flights
// must not add in a reservation already flown (airline task 34 summed
// A90KR2, flown on 2024-05-14, into "the total cost of your upcoming
// flights"). The agent's calculator call shows what it added.
func TestCheckUpcomingTotal(t *testing.T) {
	pool := func(expr, result, reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668, with reservations 7WPL39, A90KR2 and 3EMQJ6. What do my upcoming flights cost in total?").
			call("get_reservation_details", `{"reservation_id":"7WPL39"}`, airlineRes("7WPL39", "economy", "no", "2024-05-28", "HAT246", 402)).
			call("get_reservation_details", `{"reservation_id":"A90KR2"}`, airlineRes("A90KR2", "economy", "no", "2024-05-14", "HAT170", 308)).
			call("get_reservation_details", `{"reservation_id":"3EMQJ6"}`, airlineRes("3EMQJ6", "basic_economy", "no", "2024-05-25", "HAT223", 306)).
			call("calculate", `{"expression":"`+expr+`"}`, result).
			say(reply).build()
	}
	runCheckCases(t, []checkCase{
		{name: "a flown reservation counted as upcoming", in: pool("402 + 306 + 308", "1016.0", "You have three upcoming reservations with a total cost of $1,016."),
			msg: 10, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg:   "You have three upcoming reservations with a total cost of $1,016",
			where: "counts 308 (the calculation at message 8), the payment of A90KR2 (message 5), as upcoming, but its last date 2024-05-14 is before the current time 2024-05-15"},
		{name: "only the reservations still to come", in: pool("402 + 306", "708.0", "The total cost of your upcoming flights is $708."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a total of all reservations, not said to be upcoming", in: pool("402 + 306 + 308", "1016.0", "The total cost of your reservations is $1,016."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "an amount the calculator did not give", in: pool("402 + 306 + 308", "1016.0", "Your upcoming flight 7WPL39 costs $402."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "an operand that also pays a reservation still to come", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Total of my upcoming flights?").
			call("get_reservation_details", `{"reservation_id":"7WPL39"}`, airlineRes("7WPL39", "economy", "no", "2024-05-28", "HAT246", 308)).
			call("get_reservation_details", `{"reservation_id":"A90KR2"}`, airlineRes("A90KR2", "economy", "no", "2024-05-14", "HAT170", 308)).
			call("calculate", `{"expression":"308 + 0"}`, "308.0").
			say("The total cost of your upcoming flights is $308.").build(),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}

// TestConditionClaimDescribedRecord: a reply that names no reservation but
// lists one's flights is about that reservation (task 31: "Since you have
// travel insurance, you are eligible for a full refund" of the trip it
// described by its flights, for a change of plan; the last id the agent
// had named was another, a business reservation).
func TestConditionClaimDescribedRecord(t *testing.T) {
	b := func(reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Cancel my flight on May 17 from DEN, my plans changed.").
			call("get_reservation_details", `{"reservation_id":"9HBUV8"}`, airlineRes("9HBUV8", "basic_economy", "yes", "2024-05-17", "HAT130", 159)).
			call("get_reservation_details", `{"reservation_id":"DGZSYX"}`, airlineRes("DGZSYX", "business", "no", "2024-05-26", "HAT014", 3368)).
			say(reply).build()
	}
	runCheckCases(t, []checkCase{
		{name: "the reservation described by its flight", in: b("The reservation with flight HAT130 is basic economy with insurance. Since you have travel insurance, you are eligible for a full refund."),
			msg: 6, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "the record of 9HBUV8 (message 3)"},
		{name: "the business reservation described by its flight", in: b("The reservation with flight HAT014 is in business. You are eligible for a full refund."),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "both described: the last named before decides", in: b("Flights HAT130 and HAT014 are yours. You are eligible for a full refund."),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestConditionSameDayFlight: a reservation with a flight on the policy's
// current day may already have flown, and nothing visible says whether it
// has: cancelling it is for a human, even in business (task 47).
func TestConditionSameDayFlight(t *testing.T) {
	b := func(date string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Cancel S5IK51, my plans changed.").
			call("get_reservation_details", `{"reservation_id":"S5IK51"}`, airlineRes("S5IK51", "business", "yes", date, "HAT208", 2000)).
			say("Since S5IK51 is a business class reservation, it can be cancelled at any time. Shall I cancel it?").build()
	}
	runCheckCases(t, []checkCase{
		{name: "a flight today", in: b("2024-05-15"), msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			where: "2024-05-15 is the current day, and nothing visible says whether it has flown"},
		{name: "a flight tomorrow", in: b("2024-05-16"), msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a flight yesterday", in: b("2024-05-14"), msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			where: "2024-05-14 is already past"},
	})
}

// TestTransferOnlyAfterDenial: a plain offer to transfer after a denial
// passes, and the transfer that carries it out goes to a human (task 48:
// a basic economy date change, then a transfer the user accepted); a
// transfer for a record the user disputes does not.
func TestTransferOnlyAfterDenial(t *testing.T) {
	b := func(reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Change the date of EUJUY6.").
			call("get_reservation_details", `{"reservation_id":"EUJUY6"}`, airlineRes("EUJUY6", "basic_economy", "no", "2024-05-20", "HAT238", 160)).
			say(reply).user("Yes, please.").
			call("transfer_to_human_agents", `{"summary":"The user wants to change the date of EUJUY6."}`, "Transfer successful").build()
	}
	denial := "Your reservation is in basic economy class, which cannot be modified. If you need further assistance, I can transfer you to a human agent."
	disputed := "The record shows basic economy, which cannot be modified. If you believe there is an error, I can transfer you to a human agent."
	runCheckCases(t, []checkCase{
		{name: "the offer itself", in: b(denial), msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the transfer that carries it out", in: b(denial), msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			where: "carries out the transfer the reply at message 4 offered"},
		{name: "a transfer for a disputed record", in: b(disputed), msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a transfer after no denial", in: b("I can transfer you to a human agent."), msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}
