package grounding

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

type chargeRuntime struct {
	ChargeRule
	tools map[string]bool
}

// chargeWords report money taken.
var chargeWords = []string{"charged", "been processed", "was processed", "payment of", "deducted", "you paid", "has been paid", "was paid"}

// checkCharges checks the amounts a reply reports as charged or refunded
// right after a write whose result records its payments (ChargeRule): each
// charge or refund phrase's nearest amount must be one of the recorded
// payments (or their total) with the same sign. See ChargeRule.
func (c *checker) checkCharges(d *DecisionResult, text string, msg int) int {
	if len(c.rt.charges) == 0 || msg == 0 {
		return sevOK
	}
	var write *callInfo
	var rule *chargeRuntime
	for k := len(c.calls) - 1; k >= 0; k-- {
		if ci := &c.calls[k]; ci.obs == msg-1 {
			for i := range c.rt.charges {
				if r := &c.rt.charges[i]; r.tools[ci.name] && !ci.err {
					write, rule = ci, r
				}
			}
			break
		}
	}
	if write == nil {
		return sevOK
	}
	paid := recordedPayments(c.t.Messages[write.obs].Content, rule.History, rule.Amount)
	if len(paid) == 0 {
		return sevOK
	}
	low := asciiLower(text)
	sev := sevOK
	for s0, end := range sentences(low) {
		sent := low[s0:end]
		// A sentence that speaks of money going back reports a refund
		// ("Refund: $3,925 has been processed back to your gift card").
		refund := containsAny(sent, moneyBackSentence)
		if !refund && paid[len(paid)-1] < 0 && strings.IndexByte(sent, '$') < 0 && containsAny(sent, paymentDone) {
			// "The payment for the price difference has been processed
			// using your gift card" where the write refunded: no amount
			// to compare, but the direction is wrong. Reviewers split on
			// whether a payment "processed" misreports a refund (blind set
			// 9 passed one, noting it): a human decides.
			a := c.unsupportedSpan(s0, text[s0:end], "reported as a payment, but the result of the "+write.name+
				" (message "+strconv.Itoa(write.obs)+") records a refund of "+formatAmount(-paid[len(paid)-1]))
			a.Where.Found, a.Where.Message = "visible", write.obs
			c.pointAtHistory(&a, write)
			d.Args = c.argChunks.add(d.Args, a)
			sev = max(sev, sevAmbiguous)
			continue
		}
		if rule.Method != "" && containsAny(sent, paidWith) {
			if s, ok := c.unpaidMethod(d, text, s0, end, rule, write); ok {
				sev = max(sev, s)
				continue
			}
		}
		seen := -1 // the amount already checked in this sentence
		for _, words := range [2][]string{chargeWords, moneyBackWords} {
			for _, w := range words {
				k := strings.Index(sent, w)
				if k < 0 {
					continue
				}
				as, ae, v, ok := nearestAmount(sent, k, k+len(w), 40)
				if !ok || as == seen {
					continue
				}
				seen = as
				heads := perHeadAmount(sent[ae:])
				sev = max(sev, c.checkCharge(d, text, s0+as, s0+ae, v, heads, refund, paid, write))
			}
		}
	}
	return sev
}

// paidWith says a payment was taken with, or moved to, a payment method.
var paidWith = []string{"payment method has been updated", "payment method has been changed", "payment method for your reservation has been",
	"updated to use your", "charged to your", "deducted from your", "paid with your", "paid using your"}

// unpaidMethod flags the sentence text[s0:end] that says write's payment
// was taken with its payment method (rule.Method of its arguments) when
// the write's result records no payment by that method.
func (c *checker) unpaidMethod(d *DecisionResult, text string, s0, end int, rule *chargeRuntime, write *callInfo) (int, bool) {
	method, ok := record(write.args).str(rule.Method)
	if !ok || method == "" {
		return sevOK, false
	}
	obs := c.t.Messages[write.obs].Content
	hist, ok := topLevelValue(obs, rule.History)
	if !ok || strings.Contains(hist, strconv.Quote(method)) {
		return sevOK, false
	}
	a := c.contradictedSpan(s0, text[s0:end], "says the payment was made with "+method+", but the result of the "+write.name+
		" (message "+strconv.Itoa(write.obs)+") records no payment by it")
	a.Where.Found, a.Where.Message = "visible", write.obs
	c.pointAtHistory(&a, write)
	d.Args = c.argChunks.add(d.Args, a)
	return sevFail, true
}

// moneyBackSentence makes a sentence's reported amounts refunds.
var moneyBackSentence = []string{"refund", "back to your", "returned to", "reimburs", "credited"}

// moneyBackWords report a refund.
var moneyBackWords = []string{"refund of", "refunded", "credited", "will receive"}

