package grounding

import "testing"

// TestCheckEchoedGuess: a reply that first shows the user an airport the
// agent's search took from a city name rests on that outside knowledge
// (task0: "flights from New York (JFK) to Seattle (SEA)"); once the user
// has answered the listing, later replies may use it.
func TestCheckEchoedGuess(t *testing.T) {
	const found = `[{"flight_number": "HAT069", "origin": "JFK", "destination": "SEA", "scheduled_departure_time_est": "06:00:00", "prices": {"economy": 121}}]`
	search := func() *tb {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. I want to fly from New York to Seattle on May 20.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, found)
	}
	runCheckCases(t, []checkCase{
		{name: "the first reply showing the guessed airport", in: search().say("Flight HAT069 from New York (JFK) leaves at 06:00 for $121.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonKnowledge, status: StatusKnowledge, arg: "JFK",
			where: "outside knowledge; the user has not answered since"},
		{name: "after the user answered the listing", in: search().say("Flight HAT069 leaves at 06:00 for $121.").user("Great, does it leave from JFK?").
			say("Yes, HAT069 leaves from JFK.").build(),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonKnowledge},
		{name: "an airport the user named", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. I want to fly from JFK to Seattle on May 20.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, found).
			say("Flight HAT069 from New York (JFK) leaves at 06:00 for $121.").build(),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonKnowledge},
	})
}
