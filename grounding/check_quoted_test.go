package grounding

import (
	"slices"
	"testing"
)

// TestCheckQuotedPhrases: a phrase a customer-service reply quotes must be
// in a visible message (retail task62 answered a trivia question with
// '"The Raven" by Edgar Allan Poe'); quotes of the user, the policy or a
// tool result pass, and profiles without quoted_phrases (SWE) do not read
// quotes.
func TestCheckQuotedPhrases(t *testing.T) {
	const order = `{"order_id": "#W6750959", "status": "pending (item modified)"}`
	runCheckCases(t, []checkCase{
		{name: "a title nobody said", in: traj("retail").user(`Guess the poem: "Once upon a midnight dreary, while I pondered, weak and weary"?`).
			say(`The poem that starts with "Once upon a midnight dreary, while I pondered, weak and weary" is “The Raven” by Edgar Allan Poe.`).build(),
			msg: 1, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported, status: StatusUnsupported, arg: "The Raven",
			where: "a phrase the reply quotes that no visible message holds"},
		{name: "a status the tool gave", in: traj("retail").user("I am yusuf_li_7255. What is the status of #W6750959?").
			call("get_order_details", `{"order_id":"#W6750959"}`, order).
			say(`Order #W6750959 is in "Pending (Item Modified)" status.`).build(),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "the user's own words", in: traj("retail").user("I am yusuf_li_7255. I want the cancellation reason to be no longer needed.").
			say(`I will cancel it with the reason "no longer needed."`).build(),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "quotes open across a paragraph", in: traj("retail").user("I am yusuf_li_7255. Hello.").
			say("He said \"hello\nand then \"hello\" again.").build(),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "a profile that does not read quotes", in: traj("generic").user("Fix the failing test.").
			say(`I will run "pytest -x" next.`).build(),
			msg: 1, call: -1, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}

func TestQuotedSpans(t *testing.T) {
	text := "a \"one\" b “two” c \"three\nfour\" d"
	var got []string
	for a, b := range quotedSpans(text) {
		got = append(got, text[a:b])
	}
	if want := []string{"one", "two"}; !slices.Equal(got, want) {
		t.Errorf("quotedSpans = %q, want %q", got, want)
	}
}
