package grounding

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// originalRuntime is an OriginalPaymentRule with its phrases lower-cased.
type originalRuntime struct {
	OriginalPaymentRule
	phrases []string
	gate    uint64 // their bit in the reply gate
}

// originalWindow is how far after the phrase ("the original payment
// method") the card's last four may be introduced to be the card the
// phrase names: "(credit card ending in 6791)", ", which is the credit
// card ending in 6791".
const originalWindow = 48

// checkOriginalPayment checks a reply that calls a card, named by its last
// four digits, a record's original payment method (OriginalPaymentRule):
// the record's payment history must hold a method whose id ends in those
// digits or whose visible details list them as its last_four. A history
// whose every method is known to be another fails (vis.contradiction):
// the record shows what paid, and a refund promised to "the original
// payment method" is promised to the wrong card.
func (c *checker) checkOriginalPayment(d *DecisionResult, text string, msg int) int {
	if len(c.rt.original) == 0 {
		return sevOK
	}
	low := c.textLower(text, msg)
	sev := sevOK
	for i := range c.rt.original {
		r := &c.rt.original[i]
		if !c.mayHold(text, msg, r.gate) || !containsAny(low, r.phrases) {
			continue
		}
		x := c.recordsBefore(r.Field, msg)
		if len(x.latest) == 0 {
			continue
		}
		for s0, end := range sentences(low) {
			j, ok := originalDigits(low[s0:end], r.phrases)
			if !ok {
				continue
			}
			j += s0
			digits := low[j : j+4]
			// The record the card is said to have paid: the last one the
			// reply names before the digits, else the last one named before
			// the reply.
			id := lastNamed(text[:j], x)
			if id == "" {
				id = c.lastNamedBefore(x, msg)
			}
			if id == "" {
				continue
			}
			m := int(x.latest[id])
			rec := record(c.t.Messages[m].Content)
			if v, ok := rec.str(r.Field); !ok || v != id {
				continue
			}
			hist, ok := topLevelValue(string(rec), r.History)
			if !ok {
				continue
			}
			var methods []string
			fieldValues(hist, r.Method, func(v string) bool {
				if !slices.Contains(methods, v) {
					methods = append(methods, v)
				}
				return true
			})
			if len(methods) == 0 {
				continue
			}
			other, known := true, make([]string, 0, len(methods))
			for _, p := range methods {
				four, seen := c.lastFourOf(p, msg)
				if strings.HasSuffix(p, digits) || four == digits || !seen {
					other = false
					break
				}
				if four != "" {
					p += " (ending in " + four + ")"
				}
				known = append(known, p)
			}
			if !other {
				continue
			}
			a := c.contradictedSpan(s0, text[s0:end], "calls the card ending in "+digits+" the original payment method, but the record of "+id+
				" (message "+strconv.Itoa(m)+") was paid with "+strings.Join(known, ", "))
			c.pointAtRecord(&a, id, m)
			// Highlight the method that paid, in the record's history.
			content := c.t.Messages[m].Content
			if h := strings.Index(content, hist); h >= 0 {
				if k := strings.Index(hist, strconv.Quote(methods[0])); k >= 0 {
					a.Where.Start, a.Where.End = h+k+1, h+k+1+len(methods[0])
					a.Where.JSONPath = r.History
				}
			}
			d.Args = c.argChunks.add(d.Args, a)
			sev = max(sev, sevFail)
		}
	}
	return sev
}

// originalDigits finds, in a lower-cased sentence, a card's last four
// digits introduced (by "ending in" and the like) within originalWindow
// bytes after one of phrases, with no "or" between (an alternative is
// another method): the index of the digits.
func originalDigits(sent string, phrases []string) (int, bool) {
	for _, p := range phrases {
		for k := range occurrences(sent, p) {
			k += len(p)
			near := sent[k:min(len(sent), k+originalWindow)]
			for _, lead := range lastFourLeads {
				l := strings.Index(near, lead)
				if l < 0 || strings.Contains(near[:l], " or ") {
					continue
				}
				j := skipLeadFiller(sent, k+l+len(lead))
				if j+4 <= len(sent) && onlyDigits(sent[j:j+4]) && (j+4 == len(sent) || !digitByte(sent[j+4])) {
					return j, true
				}
			}
		}
	}
	return 0, false
}

// lastFourOf reads the last_four of the payment method id from the latest
// visible tool result before msg that details it (an object whose "id" is
// id). seen is false when none does; four is "" for a method detailed
// without one (PayPal, a gift card).
func (c *checker) lastFourOf(id string, msg int) (four string, seen bool) {
	quoted := strconv.Quote(id)
	for i := msg - 1; i >= 0; i-- {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() || c.isError(m) || !strings.Contains(m.Content, quoted) {
			continue
		}
		if four, seen, ok := scanLastFour(m.Content, id); ok {
			if seen {
				return four, true
			}
			continue
		}
		var v any
		if json.Unmarshal([]byte(m.Content), &v) != nil {
			continue
		}
		if four, seen := findLastFour(v, id); seen {
			return four, true
		}
	}
	return "", false
}

// findLastFour looks for the object whose "id" is id in a decoded JSON
// value and reads its "last_four".
func findLastFour(v any, id string) (four string, found bool) {
	walkObjects(v, func(o map[string]any) bool {
		if o["id"] == id {
			four, _ = o["last_four"].(string)
			found = true
		}
		return !found
	})
	return four, found
}

// walkObjects calls f with every object of a decoded JSON value, each
// before the objects inside it, until f returns false; it reports whether
// the walk went to the end.
func walkObjects(v any, f func(map[string]any) bool) bool {
	switch v := v.(type) {
	case map[string]any:
		if !f(v) {
			return false
		}
		for _, x := range v {
			if !walkObjects(x, f) {
				return false
			}
		}
	case []any:
		for _, x := range v {
			if !walkObjects(x, f) {
				return false
			}
		}
	}
	return true
}
