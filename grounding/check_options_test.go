package grounding

import "testing"

// TestCheckItemOptions: the options a reply states for an item it names by
// id must be the item's (retail task 107 listed the L T-shirt 3234800602
// as "Style: Crew Neck"; its record says v-neck, and the user took the
// exchange on that description).
func TestCheckItemOptions(t *testing.T) {
	product := `{"name": "T-Shirt", "product_id": "9523456873", "variants": {` +
		`"9354168549": {"item_id": "9354168549", "options": {"color": "red", "size": "XXL", "material": "cotton", "style": "crew neck"}, "available": true, "price": 46.85}, ` +
		`"3234800602": {"item_id": "3234800602", "options": {"color": "red", "size": "L", "material": "cotton", "style": "v-neck"}, "available": true, "price": 46.66}}}`
	reply := func(text string) *Trajectory {
		return traj("retail").user("I want to exchange my T-shirt 9354168549 for a smaller one of product 9523456873.").
			call("get_product_details", `{"product_id":"9523456873"}`, product).
			say(text).build()
	}
	runCheckCases(t, []checkCase{
		{name: "another style in the item's parentheses", in: reply("- **New item**: T-Shirt (Item ID: 3234800602, Color: Red, Size: L, Material: Cotton, Style: Crew Neck)"),
			msg: 3, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction, arg: "Style: Crew Neck",
			where: `states style "Crew Neck" for item 3234800602, but its record (message 2) gives style "v-neck"`},
		{name: "in prose, inside the parentheses", in: reply("I can exchange it for the T-shirt (Item ID: 3234800602, Style: Crew Neck, Price: $46.66)."),
			msg: 3, call: -1, verdict: VerdictFail, reason: ReasonContradiction},
		{name: "the item's own options", in: reply("- T-Shirt (Item ID: 3234800602) - Options: Color: Red, Size: L, Material: Cotton, Style: V-Neck - Price: $46.66"),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "prose about another item outside the parentheses", in: reply("Your current item (Item ID: 9354168549, Price: $46.85) is red; the other variant (style: v-neck) is cheaper."),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a line naming two items", in: reply("- Exchange 9354168549 for 3234800602, Style: Crew Neck"),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		// What the task107 reply actually said: the style was in the
		// list's lead-in, not the item's line.
		{name: "a lead-in giving the listed items a style one lacks", in: reply("I found the following smaller sizes in the same color (red) and material (cotton) with a crew neck style:\n\n- Size L (Item ID: 3234800602) - Available, Price: $46.66\n\nWould you like it?"),
			msg: 3, call: -1, verdict: VerdictFail, reason: ReasonContradiction, status: StatusContradiction,
			arg:   "I found the following smaller sizes in the same color (red) and material (cotton) with a crew neck style:",
			where: `says the items it lists have style "crew neck", but item 3234800602's record (message 2) gives style "v-neck"`},
		{name: "a lead-in the listed item matches", in: reply("I found the following smaller sizes in the same color (red) and material (cotton):\n- Size L (Item ID: 3234800602), Price: $46.66"),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a lead-in comparing with the current item", in: reply("Here are the variants in the same material but other than your current crew neck style:\n- Size L (Item ID: 3234800602), Price: $46.66"),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
		{name: "a lead-in whose sentence before names the current style", in: reply("Your current shirt is a crew neck. These come in the same color (red):\n- Size L (Item ID: 3234800602), Price: $46.66"),
			msg: 3, call: -1, verdict: VerdictPass, absent: ReasonContradiction},
	})
}
