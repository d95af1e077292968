package grounding

import (
	"strconv"
	"strings"
)

// allowanceRuntime is an AllowanceRule prepared for checking.
type allowanceRuntime struct {
	AllowanceRule
	tools map[string]bool
	free  map[string]map[string]int // lower-case tier and class
}

// allowanceFor is the allowance rule whose Charged argument the leaf at
// path of a call to tool is, nil when none.
func (c *checker) allowanceFor(tool, path string) *allowanceRuntime {
	for i := range c.rt.allowances {
		a := &c.rt.allowances[i]
		if a.tools[tool] && a.Charged == path {
			return a
		}
	}
	return nil
}

// allowance checks a call's charged count against the policy's free
// allowance (see AllowanceRule): derived when it is what the visible tier,
// class and head count give, a contradiction (fail) when it is not. ok is
// false when some part is not visible: the argument is then checked as
// any other amount.
func (c *checker) allowance(a *allowanceRuntime, args string, charged float64, msg int) (finding, bool) {
	call := record(args)
	total, ok := recordInt(call, a.Total)
	if !ok || total < 0 {
		return finding{}, false
	}
	// The record the call is keyed by holds what the call does not.
	var rec record
	recMsg := -1
	if a.Record != "" {
		if id, ok := call.str(a.Record); ok && id != "" {
			rec, recMsg = c.latestRecord(a.Record, id, msg)
		}
	}
	from := func(field string) (record, int) {
		if _, ok := topLevelValue(args, field); ok {
			return call, -1
		}
		if recMsg >= 0 {
			if _, ok := topLevelValue(string(rec), field); ok {
				return rec, recMsg
			}
		}
		return "", -2
	}
	perRec, perMsg := from(a.Per)
	classRec, classMsg := from(a.Class)
	ownerRec, _ := from(a.TierOf)
	if perMsg == -2 || classMsg == -2 || ownerRec == "" {
		return finding{}, false
	}
	arr, _ := topLevelValue(string(perRec), a.Per)
	n, ok := arrayLen(arr)
	if !ok {
		return finding{}, false
	}
	class, ok1 := classRec.str(a.Class)
	owner, ok2 := ownerRec.str(a.TierOf)
	if !ok1 || !ok2 || owner == "" {
		return finding{}, false
	}
	tier, tierMsg := c.tierOf(a, owner, msg)
	if tierMsg < 0 {
		return finding{}, false
	}
	per, ok := a.free[strings.ToLower(tier)][strings.ToLower(class)]
	if !ok {
		return finding{}, false
	}
	free := per * n
	want := max(0, total-free)
	in := func(m int) string {
		if m < 0 {
			return "the call"
		}
		return "the record at message " + strconv.Itoa(m)
	}
	sum := strconv.Itoa(total) + " " + a.Total + " - " + strconv.Itoa(per) + " free × " + strconv.Itoa(n) + " " + a.Per + " = " + strconv.Itoa(want)
	parts := a.Tier + " " + tier + " at message " + strconv.Itoa(tierMsg) + ", " + a.Class + " " + class + " in " + in(classMsg) +
		", " + strconv.Itoa(n) + " " + a.Per + " in " + in(perMsg)
	if charged == float64(want) {
		ev := nowhere()
		ev.Found, ev.Derivation, ev.Note = "derived", sum, "the policy's allowance: "+parts
		return finding{status: StatusDerived, reason: ReasonDerived, ev: ev, ent: -1}, true
	}
	note := "the policy's allowance gives " + sum + ", not " + strconv.FormatFloat(charged, 'f', -1, 64) + " (" + parts + ")"
	if a.Rule != "" {
		note += "; the policy: " + a.Rule
	}
	ev := againstPolicy(note)
	ev.Record = tierRef(c.t.Messages[tierMsg].Content, a.Tier, tier, tierMsg)
	return finding{status: StatusContradiction, reason: ReasonContradiction, sev: sevFail, ev: ev, ent: -1}, true
}

// tierRef points at the tier a record states: the span of its value after
// the tier key.
func tierRef(content, key, tier string, msg int) *RecordRef {
	ref := &RecordRef{Message: msg, ID: tier, Start: -1, End: -1}
	if k := strings.Index(content, `"`+key+`"`); k >= 0 {
		if j := strings.Index(content[k:], `"`+tier+`"`); j >= 0 {
			ref.Start = k + j + 1
			ref.End = ref.Start + len(tier)
		}
	}
	return ref
}

// tierOf is the Tier field of the latest visible successful tool result
// before msg that is the record of owner (its TierOf field, or that of the
// call it answers, holds owner, and it has a Tier field), with its message
// index (-1: none). Reservations name their user too; only the record that
// states the tier counts.
func (c *checker) tierOf(a *allowanceRuntime, owner string, msg int) (string, int) {
	quoted := `"` + owner + `"`
	key := `"` + a.Tier + `"`
	for i := msg - 1; i >= 0; i-- {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() {
			continue
		}
		if c.reportRead+len(m.Content) > maxReportSearch {
			return "", -1
		}
		c.reportRead += len(m.Content)
		if !strings.Contains(m.Content, key) || c.isError(m) {
			continue
		}
		r := record(m.Content)
		// A user's details need not repeat the id they were read by: the
		// call they answer names it.
		if !strings.Contains(m.Content, quoted) || !r.is(a.TierOf, owner) {
			if k := c.obsCall[i]; k < 0 || !record(c.calls[k].args).is(a.TierOf, owner) {
				continue
			}
		}
		if t, ok := r.str(a.Tier); ok && t != "" {
			return t, i
		}
	}
	return "", -1
}

// is reports whether the record's top-level key holds the string v.
func (r record) is(key, v string) bool {
	s, ok := r.str(key)
	return ok && s == v
}

// recordInt is the integer value of the record's top-level key.
func recordInt(r record, key string) (int, bool) {
	v, ok := topLevelValue(string(r), key)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	return n, err == nil
}

// arrayLen counts the items of the JSON array text s.
func arrayLen(s string) (int, bool) {
	if len(s) < 2 || s[0] != '[' {
		return 0, false
	}
	n := 0
	for i := skipSpace(s, 1); i < len(s) && s[i] != ']'; {
		end := valueEnd(s, i)
		if end < 0 {
			return 0, false
		}
		n++
		i = skipSpace(s, end)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	return n, true
}