// checkCharge checks the amount v at text[as:ae], reported as charged (or
// refunded), against the payments the write recorded.
func (c *checker) checkCharge(d *DecisionResult, text string, as, ae int, v float64, perHead, refund bool, paid []float64, write *callInfo) int {
	want := v
	if refund {
		want = -v
	}
	total := 0.0
	for _, p := range paid {
		total += p
		if sameAmount(p, want) {
			return sevOK
		}
		// "$38 per passenger" against a payment of 114.
		for n := 2.0; perHead && n <= 9; n++ {
			if sameAmount(p, want*n) {
				return sevOK
			}
		}
	}
	if len(paid) > 1 && sameAmount(total, want) {
		return sevOK
	}
	var note string
	switch {
	case slices.ContainsFunc(paid, func(p float64) bool { return sameAmount(p, -want) }) && refund:
		note = "reported as a refund, but the result of the " + write.name + " (message " + strconv.Itoa(write.obs) + ") records it as a payment"
	case slices.ContainsFunc(paid, func(p float64) bool { return sameAmount(p, -want) }):
		note = "reported as charged, but the result of the " + write.name + " (message " + strconv.Itoa(write.obs) + ") records it as money going back"
	default:
		reported := "charged"
		if refund {
			reported = "refunded"
		}
		note = "reported as " + reported + ", but the result of the " + write.name +
			" (message " + strconv.Itoa(write.obs) + ") records " + formatPayments(paid)
	}
	a := c.contradictedSpan(as, text[as:ae], note)
	a.Role = RoleAmount
	a.Where.Found, a.Where.Message = "visible", write.obs
	c.pointAtHistory(&a, write)
	// The amount was checked as a value already (found in the visible
	// history, likely): its evidence becomes the contradiction.
	for i := range d.Args {
		if d.Args[i].Path == a.Path {
			d.Args[i].Status, d.Args[i].Reason, d.Args[i].Where = a.Status, a.Reason, a.Where
			return sevFail
		}
	}
	d.Args = c.argChunks.add(d.Args, a)
	return sevFail
}

// paymentDone says a payment was made, with or without its amount.
var paymentDone = []string{"payment for the price difference has been processed", "payment for the difference has been processed",
	"payment was processed", "payment has been processed", "payment difference has been covered", "has been charged", "was charged",
	"cost has been covered", "difference has been covered", "difference has been charged"}

// pointAtHistory points a's evidence at the write result's History key.
func (c *checker) pointAtHistory(a *ArgEvidence, write *callInfo) {
	h := strconv.Quote(c.chargeHistory(write))
	if k := strings.Index(c.t.Messages[write.obs].Content, h); k >= 0 {
		a.Where.Start, a.Where.End = k, k+len(h)
	}
}

// chargeHistory is the History field of the charge rule for write.
func (c *checker) chargeHistory(write *callInfo) string {
	for i := range c.rt.charges {
		if c.rt.charges[i].tools[write.name] {
			return c.rt.charges[i].History
		}
	}
	return ""
}

// perHeadAmount reports whether the text after an amount makes it a per
// head amount ("$38 per passenger", "$50 each").
func perHeadAmount(after string) bool {
	after = strings.TrimLeft(after, " )*")
	for _, p := range []string{"per passenger", "per person", "per traveler", "per ticket", "each"} {
		if strings.HasPrefix(after, p) {
			return true
		}
	}
	return false
}

// paymentNouns after an amount make it a payment method's balance ("your
// $62 gift card"), not the amount paid.
var paymentNouns = []string{"gift card", "certificate", "travel certificate", "credit card", "voucher", "balance"}

// formatPayments writes recorded payments: "a payment of 305 and a
// refund of 114".
func formatPayments(paid []float64) string {
	parts := make([]string, len(paid))
	for i, p := range paid {
		if p < 0 {
			parts[i] = "a refund of " + formatAmount(-p)
		} else {
			parts[i] = "a payment of " + formatAmount(p)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// nearestAmount finds the "$" amount in s nearest to s[from:to], at most
// within bytes of it, and returns its span (the "$" and the number) and
// value.
func nearestAmount(s string, from, to, within int) (start, end int, v float64, ok bool) {
	best := within + 1
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || (s[j] == ',' || s[j] == '.') && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
			j++
		}
		if j == i+1 {
			continue
		}
		if rest := strings.TrimLeft(s[j:], " "); slices.ContainsFunc(paymentNouns, func(p string) bool { return strings.HasPrefix(rest, p) }) {
			continue
		}
		dist := 0
		switch {
		case j <= from:
			dist = from - j
		case i >= to:
			dist = i - to
		}
		if dist < best {
			f, err := strconv.ParseFloat(strings.ReplaceAll(s[i+1:j], ",", ""), 64)
			if err != nil || math.IsInf(f, 0) {
				continue
			}
			best, start, end, v, ok = dist, i, j, f, true
		}
	}
	return start, end, v, ok
}

// recordedPayments reads the amounts of the payments a write's result
// records: obs's top-level array history, each element's amount field. It
// reads the text as written (topLevelValue) rather than decoding the
// record, which the benchmarks showed cost 2% of a check.
func recordedPayments(obs, history, amount string) []float64 {
	arr, ok := topLevelValue(obs, history)
	if !ok || len(arr) < 2 || arr[0] != '[' {
		return nil
	}
	key := strconv.Quote(amount)
	var out []float64
	for rest := arr; ; {
		k := strings.Index(rest, key)
		if k < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[k+len(key):], " \t\r\n")
		if rest == "" || rest[0] != ':' {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		j := 0
		for j < len(rest) && (rest[j] == '-' || rest[j] == '+' || rest[j] == '.' || rest[j] == 'e' || rest[j] == 'E' || rest[j] >= '0' && rest[j] <= '9') {
			j++
		}
		if f, err := strconv.ParseFloat(rest[:j], 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			out = append(out, f)
		}
		rest = rest[j:]
	}
}
