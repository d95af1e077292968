package grounding

import "testing"

// TestCheckTransferAfterFailedWrite: a transfer right after a write failed
// hands the failed request over, and whether the agent could have fixed it
// (retail task98: the address change that "non-pending order cannot be
// modified" refused; airline task8-trial1: the booking whose error stated
// the total) is for a human to judge; so is the reply announcing it in the
// same message. After a write that succeeded, a write that failed and was
// then redone, or a failed read, the transfer the user asked for passes.
func TestCheckTransferAfterFailedWrite(t *testing.T) {
	const order = `{"order_id": "#W6750959", "user_id": "yusuf_li_7255", "items": [{"name": "Bluetooth Speaker", "product_id": "4768869376", "item_id": "3254583681", "price": 302.67, "options": {"color": "blue"}}], "status": "pending"}`
	const address = `{"order_id":"#W6750959","address1":"476 Maple Drive","address2":"Suite 432","city":"New York","state":"NY","country":"USA","zip":"10093"}`
	// base: the user asks for the address change, says yes, the write
	// runs with obs, then the user asks for a human.
	base := func(obs string) *tb {
		return traj("retail").
			user("I am yusuf_li_7255. Please change the shipping address of #W6750959 to 476 Maple Drive, Suite 432, New York, NY 10093, USA.").
			call("get_order_details", `{"order_id":"#W6750959"}`, order).
			say("I will change the shipping address of order #W6750959 to 476 Maple Drive, Suite 432, New York, NY, 10093, USA. Shall I proceed?").
			user("Yes.").
			call("modify_pending_order_address", address, obs)
	}
	// handover puts the transfer's announcement and call in one message,
	// as the logs do, and returns the trajectory.
	handover := func(b *tb, text string) *Trajectory {
		b = b.user("Please transfer me to a human agent.").
			call("transfer_to_human_agents", `{"summary":"The user wants the address of #W6750959 changed."}`, "Transfer successful")
		tr := b.build()
		m := &tr.Messages[len(tr.Messages)-2]
		m.Content, m.ContentNull = text, false
		return tr
	}
	const announce = "I'm sorry about this. I'll be happy to transfer you to a human agent for further assistance with the address."
	failed := base("Error: non-pending order cannot be modified")
	runCheckCases(t, []checkCase{
		{name: "the transfer of the write that failed", in: handover(base("Error: non-pending order cannot be modified"), announce),
			msg: 8, call: 0, verdict: VerdictAmbiguous, reason: ReasonUnsupported, arg: "policy",
			where: `hands to a human the modify_pending_order_address that failed at message 6 ("Error: non-pending order cannot be modified")`},
		{name: "the reply announcing it", in: handover(failed, announce),
			msg: 8, call: -1, verdict: VerdictAmbiguous, reason: ReasonUnsupported,
			arg: "I'll be happy to transfer you to a human agent for further assistance with the address", where: "announces the transfer this message makes"},
		{name: "after a write that succeeded", in: handover(base(order), announce),
			msg: 8, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "after the failed write was redone", in: handover(base("Error: non-pending order cannot be modified").
			say("Let me try that again.").
			call("modify_pending_order_address", address, order), announce),
			msg: 11, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
		{name: "after a failed read", in: handover(traj("retail").
			user("I am yusuf_li_7255. Where is my order #W6750959?").
			call("get_order_details", `{"order_id":"#W6750959"}`, "Error: order not found"), announce),
			msg: 4, call: 0, verdict: VerdictPass, absent: ReasonUnsupported},
	})
}
