package grounding

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// allowanceRuntime is an AllowanceRule prepared for checking.
type allowanceRuntime struct {
	AllowanceRule
	tools map[string]bool
	free  map[string]map[string]int // lower-case tier and class
	// items are the lower-case Items; tierWords and classWords name the
	// tiers and classes of Free in replies ("basic economy" for
	// basic_economy), longest first.
	items                 []string
	tierWords, classWords []allowanceWord
}

// allowanceWords are the phrases naming keys: each key, with "_" read as
// a space, longest first.
func allowanceWords(keys []string) []allowanceWord {
	var out []allowanceWord
	for _, k := range keys {
		out = append(out, allowanceWord{strings.ReplaceAll(k, "_", " "), k})
	}
	slices.SortFunc(out, func(a, b allowanceWord) int { return cmp.Compare(len(b.phrase), len(a.phrase)) })
	return out
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
		return c.anyTier(a, class, classMsg, n, total, charged)
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
	sum := strconv.Itoa(total) + " " + a.Total + " - " + strconv.Itoa(per) + " free × " + a.count(n) + " = " + strconv.Itoa(want)
	parts := a.Tier + " " + tier + " at message " + strconv.Itoa(tierMsg) + ", " + a.Class + " " + class + " in " + in(classMsg) +
		", " + a.count(n) + " in " + in(perMsg)
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

// anyTier checks a charged count when the owner's tier is visible
// nowhere: a count no tier's allowance gives (charging for bags every
// membership gets free in business) is still a contradiction; any other
// says nothing.
func (c *checker) anyTier(a *allowanceRuntime, class string, classMsg, n, total int, charged float64) (finding, bool) {
	lo, hi, seen := 0, 0, false
	for _, t := range a.free {
		per, ok := t[strings.ToLower(class)]
		if !ok {
			continue
		}
		if !seen || per < lo {
			lo = per
		}
		if !seen || per > hi {
			hi = per
		}
		seen = true
	}
	if !seen {
		return finding{}, false
	}
	most, least := max(0, total-lo*n), max(0, total-hi*n)
	if charged >= float64(least) && charged <= float64(most) {
		return finding{}, false
	}
	where := "the call"
	if classMsg >= 0 {
		where = "the record at message " + strconv.Itoa(classMsg)
	}
	span := func(x, y int) string {
		if x == y {
			return strconv.Itoa(x)
		}
		return strconv.Itoa(x) + " to " + strconv.Itoa(y)
	}
	note := "whatever the " + a.Tier + " (none is visible), the policy's " + span(lo, hi) + " free per " + strings.ReplaceAll(class, "_", " ") +
		" passenger leave " + span(least, most) + " of " + strconv.Itoa(total) + " " + a.Total + " to charge for " + a.count(n) +
		" (" + a.Class + " " + class + " in " + where + "), not " + strconv.FormatFloat(charged, 'f', -1, 64)
	if a.Rule != "" {
		note += "; the policy: " + a.Rule
	}
	return finding{status: StatusContradiction, reason: ReasonContradiction, sev: sevFail, ev: againstPolicy(note), ent: -1}, true
}

// count writes n heads: "1 passenger", "2 passengers".
func (a *allowanceRuntime) count(n int) string { return countOf(n, a.Per) }

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
// before msg that is the record of owner (see ownerField).
func (c *checker) tierOf(a *allowanceRuntime, owner string, msg int) (string, int) {
	return c.ownerField(a.TierOf, owner, a.Tier, msg)
}

// ownerField is field of the latest visible successful tool result before
// msg that is the record of owner (its ownerKey field, or that of the call
// it answers, holds owner, and it has field), with its message index (-1:
// none). Reservations name their user too; only the record that states
// the field counts.
func (c *checker) ownerField(ownerKey, owner, field string, msg int) (string, int) {
	quoted := `"` + owner + `"`
	key := `"` + field + `"`
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
		if !strings.Contains(m.Content, quoted) || !r.is(ownerKey, owner) {
			if k := c.obsCall[i]; k < 0 || !record(c.calls[k].args).is(ownerKey, owner) {
				continue
			}
		}
		if t, ok := r.str(field); ok && t != "" {
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
	i := skipSpace(s, 1)
	for i < len(s) && s[i] != ']' {
		end := valueEnd(s, i)
		if end <= i {
			return 0, false
		}
		n++
		i = skipSpace(s, end)
		switch {
		case i < len(s) && s[i] == ',':
			i = skipSpace(s, i+1)
		case i < len(s) && s[i] == ']':
		default:
			// Not an array of values ("[\"a\": 1}]", cut text): a
			// separator other than a comma would stop the walk where it
			// stands.
			return 0, false
		}
	}
	return n, i < len(s)
}

// allowanceClaims checks the allowances a reply states ("as a gold member
// you get 2 free checked bags in business"): a sentence holding a count
// right before "free" and one of a rule's Items is read with the tier and
// class it names, else the tier of the latest visible record that states
// one and the class and head count of the latest call to one of the
// rule's tools. A count the policy's table does not give (per head, or
// for all the heads of that call) is ambiguous: the reply states an
// allowance the policy contradicts. A sentence naming two tiers or two
// classes, or a part found nowhere, says nothing.
func (c *checker) allowanceClaims(d *DecisionResult, text, low string, msg int) int {
	sev := sevOK
	for i := range c.rt.allowances {
		a := &c.rt.allowances[i]
		if len(a.items) == 0 || !strings.Contains(low, "free ") {
			continue
		}
		ctx := allowanceContext{tierMsg: -2}
		for s0, end := range sentences(low) {
			sent := low[s0:end]
			n, itemEnd, ok := a.statedCount(sent)
			if !ok {
				continue
			}
			tier, ok1 := a.oneOf(sent, a.tierWords)
			class, ok2 := a.oneOf(sent, a.classWords)
			if !ok1 || !ok2 {
				continue // two tiers or two classes: a comparison
			}
			if ctx.tierMsg == -2 {
				ctx = c.allowanceContext(a, msg)
			}
			tierMsg := -1
			if tier == "" {
				tier, tierMsg = ctx.tier, ctx.tierMsg
			}
			heads := 0
			if class == "" || class == ctx.class {
				class, heads = ctx.class, ctx.heads
			}
			per, ok := a.free[tier][class]
			if tier == "" || class == "" || !ok {
				continue
			}
			fine := n == per || heads > 0 && n == per*heads
			if heads == 0 && !perHead(sent[itemEnd:]) {
				fine = per == 0 && n == 0 || per > 0 && n > 0 && n%per == 0
			}
			if fine {
				continue
			}
			note := "states an allowance the policy contradicts: " + a.Tier + " " + tier + " gives " + strconv.Itoa(per) + " free per " + strings.ReplaceAll(class, "_", " ") + " passenger"
			if heads > 0 {
				note += " (" + a.count(heads) + " in the call at message " + strconv.Itoa(ctx.callMsg) + ")"
			}
			note += ", not " + strconv.Itoa(n)
			if a.Rule != "" {
				note += "; the policy: " + a.Rule
			}
			ev := c.unsupportedSpan(s0, text[s0:end], note)
			ev.Where.Found = "policy"
			if tierMsg >= 0 {
				ev.Where.Record = tierRef(c.t.Messages[tierMsg].Content, a.Tier, ctx.rawTier, tierMsg)
			}
			d.Args = c.argChunks.add(d.Args, ev)
			sev = sevAmbiguous
		}
	}
	return sev
}

// allowanceContext is what a reply's allowance statement is read against
// when the sentence does not say it.
type allowanceContext struct {
	tier, rawTier string // lower-case, and as the record writes it
	tierMsg       int    // -1: none; -2: not looked up yet
	class         string // lower-case
	heads         int
	callMsg       int
}

// allowanceContext finds the tier of the latest visible record that
// states one and the class and head count of the latest call to one of
// a's tools before msg.
func (c *checker) allowanceContext(a *allowanceRuntime, msg int) allowanceContext {
	ctx := allowanceContext{tierMsg: -1, callMsg: -1}
	key := `"` + a.Tier + `"`
	for i := msg - 1; i >= 0 && ctx.tierMsg < 0; i-- {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() || !strings.Contains(m.Content, key) || c.isError(m) {
			continue
		}
		if t, ok := record(m.Content).str(a.Tier); ok && t != "" {
			ctx.tier, ctx.rawTier, ctx.tierMsg = strings.ToLower(t), t, i
		}
	}
	for k := len(c.calls) - 1; k >= 0; k-- {
		ci := &c.calls[k]
		if ci.msg >= msg || !a.tools[ci.name] || c.t.Messages[ci.msg].IsHidden() {
			continue
		}
		call := record(ci.args)
		src := call
		if _, ok := topLevelValue(ci.args, a.Class); !ok && a.Record != "" {
			if id, ok := call.str(a.Record); ok && id != "" {
				src, _ = c.latestRecord(a.Record, id, ci.msg)
			}
		}
		cl, ok := src.str(a.Class)
		if !ok {
			break
		}
		arr, _ := topLevelValue(string(src), a.Per)
		if n, ok := arrayLen(arr); ok {
			ctx.heads = n
		}
		ctx.class, ctx.callMsg = strings.ToLower(cl), ci.msg
		break
	}
	return ctx
}

// perHead reports whether the clause after a stated count's items counts
// per head ("2 free checked bags per passenger", "for each economy
// passenger"): the count is then the table's. A total with the per-head
// figure in brackets ("4 free checked bags (2 per passenger)") is not.
func perHead(after string) bool {
	if k := strings.IndexAny(after, "(,;:"); k >= 0 {
		after = after[:k]
	}
	return strings.Contains(after, "per ") || strings.Contains(after, "each ")
}

// statedCount is the count a sentence gives right before "free" and one
// of the rule's items ("2 free checked bags", "three free bags"), and
// where the items' phrase ends.
func (a *allowanceRuntime) statedCount(sent string) (int, int, bool) {
	for off := 0; ; {
		k := strings.Index(sent[off:], "free ")
		if k < 0 {
			return 0, 0, false
		}
		k += off
		off = k + len("free ")
		i := slices.IndexFunc(a.items, func(it string) bool { return strings.HasPrefix(sent[off:], it) })
		if i < 0 {
			continue
		}
		itemEnd := off + len(a.items[i])
		j := k
		for j > 0 && sent[j-1] == ' ' {
			j--
		}
		w := j
		for w > 0 && (letterByte(sent[w-1]) || digitByte(sent[w-1])) {
			w--
		}
		word := sent[w:j]
		if w > 0 && (sent[w-1] == '$' || sent[w-1] == '.') {
			continue
		}
		if n, err := strconv.Atoi(word); err == nil && len(word) <= 2 {
			return n, itemEnd, true
		}
		if n, ok := numberWord([]byte(word)); ok {
			return n, itemEnd, true
		}
	}
}

// oneOf finds which of words (lower-case phrase → canonical key) the
// sentence names as a whole word: "" when none, ok false when it names
// two different ones. Longer phrases win over the ones inside them
// ("basic economy" over "economy").
func (a *allowanceRuntime) oneOf(sent string, words []allowanceWord) (string, bool) {
	found := ""
	var spans [][2]int
	for _, w := range words { // longest first
		for off := 0; ; {
			k := strings.Index(sent[off:], w.phrase)
			if k < 0 {
				break
			}
			k += off
			off = k + len(w.phrase)
			e := k + len(w.phrase)
			if k > 0 && letterByte(sent[k-1]) || e < len(sent) && letterByte(sent[e]) {
				continue
			}
			if slices.ContainsFunc(spans, func(s [2]int) bool { return k >= s[0] && e <= s[1] }) {
				continue // inside a longer phrase already found
			}
			spans = append(spans, [2]int{k, e})
			if found != "" && found != w.key {
				return "", false
			}
			found = w.key
		}
	}
	return found, true
}

// allowanceWord is a phrase that names a tier or a class.
type allowanceWord struct{ phrase, key string }
