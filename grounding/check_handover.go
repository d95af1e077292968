package grounding

import (
	"strconv"
	"strings"
)

// A transfer to a human right after a write failed hands the failed
// request over. The error may say what the agent could fix itself (the
// total a payment must add up to, a gift card's balance), what the policy
// denies (a non-pending order cannot be modified), or what no tool can do:
// which one is a reader's judgement, so the transfer goes to a human, and
// so does a reply that announces it in the same message. Blind label sets
// failed such transfers (airline task8-trial1, retail task98) where the
// engine had passed them; a transfer after a write that succeeded, or with
// no write before it, is not concerned.

// failedWriteBefore returns the index in c.calls of the latest write
// before the call at index idx when that write failed, or -1 when the
// latest write succeeded or there was none.
func (c *checker) failedWriteBefore(idx int) int {
	for j := idx - 1; j >= 0; j-- {
		ci := &c.calls[j]
		a := ci.action
		if a == "" { // not decided yet: a call of the message being decided
			a = c.actionOf(c.t.Messages[ci.msg].ToolCalls[ci.call].Name)
		}
		if a != ActionWrite && a != ActionIrreversibleWrite {
			continue
		}
		if ci.err && ci.obs >= 0 {
			return j
		}
		return -1
	}
	return -1
}

// handoverNote says which failed write a transfer hands over.
func (c *checker) handoverNote(w int) string {
	ci := &c.calls[w]
	errText := strings.TrimSpace(c.t.Messages[ci.obs].Content)
	if len(errText) > 120 {
		errText = strings.ToValidUTF8(errText[:120], "") + "…"
	}
	return "hands to a human the " + c.t.Messages[ci.msg].ToolCalls[ci.call].Name + " that failed at message " +
		strconv.Itoa(ci.obs) + " (" + strconv.Quote(errText) + "): whether the agent could fix it, the policy denies it or no tool can do it is for a human to judge"
}

// transferAfterFailedWrite flags the transfer call at index idx of c.calls
// when it follows a failed write.
func (c *checker) transferAfterFailedWrite(d *DecisionResult, call *ToolCall, idx int) int {
	w := c.failedWriteBefore(idx)
	if w < 0 {
		return sevOK
	}
	d.Args = append(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
		Status: StatusUnsupported, Reason: ReasonUnsupported, Where: againstPolicy(c.handoverNote(w))})
	return sevAmbiguous
}

// announcesFailedHandover flags a reply whose message carries out such a
// transfer, at the first sentence that speaks of the transfer.
func (c *checker) announcesFailedHandover(d *DecisionResult, i int) int {
	m := &c.t.Messages[i]
	for k := range m.ToolCalls {
		if c.actionOf(m.ToolCalls[k].Name) != ActionTransfer {
			continue
		}
		w := c.failedWriteBefore(int(c.firstCall[i]) + k)
		if w < 0 {
			return sevOK
		}
		low := c.lowerContent(i)
		for s0, end := range sentences(low) {
			if strings.Contains(low[s0:end], "transfer") {
				a := c.unsupportedSpan(s0, m.Content[s0:end], "announces the transfer this message makes: "+c.handoverNote(w))
				a.Where.Found = "policy"
				d.Args = append(d.Args, a)
				return sevAmbiguous
			}
		}
		return sevOK
	}
	return sevOK
}
