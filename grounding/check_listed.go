package grounding

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// listedPriceMismatch compares the price a confirmed write was listed at
// with what its result records (the profile's charges rule: the result's
// payment history). When the listing the user said yes to stated what the
// write would charge or refund (dueAmounts: "Additional Amount Due: $64",
// not a fare in a list of options) and none of those amounts is the
// write's last payment or the history's total, the user accepted one price and paid another (task27-trial3:
// "Additional Amount Due: $64" for a change of two passengers that
// charged 162; task14: a $600 upgrade listed for one passenger, $1200
// charged for two). The listing reply told the user a price the write
// it listed did not keep: it fails (vis.contradiction, pointing at the
// payment). The write goes to a human: consent to one price is not
// consent to another, but the listing, not the write, may be what was
// wrong. It reports the write's severity.
func (c *checker) listedPriceMismatch(d *DecisionResult, ci *callInfo, call *ToolCall, ev *confirmEvent) int {
	if ci.err || ci.obs < 0 {
		return sevOK
	}
	var rule *chargeRuntime
	for i := range c.rt.charges {
		if c.rt.charges[i].tools[call.Name] {
			rule = &c.rt.charges[i]
			break
		}
	}
	if rule == nil {
		return sevOK
	}
	paid := recordedPayments(c.t.Messages[ci.obs].Content, rule.History, rule.Amount)
	if len(paid) == 0 {
		return sevOK
	}
	last, total := math.Abs(paid[len(paid)-1]), 0.0
	for _, p := range paid {
		total += p
	}
	total = math.Abs(total)
	listing, stated := -1, []string(nil)
	for _, t := range ev.texts {
		amounts := dueAmounts(c.lowerContent(t))
		for _, a := range amounts {
			if math.Abs(a-last) < 0.005 || math.Abs(a-total) < 0.005 {
				return sevOK
			}
		}
		if len(amounts) > 0 {
			listing, stated = t, stated[:0]
			for _, a := range amounts {
				stated = append(stated, "$"+fmtNum(a))
			}
		}
	}
	if listing < 0 {
		return sevOK
	}
	what := "charged "
	if paid[len(paid)-1] < 0 {
		what = "refunded "
	}
	note := "the listing the user accepted (message " + strconv.Itoa(listing) + ") states " + strings.Join(stated, ", ") +
		"; the " + call.Name + " it confirmed " + what + formatAmount(last) + " (message " + strconv.Itoa(ci.obs) + "): the user accepted a price the write did not keep"
	d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
		Status: StatusUnsupported, Reason: ReasonUnsupported, Where: againstPolicy(note)})
	// The listing reply, already decided, goes to a human too.
	for k := len(c.res.Decisions) - 1; k >= 0; k-- {
		r := &c.res.Decisions[k]
		if r.Message != listing || r.Call >= 0 {
			continue
		}
		if r.Verdict != VerdictFail {
			a := c.contradictedSpan(0, "", "states "+strings.Join(stated, ", ")+" as what the "+call.Name+" the user then accepted would cost, but it "+
				what+formatAmount(last)+" (message "+strconv.Itoa(ci.obs)+")")
			a.Path, a.Value = "content", c.vals.quote(strings.Join(stated, ", "))
			// The payment is recorded after the reply: the note says where,
			// and the page has no later message in the reply's pane to
			// point at.
			a.Where.Found, a.Where.Message = "visible", -1
			// The finding replaces the evidence of the amount it is about
			// (found, or derived, when the reply was checked), so the
			// reply's "$64" reads contradicted, not derived.
			if k := slices.IndexFunc(r.Args, func(x ArgEvidence) bool {
				return x.Role == RoleAmount && slices.Contains(stated, strings.Trim(string(x.Value), `"`))
			}); k >= 0 {
				a.Path, a.Value, a.Role = r.Args[k].Path, r.Args[k].Value, r.Args[k].Role
				r.Args[k] = a
			} else {
				r.Args = append(r.Args, a)
			}
			if !hasString(r.Reasons, ReasonContradiction) {
				r.Reasons = append(r.Reasons, ReasonContradiction)
			}
			r.Verdict, r.V = VerdictFail, 0
		}
		break
	}
	return sevAmbiguous
}

// dueWords mark a sentence that states what a write will charge or refund
// ("Additional Amount Due: $64", "the price difference is $146"), not a
// flight's fare in a list of options nor the total fare of the new flights
// ("the total cost for the new flights will be $325" is true of a change
// that refunds 331).
var dueWords = []string{"due", "difference", "charge", "refund", "you will pay", "to pay", "additional"}

// paidWords mark a sentence about what was paid before ("Total Amount
// Paid: $7136", "Original Price Paid: $245"), not what the write will do.
var paidWords = []string{"paid", "original", "previous", "current price"}

// dueAmounts are the "$" amounts of the sentences of low that state what a
// write will charge or refund.
func dueAmounts(low string) []float64 {
	var out []float64
	for s0, end := range sentences(low) {
		if sent := low[s0:end]; containsAny(sent, dueWords) && !containsAny(sent, paidWords) {
			out = append(out, dollarAmounts(low[s0:end])...)
		}
	}
	return out
}
