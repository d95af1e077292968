package grounding

import (
	"strconv"
	"strings"
	"testing"
)

// checkCase is one table test: a trajectory, the decision to look at, and
// what the engine must say about it.
type checkCase struct {
	name    string
	in      *Trajectory
	profile string // "" = ProfileFor(domain)
	msg     int
	call    int // -1 for the text reply
	verdict Verdict
	reason  string // a reason code the decision must carry ("" = none required)
	absent  string // a reason code it must not carry
	arg     string // an argument path (or a value stated in text)
	status  string // that argument's status
	where   string // a substring of the rendered evidence
}

func runCheckCases(t *testing.T, cases []checkCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var p *Profile
			if tt.profile != "" {
				var err error
				if p, err = LoadProfile(tt.profile); err != nil {
					t.Fatal(err)
				}
			}
			r := Check(tt.in, p)
			d := decisionAt(t, r, tt.msg, tt.call)
			if d.Verdict != tt.verdict {
				t.Errorf("Check(%s) decision %d/%d = %s, want %s", tt.name, tt.msg, tt.call, describeDecision(d), tt.verdict)
			}
			if tt.reason != "" && !hasString(d.Reasons, tt.reason) {
				t.Errorf("Check(%s) reasons = %v, want %s in them\n%s", tt.name, d.Reasons, tt.reason, describeDecision(d))
			}
			if tt.absent != "" && hasString(d.Reasons, tt.absent) {
				t.Errorf("Check(%s) reasons = %v, want no %s", tt.name, d.Reasons, tt.absent)
			}
			if tt.arg != "" {
				a, ok := argAt(d, tt.arg)
				if !ok {
					t.Fatalf("Check(%s) has no argument %q:\n%s", tt.name, tt.arg, describeDecision(d))
				}
				if tt.status != "" && a.Status != tt.status {
					t.Errorf("Check(%s) %s status = %s (%s), want %s", tt.name, tt.arg, a.Status, a.Where, tt.status)
				}
				if tt.where != "" && !strings.Contains(a.Where.String(), tt.where) {
					t.Errorf("Check(%s) %s evidence = %q, want it to mention %q", tt.name, tt.arg, a.Where.String(), tt.where)
				}
			}
		})
	}
}

// TestCheckExecution covers e_t: errors, missing observations, schema
// violations and undecodable arguments.
func TestCheckExecution(t *testing.T) {
	lookup := `{"type":"object","properties":{"user_id":{"type":"string"}},"required":["user_id"]}`
	runCheckCases(t, []checkCase{
		{
			name: "error observation",
			in: traj("generic").tool("get_user", lookup).user("I am mia_li_3668").
				call("get_user", `{"user_id":"mia_li_3668"}`, "Error: user not found").build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonExecError,
		},
		{
			name: "error by profile pattern",
			in: traj("swe").sys("You can run bash commands with the bash tool.").user("run the tests in test_x.py").
				call("bash", `{"command":"pytest test_x.py"}`, "Traceback (most recent call last):\n  File x").build(),
			msg: 2, call: 0, verdict: VerdictFail, reason: ReasonExecError,
		},
		{
			name: "no observation",
			in: traj("generic").tool("get_user", lookup).user("I am mia_li_3668").
				call("get_user", `{"user_id":"mia_li_3668"}`, "-").build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonNoObservation,
		},
		{
			name: "schema violation",
			in: traj("generic").tool("get_user", lookup).user("I am mia_li_3668").
				call("get_user", `{"user":"mia_li_3668"}`, `{"ok":true}`).build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonSchema,
		},
		{
			name: "undecodable arguments",
			in: traj("generic").tool("get_user", lookup).user("I am mia_li_3668").
				call("get_user", `{"user_id": mia_li_3668`, `{"ok":true}`).build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonSchema,
		},
		{
			name: "profile schema when the log lists no tools",
			in: traj("airline").sys(airlinePolicy).user("my user id is mia_li_3668").
				call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 2, call: 0, verdict: VerdictPass, absent: ReasonSchema, arg: "user_id", status: StatusLiteral,
		},
		{
			name: "failed call then grounded recovery: the failure",
			in: traj("airline").sys(airlinePolicy).user("my user id is mia_li_3668").
				call("get_user_details", `{"user_id":"mia_li_366"}`, "Error: user not found").
				call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 2, call: 0, verdict: VerdictFail, reason: ReasonExecError,
		},
		{
			name: "failed call then grounded recovery: the recovery",
			in: traj("airline").sys(airlinePolicy).user("my user id is mia_li_3668").
				call("get_user_details", `{"user_id":"mia_li_366"}`, "Error: user not found").
				call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 4, call: 0, verdict: VerdictPass, arg: "user_id", status: StatusLiteral, where: "message 1",
		},
	})
}

// TestCheckToolVisibility covers vis.tool_unseen.
func TestCheckToolVisibility(t *testing.T) {
	runCheckCases(t, []checkCase{
		{
			name: "tool absent from the tool list",
			in: traj("generic").tools("get_user").user("delete account mia_li_3668").
				call("delete_user", `{"user_id":"mia_li_3668"}`, `{"ok":true}`).build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonToolUnseen,
		},
		{
			name: "tool named in the visible system prompt",
			in: traj("swe").sys("Tools: bash runs a shell command.").user("list files").
				call("bash", `{"command":"ls"}`, "a.py\nb.py").build(),
			msg: 2, call: 0, verdict: VerdictPass, absent: ReasonToolUnseen,
		},
		{
			name: "no tools list and none named",
			in:   traj("generic").user("list files").call("bash", `{"command":"ls"}`, "a.py").build(),
			msg:  1, call: 0, verdict: VerdictFail, reason: ReasonToolUnseen,
		},
	})
}

// TestCheckVisibility covers literal matches and the tricky non-matches.
func TestCheckVisibility(t *testing.T) {
	base := func() *tb { return traj("airline").sys(airlinePolicy).user("Hi, my user id is mia_li_3668.") }
	runCheckCases(t, []checkCase{
		{
			name: "literal from the user",
			in:   base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg:  2, call: 0, verdict: VerdictPass, arg: "user_id", status: StatusLiteral, where: "message 1 [",
		},
		{
			name: "literal inside a JSON observation",
			in: base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).build(),
			msg: 4, call: 0, verdict: VerdictPass, arg: "reservation_id", status: StatusLiteral, where: "reservations[0]",
		},
		{
			name: "visible only after the decision",
			in: traj("airline").sys(airlinePolicy).
				call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				user("my user id is mia_li_3668").build(),
			msg: 1, call: 0, verdict: VerdictFail, reason: ReasonUnsupported, arg: "user_id", status: StatusUnsupported, where: "not found anywhere",
		},
		{
			name: "id only in a hidden teacher hint",
			in: base().hiddenMsg(HiddenTeacherHint, "teacher note: the reservation is ZFA04Y").
				call("get_reservation_details", `{"reservation_id":"ZFA04Y"}`, `{"reservation_id":"ZFA04Y"}`).build(),
			msg: 3, call: 0, verdict: VerdictFail, reason: ReasonHiddenLeak, arg: "reservation_id", status: StatusHiddenOnly, where: "hidden message 2 (teacher_hint)",
		},
		{
			name: "id only in the user simulator's instruction",
			in: base().hidden(HiddenUserInstruction, "You are mia_li_3668 and your reservation is ZFA04Y.").
				call("get_reservation_details", `{"reservation_id":"ZFA04Y"}`, `{"reservation_id":"ZFA04Y"}`).build(),
			msg: 2, call: 0, verdict: VerdictFail, reason: ReasonHiddenLeak, where: "user instruction (hidden entry 0)",
		},
		{
			name: "substring of a longer visible id",
			in: base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("get_reservation_details", `{"reservation_id":"NO6JO"}`, "Error: reservation not found").build(),
			msg: 4, call: 0, verdict: VerdictFail, arg: "reservation_id", status: StatusUnsupported,
		},
		{
			name: "number part of an id is not the id",
			in: base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":2,"nonfree_baggages":0,"payment_id":"4421486"}`, "Error: payment not found").build(),
			msg: 4, call: 0, verdict: VerdictFail, arg: "payment_id", status: StatusUnsupported,
		},
		{
			name: "small numbers prove nothing",
			in: base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
				user("Add bags to NO6JO3 please, charge my 7447 card.").
				say("I will add bags to NO6JO3 and charge your card ending in 7447. Shall I proceed?").user("Yes.").
				call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":3,"nonfree_baggages":2,"payment_id":"credit_card_4421486"}`, reservationNO6).build(),
			msg: 9, call: 0, verdict: VerdictAmbiguous, reason: ReasonWeak, arg: "total_baggages", status: StatusWeak,
		},
		{
			name: "a small number next to its word",
			in: base().call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
				user("I want three checked bags on NO6JO3.").
				call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
				say("I will set NO6JO3 to 3 checked bags, 2 of them at $50 each, charged to your card ending in 7447. Shall I proceed?").
				user("Yes please.").
				call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":3,"nonfree_baggages":2,"payment_id":"credit_card_4421486"}`, reservationNO6).build(),
			msg: 11, call: 0, arg: "total_baggages", status: StatusNormalized, where: "three",
			verdict: VerdictAmbiguous, // the card is the agent's pick among four
		},
		{
			name: "a small number stated only in hidden context",
			in: base().hidden(HiddenUserInstruction, "You have 3 baggages.").
				call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
				call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
				call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":3,"nonfree_baggages":0,"payment_id":"credit_card_4421486"}`, reservationNO6).build(),
			msg: 6, call: 0, verdict: VerdictFail, reason: ReasonHiddenLeak, arg: "total_baggages", status: StatusHiddenOnly,
		},
	})
}

