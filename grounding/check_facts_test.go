package grounding

import "testing"

// TestCheckRecordFacts: a fact a reply states of the reservations it names
// must be theirs (airline task28-trial0: "I cannot cancel the reservations
// with IDs UDMOP1, XAZ3C0, and 4XGCCM due to the restrictions on basic
// economy flights and the lack of travel insurance", where 4XGCCM is a
// business reservation with insurance).
func TestCheckRecordFacts(t *testing.T) {
	pool := func(reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Cancel UDMOP1, XAZ3C0 and 4XGCCM.").
			call("get_reservation_details", `{"reservation_id":"UDMOP1"}`, airlineRes("UDMOP1", "basic_economy", "no", "2024-05-25", "HAT001", 120)).
			call("get_reservation_details", `{"reservation_id":"XAZ3C0"}`, airlineRes("XAZ3C0", "basic_economy", "no", "2024-05-26", "HAT002", 130)).
			call("get_reservation_details", `{"reservation_id":"4XGCCM"}`, airlineRes("4XGCCM", "business", "yes", "2024-05-03", "HAT003", 900)).
			say(reply).build()
	}
	const all = "I cannot cancel the reservations with IDs UDMOP1, XAZ3C0, and 4XGCCM due to the restrictions on basic economy flights and the lack of travel insurance"
	runCheckCases(t, []checkCase{
		{name: "a business reservation said to be basic economy", in: pool(all + "."),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction, arg: all,
			where: `states "basic economy" of 4XGCCM, but its record (message 7) gives cabin "business"`},
		{name: "the facts of the records named", in: pool("I cannot cancel UDMOP1 and XAZ3C0: they are basic economy, without travel insurance."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "an insured reservation said to have none", in: pool("Reservation 4XGCCM has no travel insurance."),
			msg: 8, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction, arg: "Reservation 4XGCCM has no travel insurance",
			where: `states "no travel insurance" of 4XGCCM, but its record (message 7) gives insurance "yes"`},
		{name: "a negated fact", in: pool("4XGCCM is not basic economy, so the restriction does not apply."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a change of cabin", in: pool("I can upgrade 4XGCCM from basic economy to economy."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "records named apart", in: pool("4XGCCM is business, UDMOP1 is basic economy."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}
