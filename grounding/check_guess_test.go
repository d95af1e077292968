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
		// A later call resting on the echo rests on the guess too (task10:
		// the return leg searched from the guessed LAX), until the user
		// has answered.
		{name: "a call resting on the echoed guess", in: search().
			call("search_direct_flight", `{"origin":"SEA","destination":"JFK","date":"2024-05-25"}`, `[]`).build(),
			msg: 4, call: 0, verdict: VerdictAmbiguous, reason: ReasonKnowledge, status: StatusKnowledge, arg: "destination",
			where: "outside knowledge; the user has not answered since"},
		{name: "a call after the user answered", in: search().say("Flight HAT069 leaves at 06:00 for $121.").user("Fine. And back on May 25?").
			call("search_direct_flight", `{"origin":"SEA","destination":"JFK","date":"2024-05-25"}`, `[]`).build(),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonKnowledge},
		// The guess may first be made in a reply (task10-trial3: "major West
		// Coast destinations like Los Angeles (LAX), San Francisco (SFO)").
		{name: "a call resting on a guess the reply made", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. I want the cheapest flight from EWR to the West Coast on May 20, back May 25.").
			say("I will search West Coast airports such as San Francisco (SFO).").
			call("search_direct_flight", `{"origin":"EWR","destination":"SFO","date":"2024-05-20"}`, `[{"flight_number": "HAT100", "origin": "EWR", "destination": "SFO"}]`).
			call("search_direct_flight", `{"origin":"SFO","destination":"EWR","date":"2024-05-25"}`, `[]`).build(),
			msg: 5, call: 0, verdict: VerdictAmbiguous, reason: ReasonKnowledge, status: StatusKnowledge, arg: "origin",
			where: "outside knowledge; the user has not answered since"},
	})
}