// TestCheckNormalization covers every normalization: case and spacing,
// number forms, dates in several forms against the visible current date,
// clock times, last four digits, yes/no answers and number words.
func TestCheckNormalization(t *testing.T) {
	search := func(userText, date string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user(userText).
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"`+date+`"}`, "[]").build()
	}
	runCheckCases(t, []checkCase{
		{name: "date: May 20th", in: search("From JFK to SEA on May 20th please.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, reason: ReasonNormalized, arg: "date", status: StatusNormalized, where: "year 2024"},
		{name: "date: 20 May", in: search("JFK to SEA, 20 May.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized},
		{name: "date: the 20th of May", in: search("JFK to SEA on the 20th of May.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized},
		{name: "date: May 20, 2024", in: search("JFK to SEA on May 20, 2024.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized},
		{name: "date: 05/20/2024", in: search("JFK to SEA on 05/20/2024.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized},
		{name: "date: 5/20", in: search("JFK to SEA on 5/20.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized},
		{name: "date: ISO", in: search("JFK to SEA on 2024-05-20.", "2024-05-20"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusLiteral},
		{name: "date: tomorrow", in: search("JFK to SEA tomorrow.", "2024-05-16"), msg: 2, call: 0,
			verdict: VerdictPass, arg: "date", status: StatusNormalized, where: "tomorrow"},
		{name: "date: the day after a visible date", in: traj("airline").sys(airlinePolicy).
			user("Move my May 23 flight to the day after, JFK to SEA.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-24"}`, "[]").build(),
			msg: 2, call: 0, verdict: VerdictPass, reason: ReasonDerived, arg: "date", status: StatusDerived},
		{name: "date: wrong day", in: search("JFK to SEA on May 20th please.", "2024-05-21"), msg: 2, call: 0,
			verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "date", status: StatusUnsupported},
		{name: "date: a year without a visible reference", in: traj("airline").user("JFK to SEA on May 20th please.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").build(),
			msg: 1, call: 0, verdict: VerdictAmbiguous, arg: "date", status: StatusUnsupported},
		{name: "case and spacing", in: traj("airline").sys(airlinePolicy).user("my user id is MIA_LI_3668").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 2, call: 0, verdict: VerdictPass, reason: ReasonNormalized, arg: "user_id", status: StatusNormalized, where: "case"},
		{name: "number form: 250.0 and $250", in: traj("generic").tool("refund", `{"type":"object","properties":{"amount":{"type":"number"}}}`).
			user("Please refund $250.").call("refund", `{"amount":250}`, `{"ok":true}`).build(),
			msg: 1, call: 0, verdict: VerdictPass, arg: "amount", status: StatusNormalized, where: "$ amount"},
		{name: "number form: calculator 255.0", in: traj("airline").sys(airlinePolicy).user("What is 152 plus 103?").
			call("calculate", `{"expression":"152 + 103"}`, "255.0").say("The total is $255.").build(),
			msg: 4, call: -1, verdict: VerdictPass, arg: "$255", status: StatusNormalized, where: "255.0"},
		{name: "number form: thousands separator", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668").
			call("calculate", `{"expression":"6594 + 3925"}`, "10519.0").say("You saved $10,519 in total.").build(),
			msg: 4, call: -1, verdict: VerdictPass, arg: "$10,519", status: StatusNormalized},
		{name: "clock time: 7:00 PM", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-15"}`,
				`[{"flight_number":"HAT136","scheduled_departure_time_est":"19:00:00"}]`).
			say("HAT136 leaves at 7:00 PM.").build(),
			msg: 4, call: -1, verdict: VerdictPass, arg: "7:00 PM", status: StatusNormalized, where: "19:00:00"},
		{name: "last four to a listed payment id", in: traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668.").call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I will add 1 bag to NO6JO3 for $50. Which card should I charge?").
			user("Yes, charge my card ending in 7447.").
			call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":2,"nonfree_baggages":1,"payment_id":"credit_card_4421486"}`, reservationNO6).build(),
			msg: 8, call: 0, arg: "payment_id", status: StatusLiteral, where: "last_four 7447", verdict: VerdictAmbiguous},
		{name: "yes/no answer to a boolean-like enum", in: traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668, one way economy, and no, I do not want travel insurance.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("Booking HAT136 on 2024-05-20 from JFK to SEA in economy, one way, paid with credit_card_4421486. Confirm?").
			user("Yes.").
			call("book_reservation", `{"user_id":"mia_li_3668","origin":"JFK","destination":"SEA","flight_type":"one_way","cabin":"economy","flights":[{"flight_number":"HAT136","date":"2024-05-20"}],"passengers":[{"first_name":"Mia","last_name":"Li","dob":"1990-04-05"}],"payment_methods":[{"payment_id":"credit_card_4421486","amount":152}],"total_baggages":0,"nonfree_baggages":0,"insurance":"no"}`, `{"reservation_id":"HATHAT"}`).build(),
			msg: 6, call: 0, arg: "insurance", status: StatusNormalized, where: "the user's answer about insurance", verdict: VerdictFail},
		{name: "enum value of the visible schema", in: traj("generic").
			tool("set_mode", `{"type":"object","properties":{"mode":{"type":"string","enum":["fast","safe"]}}}`).
			user("Set the mode please.").call("set_mode", `{"mode":"safe"}`, `{"ok":true}`).build(),
			msg: 1, call: 0, verdict: VerdictPass, arg: "mode", status: StatusEnum, where: "enum"},
	})
}

