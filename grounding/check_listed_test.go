package grounding

import "testing"

// TestCheckListedPrice: the amount a listing tells the user a change will
// cost must be what the change then charges (task27-trial3: "Additional
// Amount Due: $64" for two passengers, and the update charged 162). The
// listing fails; the write, made on consent to another price, goes to a
// human.
func TestCheckListedPrice(t *testing.T) {
	const res = `{"reservation_id": "M20IZO", "user_id": "mia_li_3668", "origin": "JFK", "destination": "MCO", "flight_type": "one_way", "cabin": "economy", ` +
		`"flights": [{"flight_number": "HAT268", "date": "2024-05-22", "price": 245}], "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}, {"first_name": "Daiki", "last_name": "Li", "dob": "1980-12-24"}], ` +
		`"payment_history": [{"payment_id": "credit_card_4421486", "amount": 490}], "created_at": "2024-05-12T09:36:29", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}`
	updated := func(charged string) string {
		return `{"reservation_id": "M20IZO", "user_id": "mia_li_3668", "cabin": "economy", "flights": [{"flight_number": "HAT146", "date": "2024-05-22", "price": 309}], ` +
			`"payment_history": [{"payment_id": "credit_card_4421486", "amount": 490}, {"payment_id": "credit_card_4421486", "amount": ` + charged + `}]}`
	}
	change := func(listing, charged string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Move reservation M20IZO to flight HAT146 on May 22, paid with my card ending 7447.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"M20IZO"}`, res).
			call("search_direct_flight", `{"origin":"JFK","destination":"MCO","date":"2024-05-22"}`, `[{"flight_number": "HAT146", "origin": "JFK", "destination": "MCO", "prices": {"economy": 309}}]`).
			say(listing+" Shall I proceed with the change of M20IZO to HAT146?").user("Yes, please proceed.").
			call("update_reservation_flights", `{"reservation_id":"M20IZO","cabin":"economy","flights":[{"flight_number":"HAT146","date":"2024-05-22"}],"payment_id":"credit_card_4421486"}`, updated(charged)).build()
	}
	runCheckCases(t, []checkCase{
		{name: "the listing states another amount due", in: change("The new flight costs $309. Additional Amount Due: $64.", "128"),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction, arg: "$64",
			where: "states $64 as what the update_reservation_flights the user then accepted would cost, but it charged 128 (message 11)"},
		{name: "the write made on that consent", in: change("The new flight costs $309. Additional Amount Due: $64.", "128"),
			msg: 10, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			where: "states $64; the update_reservation_flights it confirmed charged 128 (message 11)"},
		{name: "the charge the listing states", in: change("The new flight costs $309. Additional Amount Due: $64.", "64"),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the fare of the new flights is no charge", in: change("The total cost for the new flight will be $309. Any price difference goes to your card ending 7447.", "128"),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}
