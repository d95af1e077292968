package grounding

import "testing"

// TestCheckOriginalPayment: a reply that names a card by its last four
// digits as an order's original payment method must name one the order's
// payment history paid with (retail task 51 promised a refund to the card
// ending in 6791 where the order was paid with the one ending in 8484).
func TestCheckOriginalPayment(t *testing.T) {
	user := `{"name": {"first_name": "Sofia", "last_name": "Li"}, "payment_methods": {"paypal_8194385": {"source": "paypal", "id": "paypal_8194385"}, ` +
		`"credit_card_3951670": {"source": "credit_card", "brand": "visa", "last_four": "6791", "id": "credit_card_3951670"}, ` +
		`"credit_card_8105988": {"source": "credit_card", "brand": "mastercard", "last_four": "8484", "id": "credit_card_8105988"}, ` +
		`"gift_card_1591784": {"source": "gift_card", "balance": 40, "id": "gift_card_1591784"}}, "orders": ["#W4689314", "#W8855135"]}`
	order := func(id, method string) string {
		return `{"order_id": "` + id + `", "user_id": "sofia_li_9219", "items": [{"name": "Digital Camera", "item_id": "5996159312", "price": 2895.55}], ` +
			`"status": "delivered", "payment_history": [{"transaction_type": "payment", "amount": 2895.55, "payment_method_id": "` + method + `"}]}`
	}
	reply := func(method, text string) *Trajectory {
		return traj("retail").user("I am sofia_li_9219. I want to return the camera of order #W4689314.").
			call("get_user_details", `{"user_id":"sofia_li_9219"}`, user).
			call("get_order_details", `{"order_id":"#W4689314"}`, order("#W4689314", method)).
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "another card called the original payment method", in: reply("credit_card_8105988", "The refund will go to the original payment method (credit card ending in 6791) or a gift card."),
			msg: 5, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg:   "The refund will go to the original payment method (credit card ending in 6791) or a gift card",
			where: "calls the card ending in 6791 the original payment method, but the record of #W4689314 (message 4) was paid with credit_card_8105988 (ending in 8484)"},
		{name: "the evidence highlights the method that paid", in: reply("credit_card_8105988", "The refund will go to the original payment method (credit card ending in 6791)."),
			msg: 5, call: -1, verdict: VerdictFail, reason: ReasonContradiction, where: "payment_history"},
		{name: "restated after the user's yes", in: reply("credit_card_8105988", "I note that you would like the refund to be processed to the original payment method, which is the credit card ending in 6791."),
			msg: 5, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			where: "was paid with credit_card_8105988 (ending in 8484)"},
		{name: "the card that paid", in: reply("credit_card_8105988", "The refund will go to the original payment method (credit card ending in 8484)."),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the card offered as an alternative", in: reply("credit_card_8105988", "The refund can go to the original payment method or to your Visa ending in 6791."),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a gift card named by the end of its id", in: reply("gift_card_1591784", "The refund will go to the original payment method (gift card ending in 1784)."),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "paid with PayPal, a card named", in: reply("paypal_8194385", "The refund will go to your original form of payment, the card ending in 6791."),
			msg: 5, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			where: "was paid with paypal_8194385"},
		{name: "a method whose details nobody read", in: reply("credit_card_7777777", "The refund will go to the original payment method (credit card ending in 6791)."),
			msg: 5, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "each order's own method", in: traj("retail").user("I am sofia_li_9219. How did I pay for #W4689314 and #W8855135?").
			call("get_user_details", `{"user_id":"sofia_li_9219"}`, user).
			call("get_order_details", `{"order_id":"#W4689314"}`, order("#W4689314", "credit_card_3951670")).
			call("get_order_details", `{"order_id":"#W8855135"}`, order("#W8855135", "paypal_8194385")).
			say("For order #W4689314, the original payment method was a credit card (Visa ending in 6791), and for order #W8855135, it was PayPal.").build(),
			msg: 7, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "the order named before the reply", in: traj("retail").user("I am sofia_li_9219. I want to return the camera of order #W4689314.").
			call("get_user_details", `{"user_id":"sofia_li_9219"}`, user).
			call("get_order_details", `{"order_id":"#W4689314"}`, order("#W4689314", "credit_card_8105988")).
			call("get_order_details", `{"order_id":"#W8855135"}`, order("#W8855135", "credit_card_3951670")).
			say("Order #W4689314 holds the camera.").user("Yes, return it.").
			say("The refund will go to your original payment method, the card ending in 6791.").build(),
			msg: 9, call: -1, verdict: VerdictFail, reason: ReasonContradiction,
			where: "the record of #W4689314 (message 4) was paid with credit_card_8105988 (ending in 8484)"},
	})
}

// TestOriginalPaymentEvidenceSpan: the finding's span is the paying
// method's id in the record, which the review screen highlights.
func TestOriginalPaymentEvidenceSpan(t *testing.T) {
	order := `{"order_id": "#W4689314", "user_id": "sofia_li_9219", "status": "delivered", "payment_history": [{"transaction_type": "payment", "amount": 2895.55, "payment_method_id": "credit_card_8105988"}]}`
	tr := traj("retail").user("I am sofia_li_9219. Return the camera of #W4689314.").
		call("get_user_details", `{"user_id":"sofia_li_9219"}`, `{"payment_methods": {"credit_card_3951670": {"source": "credit_card", "last_four": "6791", "id": "credit_card_3951670"}, "credit_card_8105988": {"source": "credit_card", "last_four": "8484", "id": "credit_card_8105988"}}}`).
		call("get_order_details", `{"order_id":"#W4689314"}`, order).
		say("The refund will go to the original payment method (credit card ending in 6791).").build()
	r := Check(tr, nil)
	for _, d := range r.Decisions {
		if d.Message != 5 {
			continue
		}
		for _, a := range d.Args {
			if a.Status != StatusContradiction {
				continue
			}
			if got := order[a.Where.Start:a.Where.End]; a.Where.Message != 4 || got != "credit_card_8105988" {
				t.Fatalf("evidence at message %d [%d:%d] = %q, want the paying method in message 4", a.Where.Message, a.Where.Start, a.Where.End, got)
			}
			return
		}
	}
	t.Fatal("no contradiction found")
}

func TestOriginalDigits(t *testing.T) {
	phrases := []string{"original payment method", "originally paid"}
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"the original payment method (credit card ending in 6791)", 51, true},
		{"the original payment method, which is the credit card ending in 6791.", 64, true},
		{"you originally paid with the card ending with: 1234", 47, true},
		{"the original payment method or your card ending in 6791", 0, false},
		{"the original payment method (credit card ending in 67910)", 0, false},
		{"the original payment method will be used for the refund, which takes days; card ending in 6791", 0, false},
	} {
		got, ok := originalDigits(tt.in, phrases)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("originalDigits(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
