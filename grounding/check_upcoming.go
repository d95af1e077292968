package grounding

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// upcomingRuntime is an UpcomingTotalRule with its phrases lower-cased.
type upcomingRuntime struct {
	UpcomingTotalRule
	phrases []string
	gate    uint64 // their bit in the reply gate
}

// checkUpcomingTotal checks a total a reply gives for the user's upcoming
// records (UpcomingTotalRule): when the calculation that gave it added in
// the payment of a record whose dates are all past, the sentence fails
// (vis.contradiction), pointing at that record. The agent's own
// calculator shows the operands, so the rule reads them there rather than
// guessing which sums of visible numbers the agent meant.
func (c *checker) checkUpcomingTotal(d *DecisionResult, text string, msg int) int {
	if len(c.rt.upcoming) == 0 {
		return sevOK
	}
	low := c.textLower(text, msg)
	sev := sevOK
	for i := range c.rt.upcoming {
		r := &c.rt.upcoming[i]
		if !c.mayHold(text, msg, r.gate) || !containsAny(low, r.phrases) {
			continue
		}
		now, ok := c.currentTime()
		if !ok {
			continue
		}
		today := now.Truncate(24 * time.Hour)
		x := c.recordsBefore(r.Field, msg)
		if len(x.latest) == 0 {
			continue
		}
		for s0, end := range sentences(low) {
			if !containsAny(low[s0:end], r.phrases) {
				continue
			}
			for _, v := range dollarAmounts(low[s0:end]) {
				expr, calc, ok := c.computedBefore(v, msg)
				if !ok {
					continue
				}
				id, m, op, last, ok := c.pastOperand(r, x, expr, today)
				if !ok {
					continue
				}
				a := c.contradictedSpan(s0, text[s0:end], "counts "+fmtNum(op)+" (the calculation at message "+strconv.Itoa(calc)+
					"), the payment of "+id+" (message "+strconv.Itoa(m)+"), as upcoming, but its last date "+last+
					" is before the current time "+now.Format("2006-01-02"))
				c.pointAtRecord(&a, id, m)
				d.Args = c.argChunks.add(d.Args, a)
				sev = max(sev, sevFail)
				break
			}
		}
	}
	return sev
}

// dollarAmounts are the values of the "$" amounts of s ("$17,645",
// "$1,016.50").
func dollarAmounts(s string) []float64 {
	var out []float64
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(s) && (digitByte(s[j]) || (s[j] == ',' || s[j] == '.') && j+1 < len(s) && digitByte(s[j+1])) {
			j++
		}
		if f, ok := parseNumber(s[i+1 : j]); ok {
			out = append(out, f)
		}
		i = j - 1
	}
	return out
}

// computedBefore finds the latest compute call (a calculator) before msg
// whose result, which ran without error, is v: its arguments as text and
// its message.
func (c *checker) computedBefore(v float64, msg int) (string, int, bool) {
	for k := len(c.calls) - 1; k >= 0; k-- {
		ci := &c.calls[k]
		if ci.msg >= msg || ci.obs < 0 || ci.obs >= msg || ci.err {
			continue
		}
		if c.actionOf(c.t.Messages[ci.msg].ToolCalls[ci.call].Name) != ActionCompute {
			continue
		}
		f, ok := parseNumber(strings.TrimSpace(c.t.Messages[ci.obs].Content))
		if ok && math.Abs(f-v) < 0.005 {
			return ci.args, ci.msg, true
		}
	}
	return "", 0, false
}

// pastOperand finds a number of the expression that is the payment of a
// record whose dates are all before today and of no record with a date
// still to come: the record's id, message, the number and the record's
// last date.
func (c *checker) pastOperand(r *upcomingRuntime, x *recordIndex, expr string, today time.Time) (id string, m int, op float64, last string, ok bool) {
	for _, f := range expressionNumbers(expr) {
		if c.weakNumber(f) {
			continue
		}
		pastID, pastMsg, pastLast, live := "", 0, "", false
		for rid, at := range x.latest {
			content := c.t.Messages[at].Content
			paid := false
			for _, p := range recordedPayments(content, r.History, r.Amount) {
				if math.Abs(p-f) < 0.005 {
					paid = true
					break
				}
			}
			if !paid {
				continue
			}
			rec := record(content)
			if v, ok := rec.str(r.Field); !ok || v != rid {
				continue
			}
			latest, dated, future := "", false, false
			recordValues(rec, r.Dates, func(v string) bool {
				at, ok := parseRecordTime(v)
				if !ok {
					return true
				}
				dated = true
				if !at.Before(today) {
					future = true
					return false
				}
				if v > latest {
					latest = v
				}
				return true
			})
			switch {
			case !dated:
			case future:
				live = true
			case pastID == "" || rid < pastID: // the same answer whatever the map's order
				pastID, pastMsg, pastLast = rid, int(at), latest
			}
		}
		if pastID != "" && !live {
			return pastID, pastMsg, f, pastLast, true
		}
	}
	return "", 0, 0, "", false
}

// expressionNumbers are the numbers written in a calculator call's
// arguments ({"expression": "624 + 402 + 308"}): runs of digits, with a
// decimal part, not joined to a letter or an underscore.
func expressionNumbers(s string) []float64 {
	var out []float64
	for i := 0; i < len(s); i++ {
		if !digitByte(s[i]) || i > 0 && (letterByte(s[i-1]) || s[i-1] == '_' || digitByte(s[i-1]) || s[i-1] == '.') {
			continue
		}
		j := i
		for j < len(s) && (digitByte(s[j]) || s[j] == '.' && j+1 < len(s) && digitByte(s[j+1])) {
			j++
		}
		if j < len(s) && (letterByte(s[j]) || s[j] == '_') {
			i = j
			continue
		}
		if f, err := strconv.ParseFloat(s[i:j], 64); err == nil {
			out = append(out, f)
		}
		i = j - 1
	}
	return out
}