// TestCheckDerived covers arithmetic over visible numbers.
func TestCheckDerived(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "sum of a reservation's flight prices", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668, reservation NO6JO3").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("Your two flights cost $255 together.").build(),
			msg: 4, call: -1, verdict: VerdictPass, reason: ReasonDerived, arg: "$255", status: StatusDerived, where: "152 + 103"},
		{name: "difference in an error message", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668").
			call("book_reservation", `{"user_id":"mia_li_3668"}`, "Error: payment amount does not add up, total price is 310, but paid 255").
			say("There is $55 left to pay.").build(),
			msg: 4, call: -1, verdict: VerdictPass, arg: "$55", status: StatusDerived},
		{name: "total of values the reply states", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`,
				`[{"flight_number":"HAT069","prices":{"basic_economy":51,"economy":121,"business":239}},{"flight_number":"HAT083","prices":{"basic_economy":87,"economy":100,"business":276}},{"flight_number":"HAT100","prices":{"basic_economy":77,"economy":131,"business":301}}]`).
			call("search_direct_flight", `{"origin":"SEA","destination":"JFK","date":"2024-05-25"}`,
				`[{"flight_number":"HAT276","prices":{"basic_economy":55,"economy":162,"business":490}},{"flight_number":"HAT021","prices":{"basic_economy":60,"economy":198,"business":398}},{"flight_number":"HAT089","prices":{"basic_economy":99,"economy":153,"business":377}}]`).
			say("HAT069 costs $51 and HAT276 costs $55, so the round trip is $106.").build(),
			msg: 6, call: -1, verdict: VerdictPass, arg: "$106", status: StatusDerived, where: "stated above"},
		{name: "unsupported amount in a reply", in: traj("airline").sys(airlinePolicy).user("id mia_li_3668").
			say("Your refund will be $2,210.").build(),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "$2,210", status: StatusUnsupported},
	})
}

// TestCheckChoiceEchoKnowledge covers the rules real logs taught: choice,
// echoes, contradictions and outside knowledge.
func TestCheckChoiceEchoKnowledge(t *testing.T) {
	withUser := func(userText string) *tb {
		return traj("airline").sys(airlinePolicy).user(userText).
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I can add one checked bag to NO6JO3 for $50. Shall I proceed?").
			user("Yes, go ahead.")
	}
	// recordOnly reads only the reservation, whose payment history is the
	// one payment in sight.
	recordOnly := func(userText string) *tb {
		return traj("airline").sys(airlinePolicy).user(userText).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I can add one checked bag to NO6JO3 for $50. Shall I proceed?").
			user("Yes, go ahead.")
	}
	bags := func(payment string) string {
		return `{"reservation_id":"NO6JO3","total_baggages":2,"nonfree_baggages":1,"payment_id":"` + payment + `"}`
	}
	runCheckCases(t, []checkCase{
		{name: "choice among three cards", in: withUser("I am mia_li_3668, reservation NO6JO3, use my credit card.").
			call("update_reservation_baggages", bags("credit_card_1955700"), reservationNO6).build(),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonChoice, arg: "payment_id", status: StatusChoice, where: "candidates"},
		{name: "card singled out by its last four", in: withUser("I am mia_li_3668, reservation NO6JO3, use my card ending in 1907.").
			call("update_reservation_baggages", bags("credit_card_1955700"), reservationNO6).build(),
			msg: 8, call: 0, absent: ReasonChoice, arg: "payment_id", status: StatusLiteral, where: "last_four 1907", verdict: VerdictAmbiguous},
		{name: "card singled out by its brand", in: withUser("I am mia_li_3668, reservation NO6JO3, use my mastercard.").
			call("update_reservation_baggages", bags("credit_card_3331112"), reservationNO6).build(),
			msg: 8, call: 0, absent: ReasonChoice, arg: "payment_id", where: "brand mastercard", verdict: VerdictAmbiguous},
		{name: "the record's past payment reused though the user never chose how to pay", in: recordOnly("I am mia_li_3668, add a bag to NO6JO3.").
			call("update_reservation_baggages", bags("credit_card_4421486"), reservationNO6).build(),
			msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonChoice, arg: "payment_id", status: StatusChoice, where: "never listed"},
		{name: "the record's past payment when the user asked for the original card", in: recordOnly("I am mia_li_3668, add a bag to NO6JO3 and charge the original card.").
			call("update_reservation_baggages", bags("credit_card_4421486"), reservationNO6).build(),
			msg: 6, call: 0, verdict: VerdictAmbiguous, absent: ReasonChoice, arg: "payment_id", status: StatusLiteral, where: "as the user asked"},
		{name: "the user's only listed payment method is not a choice", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668, add a bag to NO6JO3.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, `{"user_id":"mia_li_3668","payment_methods":{"credit_card_4421486":{"source":"credit_card","last_four":"7447","id":"credit_card_4421486"}}}`).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I can add one checked bag to NO6JO3 for $50. Shall I proceed?").user("Yes, go ahead.").
			call("update_reservation_baggages", bags("credit_card_4421486"), reservationNO6).build(),
			msg: 8, call: 0, verdict: VerdictAmbiguous, absent: ReasonChoice, arg: "payment_id", status: StatusLiteral},
		{name: "contradiction: another card's last four", in: withUser("I am mia_li_3668, reservation NO6JO3, use my card ending in 7447.").
			call("update_reservation_baggages", bags("credit_card_1955700"), reservationNO6).build(),
			msg: 8, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "payment_id", status: StatusContradiction, where: "7447"},
		{name: "the original card asked for, and another card's last four", in: withUser("I am mia_li_3668, reservation NO6JO3, charge the original card, the one ending in 1907.").
			call("update_reservation_baggages", bags("credit_card_4421486"), reservationNO6).build(),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonChoice, arg: "payment_id", status: StatusChoice, where: "but the user named last_four 1907"},
		{name: "echo of the agent's own guess", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668; cancel my trip.").
			call("get_reservation_details", `{"reservation_id":"Q7ZZ01"}`, `{"reservation_id":"Q7ZZ01","user_id":"mia_li_3668","cabin":"business"}`).
			say("Reservation Q7ZZ01 can be cancelled. Shall I proceed?").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"Q7ZZ01"}`, `{"reservation_id":"Q7ZZ01","status":"cancelled"}`).build(),
			msg: 6, call: 0, verdict: VerdictFail, reason: ReasonEcho, arg: "reservation_id", status: StatusEcho, where: "echo"},
		{name: "the guess itself", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668; cancel my trip.").
			call("get_reservation_details", `{"reservation_id":"Q7ZZ01"}`, `{"reservation_id":"Q7ZZ01"}`).build(),
			msg: 2, call: 0, verdict: VerdictFail, reason: ReasonUnsupported},
		{name: "city to airport code needs knowledge", in: traj("airline").sys(airlinePolicy).
			user("I want to fly from New York to Seattle on May 20.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").build(),
			msg: 2, call: 0, verdict: VerdictAmbiguous, reason: ReasonKnowledge, arg: "origin", status: StatusKnowledge, where: "New York"},
		{name: "airport code from a visible airport list", in: traj("airline").sys(airlinePolicy).
			user("I want to fly from New York to Seattle on May 20.").
			call("list_all_airports", `{}`, `{"JFK": "New York", "SEA": "Seattle"}`).
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").build(),
			msg: 4, call: 0, verdict: VerdictPass, arg: "origin", status: StatusLiteral},
		{name: "a reply proposing one of several payment methods", in: traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668, pay with a card.").call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("I will charge credit_card_3331112.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonChoice, arg: "credit_card_3331112", status: StatusChoice},
		{name: "an invented id in a reply", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("Your reservation ZZ9Y88 is confirmed.").build(),
			msg: 4, call: -1, verdict: VerdictFail, reason: ReasonUnsupported, arg: "ZZ9Y88", status: StatusUnsupported},
		{name: "a reply claiming a write no call did", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668, add a bag to NO6JO3.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("One checked bag has been added to NO6JO3.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported},
		{name: "a report of a write stating what the write did not record", in: cancelled().
			say("Done! Here is the summary:\n- **Status:** cancelled\n- **Meals:** vegetarian meals kept for your next trip").build(),
			msg: 8, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "content[51:104]", status: StatusUnsupported},
		{name: "a report of a write stating what its record holds", in: cancelled().
			say("Done! Here is the summary:\n- **Status:** cancelled\n- **Reservation:** NO6JO3").build(),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// cancelled is a cancellation read, confirmed and made.
func cancelled() *tb {
	return traj("airline").sys(airlinePolicy).user("I am mia_li_3668, cancel reservation NO6JO3.").
		call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
		say("Reservation NO6JO3 has insurance, so I can cancel it. Shall I proceed?").user("Yes, please.").
		call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`)
}

// TestCheckWorkflow covers flow.order, flow.unconfirmed and term.failed.
func TestCheckWorkflow(t *testing.T) {
	read := func() *tb {
		// A health reason: NO6JO3 has insurance, so the policy allows it.
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668, cancel reservation NO6JO3. I'm sick.")
	}
	t.Run("cancel without reading the reservation", func(t *testing.T) {
		tr := read().say("Cancel NO6JO3? Please confirm.").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		r := Check(tr, nil)
		d := decisionAt(t, r, 4, 0)
		if !hasString(d.Reasons, ReasonOrder) || d.Verdict != VerdictFail || r.Workflow || d.Mask != 0 {
			t.Errorf("Check = workflow %v, %s; want flow.order fail and workflow 0", r.Workflow, describeDecision(d))
		}
		// The trajectory-level violation zeroes every decision's mask.
		if first := decisionAt(t, r, 2, -1); first.Mask != 0 || !hasString(first.Reasons, ReasonOrder) {
			t.Errorf("Check first decision = mask %d %v, want 0 with flow.order", first.Mask, first.Reasons)
		}
	})
	t.Run("cancel after reading and a yes", func(t *testing.T) {
		tr := read().call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("Reservation NO6JO3 has insurance, so I can cancel it. Shall I proceed?").user("Yes, please.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		r := Check(tr, nil)
		d := decisionAt(t, r, 6, 0)
		if d.Verdict != VerdictPass || d.Mask != 1 || !r.Workflow {
			t.Errorf("Check = workflow %v, %s; want pass with mask 1", r.Workflow, describeDecision(d))
		}
	})
	t.Run("a (yes/no) question asks for approval", func(t *testing.T) {
		tr := read().call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("NO6JO3 has insurance, so it can be cancelled with a full refund. Cancel it (yes/no)?").user("yes please").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		d := decisionAt(t, Check(tr, nil), 6, 0)
		if d.Verdict != VerdictPass || hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want pass: the user said yes to a (yes/no) question naming the action", describeDecision(d))
		}
	})
	t.Run("write without the user's yes", func(t *testing.T) {
		tr := read().call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		r := Check(tr, nil)
		d := decisionAt(t, r, 4, 0)
		if d.Verdict != VerdictFail || !hasString(d.Reasons, ReasonUnconfirmed) || d.Workflow {
			t.Errorf("Check = %s; want flow.unconfirmed fail", describeDecision(d))
		}
		if !r.Workflow {
			t.Errorf("Check workflow = false; the airline profile makes confirmation decision-level")
		}
	})
	t.Run("the user backs out", func(t *testing.T) {
		tr := read().call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("Cancel NO6JO3? Please confirm.").user("Yes.").say("Anything else?").user("No, wait, don't do it.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		d := decisionAt(t, Check(tr, nil), 8, 0)
		if !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed", describeDecision(d))
		}
	})
	t.Run("I can is no mention of cancelling", func(t *testing.T) {
		tr := read().call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I can look at the refund terms again. Would you like me to do that?").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		d := decisionAt(t, Check(tr, nil), 6, 0)
		if d.Verdict != VerdictFail || !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed fail: the yes answered an offer to look again", describeDecision(d))
		}
	})
	// A report of a write names ids, but proposes nothing: a later yes to
	// something else does not confirm a write on them (task0-trial3).
	const bagsZFA = `{"reservation_id":"ZFA04Y","total_baggages":1,"nonfree_baggages":0,"payment_id":"credit_card_4421486"}`
	reported := func(answer string) *tb {
		return cancelled().say("NO6JO3 is cancelled. Your other reservation ZFA04Y is unchanged." + answer)
	}
	t.Run("a report is no listing for a later yes", func(t *testing.T) {
		tr := reported("").user("When will the refund arrive?").
			say("In 5 to 7 business days. I can also check your certificates. Would you like me to do that?").user("Yes.").
			call("update_reservation_baggages", bagsZFA, `{"reservation_id":"ZFA04Y","total_baggages":1}`).build()
		d := decisionAt(t, Check(tr, nil), 12, 0)
		if !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed: ZFA04Y was named only by the report of the first cancellation", describeDecision(d))
		}
	})
	t.Run("a report that asks is a listing", func(t *testing.T) {
		tr := reported(" Shall I do the same for ZFA04Y?").user("Yes.").
			call("update_reservation_baggages", bagsZFA, `{"reservation_id":"ZFA04Y","total_baggages":1}`).build()
		d := decisionAt(t, Check(tr, nil), 10, 0)
		if hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want no flow.unconfirmed: the user said yes to the question in the report", describeDecision(d))
		}
	})
	t.Run("a question that says proceed is no yes", func(t *testing.T) {
		tr := read().say("I can help with cancelling NO6JO3. To proceed, I need your user id.").user("I'm mia_li_3668. How can we proceed?").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
		d := decisionAt(t, Check(tr, nil), 6, 0)
		if !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed: 'How can we proceed?' asks, it accepts nothing", describeDecision(d))
		}
	})
	// A listing that names only the action covers one write of it: the
	// second booking on the same yes is a new write (task0-trial3).
	bookTwice := func(second string) *tb {
		const book = `{"user_id":"mia_li_3668","origin":"JFK","destination":"SEA","flight_type":"one_way","cabin":"economy","flights":[{"flight_number":"HAT136","date":"2024-05-20"}],"passengers":[{"first_name":"Mia","last_name":"Li","dob":"1990-04-05"}],"payment_methods":[{"payment_id":"credit_card_4421486","amount":152}],"total_baggages":0,"nonfree_baggages":0,"insurance":"no"}`
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668 and want to fly JFK to SEA on May 20.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("Thank you, Mia! Shall I go ahead with the booking in economy or business?").user("Sure, economy.").
			call("book_reservation", book, `{"reservation_id":"HATHAT","status":"booked"}`).
			say("Your reservation ID is HATHAT.").user(second).
			call("book_reservation", book, `{"reservation_id":"HATHAU","status":"booked"}`)
	}
	t.Run("a cabin offered in a question lists no booking", func(t *testing.T) {
		tr := bookTwice("x").build()
		tr.Messages[4].Content = "Thank you, Mia! Would you like economy or business?"
		tr.Messages[5].Content = "Yes, economy."
		d := decisionAt(t, Check(tr, nil), 6, 0)
		if !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed: an enum value and a greeting are no listing of the booking", describeDecision(d))
		}
	})
	t.Run("an action-only listing covers one write", func(t *testing.T) {
		r := Check(bookTwice("Could you pay it with my other card instead?").build(), nil)
		if d := decisionAt(t, r, 6, 0); hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("first booking = %s; want it covered by the yes to 'go ahead with the booking'", describeDecision(d))
		}
		if d := decisionAt(t, r, 10, 0); !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("second booking = %s; want flow.unconfirmed: the yes covered the first booking", describeDecision(d))
		}
	})
	t.Run("a reply sent with an unconfirmed write fails with it", func(t *testing.T) {
		tr := bookTwice("Could you pay it with my other card instead?").build()
		tr.Messages[10].Content = "Let me adjust the payment method for your reservation."
		d := decisionAt(t, Check(tr, nil), 10, -1)
		if d.Verdict != VerdictFail || !hasString(d.Reasons, ReasonUnconfirmed) {
			t.Errorf("Check = %s; want flow.unconfirmed fail: it announces a booking nobody confirmed", describeDecision(d))
		}
	})
	t.Run("term.failed masks every decision", func(t *testing.T) {
		tr := traj("airline").reward(0).sys(airlinePolicy).user("I am mia_li_3668.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build()
		r := Check(tr, nil)
		d := decisionAt(t, r, 2, 0)
		if r.R != 0 || d.Verdict != VerdictPass || d.Mask != 0 || !hasString(d.Reasons, ReasonTermFailed) || !hasString(r.Reasons, ReasonTermFailed) {
			t.Errorf("Check = R %d %s; want pass with mask 0 and term.failed", r.R, describeDecision(d))
		}
	})
	t.Run("ambiguous decisions are queued only when R and workflow hold", func(t *testing.T) {
		tr := traj("airline").sys(airlinePolicy).user("I want to fly from New York to Seattle on May 20.").
			call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").build()
		d := decisionAt(t, Check(tr, nil), 2, 0)
		if !d.Queued || d.Mask != 0 || d.G != 0 {
			t.Errorf("Check = queued %v mask %d g %d; want queued with mask 0", d.Queued, d.Mask, d.G)
		}
		tr.Reward = new(float64)
		if d := decisionAt(t, Check(tr, nil), 2, 0); d.Queued {
			t.Errorf("Check with R=0 queued the decision; a human verdict could not change its mask")
		}
	})
}

// TestCheckResultShape checks the bookkeeping every result carries.
func TestCheckResultShape(t *testing.T) {
	tr := traj("airline").sys(airlinePolicy).user("I am mia_li_3668.").say("Thanks, Mia.").
		call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build()
	tr.Messages[2].ToolCalls = tr.Messages[3].ToolCalls
	tr.Messages = append(tr.Messages[:3], tr.Messages[4:]...)
	r := Check(tr, nil)
	if r.EngineVersion != EngineVersion || r.Profile != "airline" || r.ProfileVersion == "" {
		t.Errorf("Check = engine %q profile %q %q; want versions set", r.EngineVersion, r.Profile, r.ProfileVersion)
	}
	want := Decisions(tr)
	if len(r.Decisions) != len(want) {
		t.Fatalf("Check made %d decisions, Decisions() says %d", len(r.Decisions), len(want))
	}
	for i, d := range r.Decisions {
		if d.Ordinal != want[i].Ordinal || d.Message != want[i].Message || d.Call != want[i].Call {
			t.Errorf("decision %d = %d/%d/%d, want %+v", i, d.Ordinal, d.Message, d.Call, want[i])
		}
	}
}

// TestCheckReusedCallIDs: logs reuse call ids; each call still gets its
// own observation.
func TestCheckReusedCallIDs(t *testing.T) {
	tr := traj("airline").sys(airlinePolicy).user("I am mia_li_3668, from JFK to SEA on May 20.").
		call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").
		call("search_onestop_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, "[]").build()
	tr.Messages[4].ToolCalls[0].ID = "c1"
	tr.Messages[5].ToolCallID = "c1"
	r := Check(tr, nil)
	if d := decisionAt(t, r, 4, 0); d.Observation != 5 || d.Verdict != VerdictPass {
		t.Errorf("Check second call = observation %d, %s; want observation 5, pass", d.Observation, describeDecision(d))
	}
}

// TestCheckAuthored: under a profile with "authored" (swe), what a coding
// agent writes that nothing visible holds is its own, not unsupported; a
// value only hidden context holds is still a leak; without "authored"
// (generic) the same script is unsupported.
func TestCheckAuthored(t *testing.T) {
	script := func(domain string) *tb {
		return traj(domain).reward(1).tools("bash").
			sys("Run one bash command per turn.").
			user("<pr_description>\nLedger.balance() counts reversals twice.\n</pr_description>").
			call("bash", `{"command":"grep -rn \"def balance\" tally"}`, "tally/ledger.py:76:    def balance(self):").
			hidden("reference_patch", "def test_reversal_cancels_fixture42(): pass")
	}
	repro := `{"command":"cat <<'EOF' > reproduce_issue.py\nfrom tally.ledger import Ledger, Entry\ninstance1 = Ledger([Entry(50), Entry(50, reversal=True)])\nassert instance1.balance() == 0\nEOF"}`
	leak := `{"command":"python -m pytest tests/test_ledger.py -k test_reversal_cancels_fixture42"}`
	runCheckCases(t, []checkCase{
		{name: "swe: a variable the agent names is its own",
			in: script("swe").call("bash", repro, "").build(), msg: 4, call: 0,
			verdict: VerdictPass, absent: ReasonUnsupported, arg: "instance1", status: StatusFreeText, where: "the agent's own"},
		{name: "swe: a value only the hidden reference holds is a leak",
			in: script("swe").call("bash", leak, "1 passed").build(), msg: 4, call: 0,
			verdict: VerdictFail, reason: ReasonHiddenLeak, arg: "test_reversal_cancels_fixture42", status: StatusHiddenOnly},
		{name: "generic: the same script is unsupported",
			in: script("support").call("bash", repro, "").build(), profile: "generic", msg: 4, call: 0,
			verdict: VerdictFail, reason: ReasonUnsupported, arg: "instance1", status: StatusUnsupported},
	})
}

// TestEvidenceStringFreeText: a free-text argument as a whole points at no
// message; its evidence reads as its note, not "message -1 [0:0]".
func TestEvidenceStringFreeText(t *testing.T) {
	tr := traj("swe").reward(1).tools("bash").sys("Run bash.").user("list the files").
		call("bash", `{"command":"ls -la"}`, "total 0").build()
	d := decisionAt(t, Check(tr, nil), 2, 0)
	a, ok := argAt(d, "command")
	if !ok {
		t.Fatalf("no command argument:\n%s", describeDecision(d))
	}
	if got := a.Where.String(); strings.Contains(got, "-1") || !strings.Contains(got, "free text") {
		t.Errorf("free-text evidence = %q, want its note without a message index", got)
	}
}

// TestCheckPolicyConditions covers the airline profile's cancellation
// condition (workflow.conditions): a cancellation the visible record does
// not allow (booked more than 24 hours ago, not business, no insurance
// covering the reason the user gave, no airline cancellation) is ambiguous,
// not passed and not failed.
func TestCheckPolicyConditions(t *testing.T) {
	record := func(created, cabin, insurance string) string {
		return `{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "` + cabin +
			`", "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 152}], "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "credit_card_4421486", "amount": 152}], "created_at": "` +
			created + `", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "` + insurance + `"}`
	}
	cancel := func(policy, reason, rec string) *Trajectory {
		return traj("airline").sys(policy).user("I am mia_li_3668, cancel reservation NO6JO3. "+reason).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, rec).
			say("Cancel NO6JO3? Please confirm (yes/no).").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build()
	}
	runCheckCases(t, []checkCase{
		{name: "economy without insurance booked two weeks ago", in: cancel(airlinePolicy, "My plans changed.", record("2024-05-01T05:17:41", "economy", "no")),
			msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", status: StatusUnsupported, where: "against the policy; the record of NO6JO3 (message 3) shows created_at 2024-05-01T05:17:41"},
		{name: "booked within the last 24 hours", in: cancel(airlinePolicy, "My plans changed.", record("2024-05-14T20:46:09", "economy", "no")),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "business can always be cancelled", in: cancel(airlinePolicy, "My plans changed.", record("2024-05-01T05:17:41", "business", "no")),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "insurance and a health reason", in: cancel(airlinePolicy, "I'm feeling unwell.", record("2024-05-01T05:17:41", "basic_economy", "yes")),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "insurance does not cover a change of plans", in: cancel(airlinePolicy, "My plans changed.", record("2024-05-01T05:17:41", "economy", "yes")),
			msg: 6, call: 0, verdict: VerdictAmbiguous, arg: "policy", status: StatusUnsupported, where: "insurance yes"},
		{name: "the airline cancelled the flight", in: cancel(airlinePolicy, "The airline cancelled my flight.", record("2024-05-01T05:17:41", "economy", "no")),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "no current time stated: the rule says nothing", in: cancel("# Airline Agent Policy\n\nBe helpful.", "My plans changed.", record("2024-05-01T05:17:41", "economy", "no")),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the latest record counts: an update that left basic economy", in: traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668, cancel reservation NO6JO3, no specific reason.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, record("2024-05-01T05:17:41", "business", "no")).
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, record("2024-05-01T05:17:41", "basic_economy", "no")).
			say("Cancel NO6JO3? Please confirm (yes/no).").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build(),
			msg: 8, call: 0, verdict: VerdictAmbiguous, arg: "policy", where: "cabin basic_economy"},
	})
}

// TestCheckPolicyClaims covers replies and transfer summaries that tell the
// user what the cancellation policy allows: a claim the record contradicts
// ("eligible for a full refund" on an economy booking two weeks old
// without insurance; "does not meet the conditions" for a business one;
// asking the user to confirm a cancellation the record rules out) is
// ambiguous; a claim the record bears out passes; a trip already flown
// cannot be cancelled whatever its cabin.
func TestCheckPolicyClaims(t *testing.T) {
	rec := func(id, created, cabin, date string) string {
		return `{"reservation_id": "` + id + `", "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "` + cabin +
			`", "flights": [{"flight_number": "HAT136", "date": "` + date + `", "price": 152}], "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}], "payment_history": [{"payment_id": "credit_card_4421486", "amount": 152}], "created_at": "` +
			created + `", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}`
	}
	reply := func(r, text string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Please cancel reservation NO6JO3, my plans changed.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, r).say(text).build()
	}
	old := rec("NO6JO3", "2024-05-01T05:17:41", "economy", "2024-05-20")
	business := rec("NO6JO3", "2024-05-01T05:17:41", "business", "2024-05-20")
	runCheckCases(t, []checkCase{
		{name: "eligible for a full refund, which the record rules out", in: reply(old, "As a silver member, you are eligible for a full refund. Shall I cancel NO6JO3?"),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "As a silver member, you are eligible for a full refund", status: StatusUnsupported, where: "created_at 2024-05-01T05:17:41"},
		{name: "an upgrade said to allow a cancellation the record rules out", in: reply(rec("NO6JO3", "2024-05-01T05:17:41", "basic_economy", "2024-05-20"), "Upgrading NO6JO3 to economy will allow us to proceed with the cancellation."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "says the policy allows it"},
		{name: "said to be refundable on cancellation, which the record rules out", in: reply(old, "Once upgraded, the reservation can be canceled for a refund."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "created_at 2024-05-01T05:17:41"},
		{name: "cannot be cancelled, as the record shows", in: reply(old, "NO6JO3 was booked long ago without insurance, so it cannot be cancelled."),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "does not meet the conditions, but business can always be cancelled", in: reply(business, "Reservation NO6JO3 does not meet the conditions for cancellation, I am unable to cancel it."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, arg: "Reservation NO6JO3 does not meet the conditions for cancellation, I am unable to cancel it", where: "meets the policy"},
		{name: "eligible for cancellation, as the record shows", in: reply(business, "NO6JO3 is in business class, so it is eligible for cancellation. Shall I proceed?"),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "asks to confirm a cancellation the record rules out", in: reply(old, "Reservation NO6JO3, economy, change of plans. Please confirm if you would like to proceed with canceling this reservation."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "Please confirm if you would like to proceed with canceling this reservation", status: StatusUnsupported, where: "says the policy allows it"},
		{name: "asks to confirm a cancellation the record allows", in: reply(business, "Reservation NO6JO3 is in business class. Would you like me to proceed with the cancellation?"),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "declines to proceed with a cancellation the record rules out", in: reply(old, "NO6JO3 is economy without insurance, so I am unable to proceed with the cancellation."),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a business trip already flown said to be cancellable at any time", in: reply(rec("NO6JO3", "2024-05-01T05:17:41", "business", "2024-05-03"), "Since this is a business class reservation, it can be cancelled at any time. Would you like to proceed with the cancellation?"),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "already past"},
		{name: "a booking days old said to be within the 24-hour window", in: reply(old, "Since it was booked recently, it is within the 24-hour cancellation window, and you can cancel it."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "says the policy allows it"},
		{name: "a business trip already flown cannot be cancelled", in: reply(rec("NO6JO3", "2024-05-01T05:17:41", "business", "2024-05-03"), "NO6JO3 has already flown, so it cannot be cancelled."),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the claim is about the entity the sentence names", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Cancel NO6JO3 and AIXC49, my plans changed.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, business).
			call("get_reservation_details", `{"reservation_id":"AIXC49"}`, rec("AIXC49", "2024-05-01T05:17:41", "economy", "2024-05-20")).
			say("NO6JO3 can be cancelled. AIXC49 is economy without insurance, so it cannot be cancelled.").build(),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a transfer summary that misstates the policy", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Please cancel reservation NO6JO3, my plans changed.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, business).
			call("transfer_to_human_agents", `{"summary":"The user wants to cancel NO6JO3. The cancellation does not meet the conditions for the agent."}`, "Transfer successful").build(),
			msg: 4, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported},
		{name: "cancelling a trip already flown", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Please cancel reservation NO6JO3.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, rec("NO6JO3", "2024-05-01T05:17:41", "business", "2024-05-03")).
			say("Cancel NO6JO3? Please confirm (yes/no).").user("Yes.").
			call("cancel_reservation", `{"reservation_id":"NO6JO3"}`, `{"reservation_id":"NO6JO3","status":"cancelled"}`).build(),
			msg: 6, call: 0, verdict: VerdictAmbiguous, arg: "policy", where: "2024-05-03 is already past"},
	})
}

// TestCheckRefundSign: an amount visible only with the opposite sign (a
// calculation that came out negative, a refund in a payment history) is
// money going back; a reply that states it needs a word that says so, else
// it may be telling the user a refund is a charge.
func TestCheckRefundSign(t *testing.T) {
	priced := func(text string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. What would the nonstop HAT041 cost instead of my two flights?").
			call("calculate", `{"expression":"(136 - (94 + 80)) * 3"}`, "-114.0").say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "a refund stated as a charge", in: priced("Switching to the nonstop would cost an additional $114 in total."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "$114", status: StatusUnsupported, where: "opposite sign"},
		{name: "a refund stated as a refund", in: priced("Switching to the nonstop is cheaper: you would get a refund of $114 in total."),
			msg: 4, call: -1, verdict: VerdictPass, arg: "$114", status: StatusNormalized, where: "(sign)"},
	})
}

// TestCheckAirportLinked: a city the user named maps to an airport code
// with outside knowledge (ambiguous) unless the visible history links them:
// a list_all_airports result naming the city next to the code.
func TestCheckAirportLinked(t *testing.T) {
	search := func(pre func(*tb) *tb) *Trajectory {
		b := traj("airline").sys(airlinePolicy).user("I am mia_li_3668. I want to fly from New York to Seattle on May 20.")
		return pre(b).call("search_direct_flight", `{"origin":"JFK","destination":"SEA","date":"2024-05-20"}`, `[]`).build()
	}
	runCheckCases(t, []checkCase{
		{name: "nothing links the city to the code", in: search(func(b *tb) *tb { return b }),
			msg: 2, call: 0, verdict: VerdictAmbiguous, reason: ReasonKnowledge, arg: "origin", status: StatusKnowledge},
		{name: "the airport list links them", in: search(func(b *tb) *tb {
			return b.call("list_all_airports", `{}`, `{"JFK": "New York", "SEA": "Seattle", "LAX": "Los Angeles"}`)
		}), msg: 4, call: 0, verdict: VerdictPass, absent: ReasonKnowledge, arg: "origin", status: StatusLiteral, where: "message 3"},
	})
}

// TestCheckPolicyStatements covers the airline profile's policy_claims: a
// reply that states a rule the policy contradicts (basic economy cannot
// change cabin or passengers), offers compensation nobody asked for, or
// sends the user to a human agent who "might have more flexibility" with a
// request the policy denies, or to the airline's website or customer
// service (the agent is that service) is ambiguous; the policy's own rules,
// an offer the user asked for, and a plain transfer offer pass.
func TestCheckPolicyStatements(t *testing.T) {
	say := func(user, text string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user(user).say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "basic economy cannot change passenger names", in: say("Please change the passenger Mei Lee to Mei Garcia.", "Unfortunately, with basic economy reservations, changes to passenger names are not allowed."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, arg: "Unfortunately, with basic economy reservations, changes to passenger names are not allowed", where: "can change its passengers"},
		// A blanket ban said before the user named a change (task4-trial0;
		// the main set passes task13-trial0's, set 20 fails this one).
		{name: "a blanket basic economy ban before the user named a change", in: say("I want to modify a flight booking I made.", "However, this reservation is in basic economy class, which cannot be modified."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "the user has not asked to change flights"},
		{name: "the same ban once the user asked for another flight", in: say("I want to change my flight to a later one.", "However, this reservation is in basic economy class, which cannot be modified."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		// task48-trial2: "given the circumstances" a human is recommended
		// for the denied request, a turn after the denial.
		{name: "a human recommended for the circumstances after a denial", in: traj("airline").sys(airlinePolicy).
			user("I need to change the date of my flight.").
			say("Your reservation is in basic economy class, which cannot be modified.").
			user("My wife passed away yesterday, I need to change it. Please help.").
			say("I'm very sorry. Given the circumstances, I recommend transferring you to a human agent who can assist you further with your request.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "a human agent has no power to grant it"},
		{name: "the circumstances without a denial", in: say("My flight was cancelled and I am stuck at the airport.", "Given the circumstances, I can transfer you to a human agent who can assist you further."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "basic economy cannot upgrade cabin", in: say("Please upgrade me to business.", "Please note that basic economy flights cannot be modified, including cabin upgrades."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction},
		{name: "basic economy flights cannot be changed: the policy's rule", in: say("Please move my flight to Friday.", "Basic economy flights cannot be modified, so I cannot change the flight."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "basic economy said to allow no change after the user asked for business", in: traj("airline").sys(airlinePolicy).
			user("I'd like to change my reservation to the cheapest business class round trip, same dates.").
			say("I can help. What is your user id and reservation id?").
			user("I don't have the reservation id. Does a basic economy ticket allow any changes?").
			say("Basic economy tickets cannot be modified. If you need further assistance, feel free to ask!").build(),
			msg: 4, call: -1, verdict: VerdictFail, reason: ReasonContradiction, arg: "Basic economy tickets cannot be modified", where: "asked for a cabin change"},
		{name: "basic economy said to allow no change, the cabin change offered", in: traj("airline").sys(airlinePolicy).
			user("I'd like to upgrade my reservation to business.").
			say("What is your reservation id?").user("It's basic economy, can it be changed?").
			say("Since the reservation is in basic economy, it cannot be modified. However, you can upgrade the cabin class.").build(),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "basic economy said to allow no change to a user who asked for a flight change", in: traj("airline").sys(airlinePolicy).
			user("I want to move my trip to next Friday.").
			say("What is your reservation id?").user("It's basic economy, can it be changed?").
			say("Your reservation is in basic economy class, which cannot be modified.").build(),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the number of passengers cannot change: the policy's rule", in: say("Please add my son.", "Even on basic economy, the number of passengers cannot be changed."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "compensation offered unasked", in: say("My flight was cancelled and I'm frustrated.", "As a gold member, I can offer you a certificate as compensation for the cancellation."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "explicitly asks"},
		{name: "compensation dangled before anyone asked", in: say("Why was my flight delayed?", "If you have travel insurance or are a silver/gold member, I might also be able to offer some compensation."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "explicitly asks"},
		{name: "asks the user what the reservation record shows", in: say("Please cancel reservation NO6JO3, my plans changed.", "To proceed, I need to confirm a few details:\n1. Was the reservation made within the last day?\n2. Did you purchase travel insurance for this reservation?"),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "Was the reservation made within the last day", where: "asks the user what the tools show: the reservation record shows"},
		{name: "asks the user for the route of a reservation the agent can read", in: say("I want a nonstop flight instead on reservation HXDUBJ.", "To explore nonstop flights, I'll need the origin and the destination of your current reservation."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "To explore nonstop flights, I'll need the origin and the destination of your current reservation", where: "asks the user what the tools show: the reservation record shows its route"},
		{name: "asks for the ids to read the reservation", in: say("I want a nonstop flight instead.", "Could you please provide your user ID and reservation ID so I can check the details of your current reservation?"),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "an original reservation is not an origin", in: say("Change my Atlanta flight HAT030.", "Flight HAT030 is part of your original reservation, so we need to address it before the change to the Atlanta segment."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "says it will read what the record shows", in: say("Please cancel reservation NO6JO3, my plans changed.", "I need to check whether the reservation was made within the last day. Let me look up the reservation details."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		// (A delay's certificate waits for a change or cancellation: see
		// TestCheckDelayCertificateOffer.)
		{name: "compensation the user asked for", in: say("My flight was cancelled. Can I get some compensation?", "As a gold member, I can offer you a certificate as compensation for the cancellation."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a human agent said to have the flexibility to bend a denial", in: say("I need a full refund for my basic economy ticket. Please make an exception.", "I cannot refund it under the policy. I can transfer you to a human agent who might have more flexibility in handling your request."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "I can transfer you to a human agent who might have more flexibility in handling your request", where: "no power to make exceptions"},
		{name: "the flexibility said of the human in the next sentence", in: say("Is there any supervisor I could speak to? There has to be some flexibility.", "I can transfer you to a human agent who can further assist you with your request. They may have more flexibility in handling your situation."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "They may have more flexibility in handling your situation", where: "no power to make exceptions"},
		{name: "flexibility said of no human", in: say("Can I change the date later?", "Economy tickets can be changed later. They may have more flexibility than basic economy."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a balance the user's details list, denied", in: say("What is the total balance of my gift cards?", "I'm unable to provide information about the total balance of your gift cards. You may want to check your user profile."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "I'm unable to provide information about the total balance of your gift cards", status: StatusContradiction, where: "contradicted by the visible tools; the user's details"},
		{name: "a lookup by email no tool makes, offered", in: say("I don't have my user id.", "No problem! If you can provide your email address, I can look up your user ID for you."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "If you can provide your email address, I can look up your user ID for you", status: StatusContradiction, where: "no tool looks a user up by email"},
		{name: "the reservation id insisted on after the user said they do not have it", in: say("I don't have the reservation ID with me. My user id is mia_li_3668.", "Unfortunately, I need the reservation ID to proceed with the cancellation. Once you have it, let me know."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			arg: "Unfortunately, I need the reservation ID to proceed with the cancellation", where: "the policy requires no reservation id"},
		{name: "both ids insisted on after the user said they do not have them", in: say("I'm sorry, I don't have those with me right now. Is there another way to find my booking?", "Unfortunately, I need the user ID and reservation ID to access and modify your booking details. Please try to locate this information."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "Unfortunately, I need the user ID and reservation ID to access and modify your booking details", where: "do not have the reservation id"},
		{name: "the reservation id asked for, a lookup offered in the next sentence", in: say("I don't have the reservation ID with me. My user id is mia_li_3668.", "To proceed, I need the reservation ID. If you don't have it, I can look it up for you."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the reservation id asked for first", in: say("I want to cancel a trip. My user id is mia_li_3668.", "To proceed with the cancellation, I need the reservation ID."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "fees or taxes invented for a price gap", in: say("Why is the total $375 and not $299?", "It seems there was an additional $76 in fees or taxes that were not initially accounted for."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "know no fees or taxes"},
		{name: "no fees, as the policy has none", in: say("Are there fees for the change?", "There are no extra fees for making the change itself; only the fare difference applies."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "costs said to be waived by insurance", in: say("I have travel insurance.", "The change fees have been waived due to your travel insurance."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "it waives no cost of a change"},
		{name: "insurance said not to waive the difference", in: say("Does my insurance waive the fare difference?", "Travel insurance does not waive the fare difference of a change."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a seat arrangement no tool can make, promised", in: say("Book HAT271 for two; we want an aisle and a middle seat together.", "- **Seats**: Aisle and middle seat together\n\nShall I proceed with the booking?"),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "no tool assigns or selects seats"},
		{name: "seats said to be out of reach", in: say("Book HAT271 for two; we want an aisle and a middle seat together.", "I'm unable to assign seats, so I cannot guarantee an aisle and a middle seat together."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a human agent offered for cancelling a passenger, which even a human cannot do", in: say("I need to cancel a passenger from my upcoming flights.", "I cannot assist with canceling a passenger from an existing reservation. You may need to contact a human agent for further assistance."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "even a human agent cannot assist"},
		{name: "a certificate's remainder said to be kept", in: say("Can I use my $500 certificate for the $299 booking?", "After using your certificate for this booking, you will have $201 remaining on the certificate."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "After using your certificate for this booking, you will have $201 remaining on the certificate", status: StatusContradiction, where: "the remaining amount of a travel certificate is not refundable"},
		{name: "a certificate's balance listed before use", in: say("Which payment methods do I have? A $500 certificate, I think.", "You can pay with:\n- Certificate (Remaining: $500)\n- A credit card"),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the rest charged to a card", in: say("Use my $500 certificate and my Visa for the $799 trip.", "After applying the $500 certificate, the remaining balance of $299 will be charged to your Visa."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the email asked in one sentence, the lookup promised in the next", in: say("I don't remember my user id.", "Could you please provide your email address? This will help me locate your user ID."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "This will help me locate your user ID", status: StatusContradiction, where: "no tool looks a user up by email"},
		{name: "the user id asked for, no email", in: say("I want to change my flight.", "Could you please provide your user ID? This will help me look up your user details."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "balances the user's details list, asked of the user", in: say("How much will go on my MasterCard?", "I'll need the following:\n\n1. The total cost of the trip.\n2. The amounts available on your certificates and gift cards.\n\nOnce you provide these, I can calculate it."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "The amounts available on your certificates and gift cards", status: StatusContradiction, where: "asks the user for gift card or certificate balances"},
		{name: "a balance stated, not asked", in: say("My gift card has $200 on it. Can it pay the $368?", "The balance on your gift card is $200, which is not enough to cover the $368."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the user sent to their email for a reservation id", in: say("I am mia_li_3668 and I want to cancel a trip, but I don't have the reservation id.", "Please check your email or account for the reservation id, and once you have it, I can assist you further."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "list the user's reservation ids"},
		{name: "the user sent to insurance providers", in: say("Can I add insurance now?", "Insurance cannot be added after booking. I recommend reaching out to travel insurance providers directly."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "the policy names no other channel"},
		{name: "one passenger upgraded alone", in: say("Upgrade Noah to business, not Chen.", "The cost to upgrade only one passenger, Noah, to business class for both flights is $600."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "one cabin for all its passengers"},
		{name: "the user sent to the airline directly", in: say("Why is HAT039 delayed?", "I don't know why. You may want to check with the airline directly or at the airport."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "the policy names no other channel"},
		{name: "the user sent to the airline's own website for what the tools show", in: say("My flight HAT039 is delayed. What is going on?", "I recommend checking the airline's official website for the most up-to-date information on your flight."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "names no other channel"},
		{name: "a transfer offered for what the agent cannot do, with no exception promised", in: say("I need to cancel just one segment of my trip.", "I can only cancel a whole reservation. I can transfer you to a human agent who may be able to assist you further."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a human agent who may help, after a policy denial", in: say("Please cancel NO6JO3, my plans changed.", "NO6JO3 is not eligible for cancellation under the policy. I recommend contacting a human agent who may be able to assist you further."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "I recommend contacting a human agent who may be able to assist you further", where: "no power to grant it"},
		{name: "several certificates promised for one booking", in: say("I have three certificates. Can I use them for the new flight?", "You can use your certificates and gift cards for the new booking."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "at most one travel certificate"},
		{name: "one certificate for one booking", in: say("I have three certificates. Can I use them for the new flight?", "You can use only one of your certificates for the new booking."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a human agent offered for changing the number of passengers", in: say("Please remove my son from the reservation.", "I'm unable to remove a passenger from the reservation. You may need to contact a human agent for further assistance."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "You may need to contact a human agent for further assistance", where: "even a human agent cannot"},
		{name: "travel insurance said to be non-refundable", in: say("I want a refund for the travel insurance on H8Q05L.", "I'm sorry, but the travel insurance is non-refundable as per our policy."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "does not make travel insurance non-refundable"},
		{name: "a certificate's rule said of gift cards", in: say("Why aren't cancellations refunded to gift cards anymore?", "Refunds are processed back to the original payment method. However, for gift cards, the remaining amount is not refundable."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			arg: "However, for gift cards, the remaining amount is not refundable", where: "a travel certificate's"},
		{name: "a refund to a gift card, stated", in: say("Where does my refund go?", "The refund goes back to your gift card, which cannot be used for anything else."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the booking's payment rule for a change", in: say("Please change my reservation to business. Can I pay with certificates and gift cards before my card?", "Yes, for a reservation, you can use at most one travel certificate, at most one credit card, and at most three gift cards."),
			msg: 2, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "a change of flights is paid with one gift card or credit card"},
		{name: "the booking's payment rule for a booking", in: say("I want to book a new flight. Can I pay with certificates and gift cards?", "Yes, you can use at most one travel certificate, at most one credit card, and at most three gift cards."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a refund of insurance refused: says what the agent cannot do", in: say("I want a refund for the travel insurance on H8Q05L.", "I'm sorry, but I cannot process a refund for travel insurance."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the same refusal after calling insurance non-refundable", in: traj("airline").sys(airlinePolicy).user("I want a refund for the travel insurance on H8Q05L.").
			say("I'm sorry, but once travel insurance is purchased, it cannot be canceled or refunded.").user("Can you make an exception?").
			say("I'm unable to process a refund for travel insurance or make exceptions to this policy.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "repeats a rule the policy does not have"},
		{name: "a transfer summary reporting the insurance refusal", in: traj("airline").sys(airlinePolicy).user("I want a refund for the travel insurance on H8Q05L. Get me a supervisor.").
			call("transfer_to_human_agents", `{"summary":"The user is requesting a refund for non-refundable travel insurance."}`, "Transfer successful").build(),
			msg: 2, call: 0, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a transfer summary asking for an exception", in: traj("airline").sys(airlinePolicy).user("Please cancel my basic economy trip, I changed my mind.").
			say("Basic economy without insurance cannot be cancelled after 24 hours.").user("Then get me someone who can.").
			call("transfer_to_human_agents", `{"summary":"User requests a cancellation. Needs assistance beyond policy limitations."}`, "Transfer successful").build(),
			msg: 4, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "Needs assistance beyond policy limitations", where: "not handed over"},
		{name: "a transfer summary for what the tools cannot do", in: traj("airline").sys(airlinePolicy).user("I need to cancel just one segment of my trip.").
			say("I can only cancel a whole reservation.").user("Then transfer me.").
			call("transfer_to_human_agents", `{"summary":"User wants to cancel one segment of a round trip; the agent can only cancel whole reservations."}`, "Transfer successful").build(),
			msg: 4, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a transfer offered after the user asked for an exception", in: traj("airline").sys(airlinePolicy).user("Please cancel my basic economy trip.").
			say("Basic economy without insurance cannot be cancelled after 24 hours.").user("Can I talk to a supervisor who could make an exception?").
			say("I will transfer you to a human agent who may be able to assist you further with your request.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "no power to grant it"},
		{name: "a human agent who may help, a turn after the denial", in: traj("airline").sys(airlinePolicy).user("Please cancel my basic economy trip.").
			say("I'm unable to cancel it: basic economy without insurance cannot be cancelled after 24 hours.").user("Can anything be done?").
			say("Given the circumstances, I recommend speaking with a human agent who may be able to assist you further.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "no power to grant it"},
		{name: "a cancellation promised regardless of the refund", in: say("I want to cancel my trips.", "Once you have the reservation IDs, I'll assist you with the cancellation process, regardless of the refund eligibility."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "no action cancels without a refund"},
		{name: "a reservation split across two cabins", in: say("Can I upgrade only my outbound flight?", "This option involves flying business class from IAH to LAS and economy class from LAS to SEA."),
			msg: 2, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "same across all the flights"},
		{name: "a split cabin refused, as the policy says", in: say("Can I upgrade only my outbound flight?", "Flying business class for the outbound and economy class for the return is not possible: the cabin must be the same."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the number of passengers: even a human agent cannot help, as the policy says", in: say("Please remove my son from the reservation.", "I cannot remove a passenger; this is something that even a human agent cannot assist with."),
			msg: 2, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestCheckRouteKept: a flight change must keep the reservation's origin,
// destination and trip type; each new flight's endpoints come from the
// visible result that listed it.
func TestCheckRouteKept(t *testing.T) {
	search := `[{"flight_number":"HAT004","origin":"ATL","destination":"DFW","date":"2024-05-20"},{"flight_number":"HAT142","origin":"DFW","destination":"EWR","date":"2024-05-20"},{"flight_number":"HAT150","origin":"DFW","destination":"PHL","date":"2024-05-20"}]`
	rec := `{"reservation_id":"M05KNL","user_id":"mia_li_3668","origin":"ATL","destination":"PHL","flight_type":"one_way","cabin":"economy","flights":[{"origin":"ATL","destination":"PHL","flight_number":"HAT110","date":"2024-05-20","price":150}],"payment_history":[{"payment_id":"credit_card_4421486","amount":150}],"created_at":"2024-05-14T09:00:00"}`
	change := func(second string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Move M05KNL to flights via DFW on May 20, charge the original card.").
			call("get_reservation_details", `{"reservation_id":"M05KNL"}`, rec).
			call("search_onestop_flight", `{"origin":"ATL","destination":"PHL","date":"2024-05-20"}`, search).
			say("I will change M05KNL to HAT004 and "+second+" on 2024-05-20 in economy, at no additional cost. Shall I proceed?").user("Yes.").
			call("update_reservation_flights", `{"reservation_id":"M05KNL","cabin":"economy","flights":[{"flight_number":"HAT004","date":"2024-05-20"},{"flight_number":"`+second+`","date":"2024-05-20"}],"payment_id":"credit_card_4421486"}`, rec).build()
	}
	runCheckCases(t, []checkCase{
		{name: "the change ends somewhere else", in: change("HAT142"),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", where: "from ATL to PHL, while the new flights go ATL-DFW-EWR"},
		{name: "the change keeps the route", in: change("HAT150"),
			msg: 8, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
	})
	// A booking states its own route: a round trip needs flights back.
	search2 := `[{"flight_number":"HAT004","origin":"ATL","destination":"DFW","date":"2024-05-20"},{"flight_number":"HAT150","origin":"DFW","destination":"PHL","date":"2024-05-20"},{"flight_number":"HAT230","origin":"PHL","destination":"ATL","date":"2024-05-24"}]`
	book := func(trip string, flights ...string) *Trajectory {
		fl := ""
		for i, f := range flights {
			if i > 0 {
				fl += ","
			}
			fl += `{"flight_number":"` + f + `","date":"2024-05-20"}`
		}
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Book me ATL to PHL, "+strings.ReplaceAll(trip, "_", " ")+", economy, on my card credit_card_4421486, no bags, no insurance.").
			call("search_onestop_flight", `{"origin":"ATL","destination":"PHL","date":"2024-05-20"}`, search2).
			say("I will book "+strings.Join(flights, ", ")+" in economy for $300 on credit_card_4421486. Shall I proceed?").user("Yes.").
			call("book_reservation", `{"user_id":"mia_li_3668","origin":"ATL","destination":"PHL","flight_type":"`+trip+`","cabin":"economy","flights":[`+fl+`],"passengers":[{"first_name":"Mia","last_name":"Li","dob":"1990-04-05"}],"payment_methods":[{"payment_id":"credit_card_4421486","amount":300}],"total_baggages":0,"nonfree_baggages":0,"insurance":"no"}`, `{"reservation_id":"HATHAT"}`).build()
	}
	// The fixture's booking is unsupported in other ways too (no user
	// details read, a price the search does not give): only the route
	// finding is looked at here.
	for _, tt := range []struct {
		name string
		in   *Trajectory
		want string // "" = no route finding
	}{
		{"a round trip booked with no flight back", book("round_trip", "HAT004", "HAT150"), "the call books a round trip from ATL to PHL, while the new flights go ATL-DFW-PHL"},
		{"a one-way trip booked as it flies", book("one_way", "HAT004", "HAT150"), ""},
		{"a round trip booked with its flight back", book("round_trip", "HAT004", "HAT150", "HAT230"), ""},
	} {
		d := decisionAt(t, Check(tt.in, nil), 6, 0)
		got := ""
		for _, a := range d.Args {
			if w := a.Where.String(); strings.Contains(w, "the call books") {
				got = w
			}
		}
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: route finding %q, want %q", tt.name, got, tt.want)
		}
		if tt.want != "" && d.Verdict == VerdictPass {
			t.Errorf("%s: verdict pass", tt.name)
		}
	}
}

// TestCheckTransferCarriesOffer: a transfer that follows a reply offering
// a human agent to bend a denial carries the offer out and is ambiguous
// too; a transfer after a plain offer passes, and so does one after a
// later reply that made no such offer.
func TestCheckTransferCarriesOffer(t *testing.T) {
	transfer := `{"summary":"User wants to cancel reservation NO6JO3."}`
	after := func(offer string, more ...string) *Trajectory {
		b := traj("airline").sys(airlinePolicy).user("Please cancel NO6JO3, my plans changed.").say(offer).user("Yes, please transfer me.")
		for _, m := range more {
			b = b.say(m).user("Yes.")
		}
		return b.call("transfer_to_human_agents", transfer, "Transfer successful").build()
	}
	denial := "NO6JO3 is not eligible for cancellation under the policy. I recommend contacting a human agent who may be able to assist you further. Shall I transfer you?"
	runCheckCases(t, []checkCase{
		{name: "transfer after an offer to bend a denial", in: after(denial),
			msg: 4, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy", where: "carries out the transfer the reply at message 2 offered: a request the policy denies"},
		{name: "transfer after a plain offer", in: after("I can only cancel a whole reservation. I can transfer you to a human agent who may be able to assist you further."),
			msg: 4, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "transfer after a later reply with no such offer", in: after(denial, "I will transfer you now so a human agent can look at your trip."),
			msg: 6, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestCheckBagAllowance: the count of charged bags follows the policy's
// allowance, from the visible membership, the cabin and the passengers: a
// count the allowance contradicts fails and cites the membership; the
// count it gives is derived; with no membership visible (a reservation
// naming its user is not the user's record) only a count no membership
// gives fails.
func TestCheckBagAllowance(t *testing.T) {
	booking := func(total, nonfree int) string {
		return `{"user_id":"mia_li_3668","origin":"JFK","destination":"SEA","flight_type":"one_way","cabin":"economy","flights":[{"flight_number":"HAT136","date":"2024-05-20"}],` +
			`"passengers":[{"first_name":"Mia","last_name":"Li","dob":"1990-04-05"},{"first_name":"Noah","last_name":"Li","dob":"1992-01-01"}],` +
			`"payment_methods":[{"payment_id":"credit_card_4421486","amount":404}],"total_baggages":` + strconv.Itoa(total) + `,"nonfree_baggages":` + strconv.Itoa(nonfree) + `,"insurance":"no"}`
	}
	book := func(total, nonfree int) *Trajectory {
		return traj("airline").sys(airlinePolicy).
			user("I am mia_li_3668. Book HAT136 on 2024-05-20 in economy for me and Noah Li (1992-01-01), with "+strconv.Itoa(total)+" checked bags, no insurance, card ending in 7447.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("I will book HAT136 for Mia and Noah Li in economy with "+strconv.Itoa(total)+" bags on the card ending in 7447. Shall I proceed?").user("Yes.").
			call("book_reservation", booking(total, nonfree), `{"reservation_id":"HATHAT"}`).build()
	}
	bags := func(read bool, total, nonfree int) *Trajectory {
		b := traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Set NO6JO3 to " + strconv.Itoa(total) + " checked bags, card ending in 7447.")
		if read {
			b = b.call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails)
		}
		return b.call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("I will set NO6JO3 to "+strconv.Itoa(total)+" checked bags on the card ending in 7447. Shall I proceed?").user("Yes.").
			call("update_reservation_baggages", `{"reservation_id":"NO6JO3","total_baggages":`+strconv.Itoa(total)+`,"nonfree_baggages":`+strconv.Itoa(nonfree)+`,"payment_id":"credit_card_4421486"}`, reservationNO6).build()
	}
	runCheckCases(t, []checkCase{
		// A regular member: one free bag per economy passenger, two here.
		{name: "booking charges a free bag", in: book(3, 2),
			msg: 6, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "nonfree_baggages", status: StatusContradiction,
			where: "3 total_baggages - 1 free × 2 passengers = 1, not 2 (membership regular at message 3"},
		{name: "booking charges what the allowance leaves", in: book(3, 1),
			msg: 6, call: 0, verdict: VerdictAmbiguous, absent: ReasonContradiction, arg: "nonfree_baggages", status: StatusDerived, where: "= 1"},
		{name: "booking charges nothing for free bags", in: book(2, 0),
			msg: 6, call: 0, verdict: VerdictAmbiguous, absent: ReasonContradiction, arg: "nonfree_baggages", status: StatusDerived},
		{name: "change reads cabin and passengers off the reservation", in: bags(true, 3, 0),
			msg: 8, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "nonfree_baggages", status: StatusContradiction,
			where: "cabin economy in the record at message 5"},
		{name: "change charges what the allowance leaves", in: bags(true, 3, 2),
			msg: 8, call: 0, verdict: VerdictPass, absent: ReasonContradiction, arg: "nonfree_baggages", status: StatusDerived},
		{name: "membership never read", in: bags(false, 3, 0),
			msg: 6, call: 0, verdict: VerdictAmbiguous, absent: ReasonContradiction, arg: "nonfree_baggages", status: StatusLiteral},
		// Every membership gives an economy passenger at least one free bag.
		{name: "membership never read, a charge no membership allows", in: bags(false, 3, 3),
			msg: 6, call: 0, verdict: VerdictFail, reason: ReasonContradiction, arg: "nonfree_baggages", status: StatusContradiction,
			where: "whatever the membership (none is visible), the policy's 1 to 3 free per economy passenger leave 0 to 2 of 3 total_baggages"},
	})
	// Replies that state an allowance: the tier and class the sentence
	// names, else the membership read and the latest booking's cabin and
	// passengers.
	says := func(reply string) *Trajectory {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. How many bags can I bring?").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say(reply).build()
	}
	booked := func(reply string) *Trajectory {
		b := book(2, 0)
		b.Messages = append(b.Messages, Message{Role: RoleAssistant, Content: reply})
		return b
	}
	runCheckCases(t, []checkCase{
		{name: "reply names tier and class the policy does not match", in: says("As a gold member, you are entitled to 2 free checked bags for business class."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			where: "membership gold gives 3 free per business passenger, not 2"},
		{name: "reply reads the membership from the record", in: says("You get 2 free checked bags per economy passenger."),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "membership regular gives 1"},
		{name: "reply that states the allowance right", in: says("As a regular member, you get 1 free checked bag per economy passenger."),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "reply that compares classes", in: says("Silver members get 2 free checked bags in economy and 3 in business."),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "reply after a booking counts its passengers", in: booked("Checked bag allowance: 2 free checked bags."),
			msg: 8, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "reply after a booking that overstates the allowance", in: booked("Checked bag allowance: 3 free checked bags."),
			msg: 8, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "(2 passengers in the call at message 6), not 3"},
	})
	// The finding cites the membership in the user's record.
	res := Check(book(3, 2), nil)
	for _, d := range res.Decisions {
		if d.Message != 6 || d.Call != 0 {
			continue
		}
		a, _ := argAt(d, "nonfree_baggages")
		r := a.Where.Record
		if r == nil || r.Message != 3 || r.Start < 0 || book(3, 2).Messages[3].Content[r.Start:r.End] != "regular" {
			t.Errorf("contradiction cites %+v, want the membership in message 3", r)
		}
	}
}

// TestCheckLastFourClaims: a reply that names a card by its last four
// digits needs them in a visible tool result (a last_four, an id ending
// in them); digits only the user said do not show which card was used.
func TestCheckLastFourClaims(t *testing.T) {
	charged := func(read bool, digits string) *Trajectory {
		b := traj("airline").sys(airlinePolicy).user("I am mia_li_3668. Add a bag to NO6JO3 and use my credit card ending in 7447.")
		if read {
			b = b.call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails)
		}
		return b.call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6).
			say("The bag fee of $50 has been charged to your credit card ending in " + digits + ".").build()
	}
	runCheckCases(t, []checkCase{
		{name: "digits only the user said", in: charged(false, "7447"),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "ending in 7447", where: "only the user said them"},
		{name: "digits of a listed card", in: charged(true, "7447"),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a gift card by the end of its id", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. I'd like to pay with my gift card.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("I'll use your Gift Card ending in 9776.").build(),
			msg: 4, call: -1, verdict: VerdictPass, arg: "9776", status: StatusNormalized, where: "gift_card_7359776"},
		{name: "a number no id ends in", in: traj("airline").sys(airlinePolicy).user("I am mia_li_3668. How can I pay?").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).
			say("You can pay with your Gift Card ending in 9775.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, arg: "9775", status: StatusUnsupported},
	})
}

// TestCheckFlightStatusFacts: a reply that says a flight was (not)
// cancelled or delayed states a fact only a looked-up status shows; without
// one visible it is ambiguous, with one it passes, and a question passes.
func TestCheckFlightStatusFacts(t *testing.T) {
	read := func() *tb {
		return traj("airline").sys(airlinePolicy).user("I am mia_li_3668. My flight in NO6JO3 was cancelled, I want compensation.").
			call("get_reservation_details", `{"reservation_id":"NO6JO3"}`, reservationNO6)
	}
	runCheckCases(t, []checkCase{
		{name: "no flight status looked up", in: read().say("I've reviewed NO6JO3, and none of the flights were canceled by the airline.").build(),
			msg: 4, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "I've reviewed NO6JO3, and none of the flights were canceled by the airline", where: "no visible tool result shows"},
		{name: "the status was looked up", in: read().call("get_flight_status", `{"flight_number":"HAT136","date":"2024-05-20"}`, "cancelled").
			say("Flight HAT136 of NO6JO3 was cancelled by the airline.").build(),
			msg: 6, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a question about the status", in: read().say("Which flight of NO6JO3 was cancelled?").build(),
			msg: 4, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestCheckIDFromEmail: a user id visible only as the name of an email
// address ("mia_li_3668@example.com" from a user who does not remember the
// id) is a guess, not the id; said as the id anywhere, it is the id.
func TestCheckIDFromEmail(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "only the email's name", in: traj("airline").sys(airlinePolicy).
			user("I don't remember my user id. My email is mia_li_3668@example.com.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 2, call: 0, verdict: VerdictAmbiguous, reason: ReasonWeak, arg: "user_id", status: StatusWeak,
			where: "visible only as the name of an email address"},
		{name: "the id said as well", in: traj("airline").sys(airlinePolicy).
			user("My email is mia_li_3668@example.com and my user id is mia_li_3668.").
			call("get_user_details", `{"user_id":"mia_li_3668"}`, userDetails).build(),
			msg: 2, call: 0, verdict: VerdictPass, absent: ReasonWeak, arg: "user_id", status: StatusLiteral},
	})
}

// TestCheckOrderNumberHash: an order id written with its "#" is the one
// the user typed without it (retail: "W6908222" → "#W6908222").
func TestCheckOrderNumberHash(t *testing.T) {
	lookup := `{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`
	runCheckCases(t, []checkCase{
		{name: "typed without the hash", in: traj("generic").tool("get_order_details", lookup).
			user("The reference number I have for this order is W6908222.").
			call("get_order_details", `{"order_id":"#W6908222"}`, `{"order_id":"#W6908222","status":"delivered"}`).build(),
			msg: 1, call: 0, verdict: VerdictPass, arg: "order_id", status: StatusNormalized},
		{name: "another number", in: traj("generic").tool("get_order_details", lookup).
			user("The reference number I have for this order is W6908223.").
			call("get_order_details", `{"order_id":"#W6908222"}`, `{"order_id":"#W6908222","status":"delivered"}`).build(),
			msg: 1, call: 0, verdict: VerdictFail, arg: "order_id", status: StatusUnsupported},
	})
}

// TestCheckItemRemoval covers the retail profile's claim: the policy has
// no item removal (a pending order's item can only be modified to another
// option of the same product), so a reply offering or announcing one
// fails; saying it is not supported, or transferring it to a human agent,
// which the policy allows for what the actions cannot do, passes.
func TestCheckItemRemoval(t *testing.T) {
	const order = `{"order_id": "#W5061109", "user_id": "chen_johnson_4204", "items": [{"name": "Bluetooth Speaker", "product_id": "4768869376", "item_id": "3254583681", "price": 302.67, "options": {"color": "blue"}}, {"name": "Makeup Kit", "product_id": "5149340237", "item_id": "6254646215", "price": 248.85, "options": {"skin tone": "dark"}}], "status": "pending"}`
	reply := func(text string) *Trajectory {
		return traj("retail").
			user("I am chen_johnson_4204. I no longer need the speaker in order #W5061109.").
			call("get_order_details", `{"order_id":"#W5061109"}`, order).
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "offers to modify the order to remove the item", in: reply("The order is pending, so I can help modify the order to remove the Bluetooth Speaker. Shall I proceed?"),
			msg: 3, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg: "The order is pending, so I can help modify the order to remove the Bluetooth Speaker", where: "the policy has no item removal"},
		{name: "announces the removal", in: reply("I'll proceed with removing the Bluetooth Speaker from your order."),
			msg: 3, call: -1, verdict: VerdictFail, reason: ReasonContradiction},
		{name: "says removal is not supported", in: reply("Removing a single item from a pending order is not supported; I can only exchange it for another option of the same product, or cancel the entire order."),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		// Handing it to a human is no claim of a removal; unasked, whether
		// the tools could not settle it is for a human to judge (see
		// TestCheckRetailUnaskedTransfer).
		{name: "hands the removal to a human agent", in: reply("For the removal of the speaker, I'll transfer you to a human agent."),
			msg: 3, call: -1, verdict: VerdictAmbiguous, absent: ReasonContradiction},
		{name: "a feature named removal", in: reply("The Vacuum Cleaner with Pet Hair Removal is in your order."),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}

// TestCheckNewOrderOffer: no retail tool places an order, so offering to
// place one for the user fails (retail blind set 2 failed one); telling
// the user it is beyond the agent, or giving an item id for the user's
// own order, passes.
// TestCheckRetailTransferAfterDenial: the retail policy transfers only what
// the agent's actions cannot handle. A transfer announced, to a human "who
// can further assist", of a request the agent denied by the policy goes to
// a human, and so does the transfer call that carries it out; a plain
// offer passes.
func TestCheckRetailTransferAfterDenial(t *testing.T) {
	denied := func(text string) *tb {
		return traj("retail").
			user("I am mia_garcia_4516. Return the water bottle of #W5490111 and refund it to my PayPal.").
			say("I'm sorry, but I must adhere to our policy: refunds go to the original payment method or an existing gift card.").
			user("That's ridiculous, let me speak to a human.").
			say(text)
	}
	runCheckCases(t, []checkCase{
		{name: "a denied request handed to a human", in: denied("I'm happy to assist by transferring you to a human agent who can further address your request.").
			call("transfer_to_human_agents", `{"summary":"Mia wants the refund to PayPal, which is against policy."}`, "Transfer successful").build(),
			msg: 3, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			arg: "I'm happy to assist by transferring you to a human agent who can further address your request", where: "no power to grant it"},
		{name: "its transfer call", in: denied("I'm happy to assist by transferring you to a human agent who can further address your request.").
			call("transfer_to_human_agents", `{"summary":"Mia wants the refund to PayPal, which is against policy."}`, "Transfer successful").build(),
			msg: 4, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported},
		{name: "a plain offer", in: denied("If you would like, I can transfer you to a human agent who can assist you further.").build(),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "no denial before it", in: traj("retail").user("I am mia_garcia_4516. I need help with a warranty claim, can I talk to a human?").
			say("Warranty claims are beyond what I can do; I'm transferring you to a human agent who can assist with it.").build(),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

// TestCheckRetailUnaskedTransfer: the retail policy transfers only when
// the user asks for a human or the tools cannot settle the request. A
// transfer announced to a user who never asked, because reads failed with
// temporary errors (503), fails: retrying is within the agent's actions
// (blind retail sets 5, 8 and 10 failed all four such replies), and the
// transfer call that carries it out goes to a human. Announced unasked for
// any other reason, a human judges whether the tools could not settle it;
// an offer, or a transfer the user asked for, passes.
func TestCheckRetailUnaskedTransfer(t *testing.T) {
	errored := func(user, text string) *tb {
		return traj("retail").
			user(user).
			call("get_order_details", `{"order_id":"#W5056519"}`, "Error: 503 Service Unavailable").
			call("get_order_details", `{"order_id":"#W5056519"}`, "Error: 503 Service Unavailable").
			say(text)
	}
	const cancel = "I am yara_muller_8652. Please cancel my pending order #W5056519."
	const announce = "I was unable to retrieve order #W5056519 due to a technical issue. I will now transfer you to a human agent to assist with this order."
	runCheckCases(t, []checkCase{
		{name: "announced after temporary errors", in: errored(cancel, announce).build(),
			msg: 5, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg: "I will now transfer you to a human agent to assist with this order", where: "temporary errors"},
		{name: "its transfer call", in: errored(cancel, announce).
			call("transfer_to_human_agents", `{"summary":"Could not read #W5056519 (503)."}`, "Transfer successful").build(),
			msg: 6, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported},
		{name: "an offer after temporary errors", in: errored(cancel, "I was unable to retrieve order #W5056519 due to a technical issue. Would you like me to transfer you to a human agent, or shall I try again?").build(),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the user asked for a human", in: errored(cancel+" If this fails, get me a human.", announce).build(),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "announced unasked for a request the agent calls beyond it", in: traj("retail").user(cancel).
			say("Cancelling part of a bundle is outside the current system limitations; I will transfer you to a human agent who can assist.").build(),
			msg: 1, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, absent: ReasonContradiction,
			where: "for a human to judge"},
	})
}

// TestCheckOtherOrderAddress: the user's orders, read with
// get_order_details, give their shipping addresses, so a reply saying the
// agent cannot use the address of another order (retail task97, "the
// policy of not using information from other orders"; task33) is
// contradicted by the tools.
func TestCheckOtherOrderAddress(t *testing.T) {
	reply := func(text string) *Trajectory {
		return traj("retail").
			user("I am yusuf_li_7255. Ship #W6750959 to my NYC address instead; my other order already went there.").
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "a rule against other orders' addresses", in: reply("I'm sorry, but I must adhere to the policy of not using information from other orders or making assumptions about address details."),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg: "I'm sorry, but I must adhere to the policy of not using information from other orders or making assumptions about address details", where: "gives each order's shipping address"},
		{name: "cannot access them", in: reply("I also can't access address details from recent orders to pre-fill them."),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonContradiction},
		{name: "proposes it for a yes", in: reply("I can look up the address from your other order and use it once you confirm it is the right one."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "not without the user's yes", in: reply("I cannot use the address from another order unless you confirm it."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		// task33: the user then asks for a human, and the transfer carries
		// the refusal out.
		{name: "the transfer the user then asked for", in: func() *Trajectory {
			tr := traj("retail").
				user("I am yusuf_li_7255. Ship #W6750959 to my NYC address instead; my other order already went there.").
				say("I also can't access address details from recent orders to pre-fill them.").
				user("Then transfer me to a human, please.").
				call("transfer_to_human_agents", `{"summary":"The user wants the address of another order used."}`, "Transfer successful").build()
			tr.Messages[3].Content, tr.Messages[3].ContentNull = "I'm happy to transfer you.", false
			return tr
		}(),
			msg: 3, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, where: "carries out the transfer the reply at message 1 offered"},
	})
}

func TestCheckNewOrderOffer(t *testing.T) {
	reply := func(text string) *Trajectory {
		return traj("retail").
			user("I am chen_johnson_4204. Please reinstate my cancelled order #W5061109, I need the speaker.").
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "offers to place a new order", in: reply("A cancelled order cannot be reinstated. Alternatively, I can assist you in placing a new order for the same items."),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg: "Alternatively, I can assist you in placing a new order for the same items", where: "no tool places an order"},
		{name: "happy to assist with a new order", in: reply("Your order is cancelled. If you would like to place a new order in the future, I'm happy to assist."),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg: "If you would like to place a new order in the future, I'm happy to assist", where: "no tool places an order"},
		{name: "helps the user place the order", in: reply("Your order is cancelled. I can assist you in checking if the speaker is available so you can place a new order for it."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "says a new order is beyond the agent", in: reply("A cancelled order cannot be reinstated, and placing a new order is outside the scope of what I can do."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "gives the item id for the user's own order", in: reply("A cancelled order cannot be reinstated. The details of #W5061109 are for your reference if you place a new order yourself."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}

// TestCheckCallAsText: a reply that writes a tool call out instead of
// making it (retail task 55: "<function_call>{"action":
// "find_user_id_by_email", …}") ran nothing: it fails as a call with no
// observation, while replies that only name a tool pass.
func TestCheckCallAsText(t *testing.T) {
	reply := func(text string) *Trajectory {
		return traj("retail").user("My email is amelia.silva7872@example.com.").say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "a call written as text", in: reply("Nofunction_call>{\n    \"action\": \"find_user_id_by_email\",\n    \"action_input\": {\n        \"email\": \"amelia.silva7872@example.com\"\n    }\n}</function_call>"),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonNoObservation},
		{name: "a call in a function tag", in: reply(`<function=find_user_id_by_email>{"email": "amelia.silva7872@example.com"}</function>`),
			msg: 1, call: -1, verdict: VerdictFail, reason: ReasonNoObservation},
		{name: "a tool named in prose", in: reply("I'll look up your user id with find_user_id_by_email now."),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonNoObservation},
		{name: "braces without a tool", in: reply(`Here is what I have: {"email": "amelia.silva7872@example.com"}. Is that right?`),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonNoObservation},
		{name: "a tool the agent cannot see", in: reply(`{"action": "delete_account", "action_input": {"email": "amelia.silva7872@example.com"}}`),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonNoObservation},
	})
}

// TestCheckFoundWithoutRead: a reply that says it found the user's records
// before any tool call returned something other than an error is
// contradicted by the visible tools (retail task 55); after a read that
// answered, or said as a plan, it passes.
func TestCheckFoundWithoutRead(t *testing.T) {
	runCheckCases(t, []checkCase{
		{name: "found after only a failed lookup", in: traj("retail").user("My email is amelia.silva7872@example.com.").
			call("find_user_id_by_email", `{"email":"amelia.silva7872@example.com"}`, "Error: user not found").
			user("Did you find me?").
			say("Thank you for your patience. I've located your account. How can I help with your orders?").build(),
			msg: 4, call: -1, verdict: VerdictFail, reason: ReasonContradiction, arg: "I've located your account", where: "no tool call has returned"},
		{name: "found after a lookup that answered", in: traj("retail").user("My email is amelia.silva7872@example.com.").
			call("find_user_id_by_email", `{"email":"amelia.silva7872@example.com"}`, "amelia_silva_7726").
			say("I've located your account. How can I help with your orders?").build(),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a plan, not a report", in: traj("retail").user("My email is amelia.silva7872@example.com.").
			say("Once I have located your account, I can help with your orders.").build(),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}

// TestClaimFindingOnce: a sentence two claims flag reads once in the
// evidence, with the finding that fails (before, the passenger-name ban
// also drew the blanket-ban note on the same span).
func TestClaimFindingOnce(t *testing.T) {
	tr := traj("airline").sys(airlinePolicy).user("Please change the passenger Mei Lee to Mei Garcia.").
		say("Unfortunately, with basic economy reservations, changes to passenger names are not allowed.").build()
	res := Check(tr, nil)
	d := decisionAt(t, res, 2, -1)
	n := 0
	for _, a := range d.Args {
		if strings.HasPrefix(a.Path, "content[") && a.Status != StatusLiteral && a.Status != StatusNormalized {
			n++
			if a.Status != StatusContradiction {
				t.Errorf("finding %s = %s, want the contradiction", a.Path, a.Status)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d claim findings on the sentence, want 1: %+v", n, d.Args)
	}
}
