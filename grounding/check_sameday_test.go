package grounding

import (
	"slices"
	"testing"
)

// TestCheckSameDay: a reply that groups the user's reservations by day
// must group them as their records do. Leaving one of a day's
// reservations out goes to a human (the label sets split on such slips);
// denying any shared day while the records share one fails.
func TestCheckSameDay(t *testing.T) {
	rec := func(id, status string, dates ...string) string {
		s := `{"reservation_id": "` + id + `", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy", "flights": [`
		for i, d := range dates {
			if i > 0 {
				s += ", "
			}
			s += `{"flight_number": "HAT13` + string(rune('0'+i)) + `", "date": "` + d + `", "price": 152}`
		}
		s += `], "created_at": "2024-05-01T05:17:41", "insurance": "no"`
		if status != "" {
			s += `, "status": "` + status + `"`
		}
		return s + "}"
	}
	// Three reservations, all with a date on May 17; the third is a round
	// trip that comes back that day. NO6JO3 has May 22 to itself.
	three := func(text string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Did I book two trips on the same day? My reservations are SE9KEL, FDZ0T5, 5BGGWZ and NO6JO3.").
			call("get_reservation_details", `{"reservation_id":"SE9KEL"}`, rec("SE9KEL", "", "2024-05-17", "2024-05-29")).
			call("get_reservation_details", `{"reservation_id":"FDZ0T5"}`, rec("FDZ0T5", "", "2024-05-17")).
			call("get_reservation_details", `{"reservation_id":"5BGGWZ"}`, rec("5BGGWZ", "", "2024-05-10", "2024-05-17")).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, rec("NO6JO3", "", "2024-05-22")).
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "two of the three reservations on May 17 named", in: three("It appears that you have two flights on May 17, 2024, with reservation IDs SE9KEL and FDZ0T5."),
			msg: 10, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			arg: "It appears that you have two flights on May 17, 2024, with reservation IDs SE9KEL and FDZ0T5", status: StatusUnsupported,
			where: "names FDZ0T5, SE9KEL for 2024-05-17, but the record of 5BGGWZ (message 7) has a date on that day too"},
		{name: "all three named", in: three("You have flights on May 17 under SE9KEL, FDZ0T5 and 5BGGWZ."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the list after the colon", in: three("You have three reservations with flights on 2024-05-17:\n\n1. SE9KEL\n\n2. FDZ0T5\n\n3. 5BGGWZ"),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a day only one reservation has", in: three("NO6JO3 is your only reservation with a flight on May 22nd."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "no duplicates denied where the records share a day", in: three("I've checked your reservations, and there are no other duplicate bookings on the same day."),
			msg: 10, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg:   "I've checked your reservations, and there are no other duplicate bookings on the same day",
			where: "the records SE9KEL (message 3), FDZ0T5 (message 5) and 5BGGWZ (message 7) all have a date on 2024-05-17"},
		{name: "no other flight on a day nobody shares", in: three("There are no other flights on May 22 besides NO6JO3."),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "no duplicates once the extra bookings were cancelled", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Did I book SE9KEL and FDZ0T5 on the same day?").
			call("get_reservation_details", `{"reservation_id":"SE9KEL"}`, rec("SE9KEL", "", "2024-05-17")).
			call("get_reservation_details", `{"reservation_id":"FDZ0T5"}`, rec("FDZ0T5", "", "2024-05-17")).
			say("Both SE9KEL and FDZ0T5 have flights on May 17. Shall I cancel FDZ0T5?").user("Yes, cancel FDZ0T5.").
			call("cancel_reservation", `{"reservation_id":"FDZ0T5"}`, rec("FDZ0T5", "cancelled", "2024-05-17")).
			say("FDZ0T5 is cancelled; there are no other duplicate bookings on the same day.").build(),
			msg: 10, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}

func TestSentenceDays(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"two flights on may 17, 2024, and one on may 22nd", []string{"05-17", "05-22"}},
		{"flights on 2024-05-17 and 2024-05-17", []string{"05-17"}},
		{"you may want to check on sept 3", []string{"09-03"}},
		{"you may 2 times", []string{"05-02"}}, // a month and a number read as a day: the claim phrases gate it
		{"flight hat017 on may 123", nil},
		{"no dates at all", nil},
	} {
		if got := sentenceDays(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("sentenceDays(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
