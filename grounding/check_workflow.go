package grounding

import (
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// workflow applies the profile's ordering and confirmation rules to a call
// and records violations (SPEC §3 flow.order, flow.unconfirmed).
func (c *checker) workflow(d *DecisionResult, ci *callInfo, call *ToolCall) int {
	ci.name = call.Name
	for ri, rule := range c.rt.order {
		if !rule.tools[call.Name] {
			continue
		}
		val, ok := ci.keyAt(rule.arg)
		if !ok {
			continue
		}
		// The earlier calls are read once per rule and value: what a call
		// of an earlier message says about it does not change (its
		// observation, error and records are known by then), so the next
		// write on the same value resumes where this one stopped.
		mk := orderKey{rule: ri, val: val}
		memo, seen := c.orderSeen[mk]
		for k := memo.upTo; !memo.sat && k < len(c.calls); k++ {
			p := &c.calls[k]
			if p == ci || p.msg >= ci.msg {
				break // calls are in message order: the rest are not earlier
			}
			memo.upTo = k + 1
			if p.err || p.obs < 0 {
				continue
			}
			if k, _ := p.keyAt(rule.afterArg); rule.after[p.name] && k == val {
				memo.sat = true
				break
			}
			if rule.afterOutput[p.name] {
				if id, ok := c.find(val); ok && c.records.has(-1-int32(p.obs), id) {
					memo.sat = true
					break
				}
			}
		}
		if !seen {
			mk.val = strings.Clone(val)
		}
		if c.orderSeen == nil {
			c.orderSeen = map[orderKey]orderMemo{}
		}
		c.orderSeen[mk] = memo
		satisfied := memo.sat
		if !satisfied {
			c.violate(d, ReasonOrder, !rule.decision, call.Name+" on "+strings.TrimPrefix(val, "s:")+" without an earlier successful "+strings.Join(sortedKeys(rule.after), " or ")+" of it")
		}
	}
	conf := c.rt.confirm
	if conf == nil || conf.except[call.Name] || !(conf.actions[d.Action] || conf.tools[call.Name]) {
		return sevOK
	}
	// A write needs a user "yes" answering agent text that named one of its
	// values (or, failing that, its action: "cancel", "baggage"). One yes
	// covers every write listed with it, and retries after an error; a
	// write it did not list needs a new one. The user must not have backed
	// out since.
	var ents []int32
	addKey := func(k string) {
		id, ok := c.find(k)
		if !ok {
			return
		}
		e := &c.ents[id]
		// A short string (an airport code, "Mia" in "Thank you, Mia!")
		// names no listing; keys carry a two-byte kind prefix ("s:").
		if e.small || c.weakToken(e) || len(k) <= 3 || strings.HasPrefix(k, "s:") && len(k) <= 2+3 {
			return
		}
		ents = append(ents, id)
	}
	// An enum's value ("economy", "one_way") names no listing: the agent's
	// questions offer every value of it ("basic economy, economy, or
	// business?"), and a "yes" to one of those is no yes to the write.
	choices := c.choices[:0] // keys cut from the scratch slab
	for i := range d.Args {
		if a := &d.Args[i]; a.Role == RoleEnum || a.Role == RoleBoolean {
			choices = c.appendValueKeys(choices, string(a.Value))
		}
	}
	c.choices = choices
	var parts [4]string
	for _, k := range ci.argKeys {
		if slices.Contains(choices, k) {
			continue
		}
		addKey(k)
		// "certificate 7504069" in the listing names certificate_7504069.
		for _, p := range appendIDNumberParts(parts[:0], k) {
			c.partBuf = append(append(c.partBuf[:0], "s:"...), p...)
			addKey(unsafe.String(&c.partBuf[0], len(c.partBuf))) // looked up, not kept
		}
	}
	words := c.actionWordsOf(call.Name)
	latest, valid := -1, false
	var accepted *confirmEvent
	for k := len(c.events) - 1; k >= 0 && !valid; k-- {
		ev := &c.events[k]
		byValue := c.eventNamesValue(ev, ents)
		if !byValue && !c.eventNames(ev, nil, words) {
			continue
		}
		if latest < 0 {
			latest = ev.user
		}
		ok := true
		for _, w := range c.writes {
			if w.msg > ev.user && w.event != ev.user {
				ok = false
			}
			// A listing that named only the action ("booking") covers one
			// such write and its retries after errors: once one ran, a
			// second is a new write it never listed (task0-trial3 booked
			// again, twice, on the yes that had covered HATHAT).
			if !byValue && w.event == ev.user && w.tool == call.Name {
				ok = false
			}
		}
		if ok {
			latest, valid, accepted = ev.user, true, ev
		}
	}
	sev := sevOK
	if accepted != nil && conf.priced[call.Name] && len(accepted.texts) > 0 {
		// The user accepted an amount the engine found unsupported or
		// contradicted: consent to a wrong price is not consent to this
		// write's (task20: "a price difference of $146" for a change that
		// refunds 414).
		if a, m := c.unsupportedAmountIn(accepted); a != nil {
			d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
				Status: StatusUnsupported, Reason: ReasonUnsupported,
				Where: againstPolicy("the listing the user accepted (message " + strconv.Itoa(m) + ") states " + strings.Trim(string(a.Value), `"`) +
					", which nothing visible supports as this write's price: the user accepted a cost it will not have")})
			sev = sevAmbiguous
		}
	}
	if accepted != nil && conf.priced[call.Name] && sev == sevOK && !c.statesPrice(accepted, conf.unpriced) {
		d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
			Status: StatusUnsupported, Reason: ReasonUnsupported,
			Where: againstPolicy("the listing the user accepted at message " + strconv.Itoa(accepted.user) + " states no price: " +
				call.Name + " charges or refunds the difference, and the user was told no amount")})
		sev = sevAmbiguous
	}
	if accepted != nil && conf.priced[call.Name] && sev == sevOK {
		sev = c.listedPriceMismatch(d, ci, call, accepted)
	}
	switch {
	case latest < 0:
		c.violate(d, ReasonUnconfirmed, !conf.decision, "no agent message listing this action was followed by the user's yes")
	case !valid:
		c.violate(d, ReasonUnconfirmed, !conf.decision, "the user's yes (message "+strconv.Itoa(latest)+") was for an earlier write; this one was not listed and accepted again")
	case c.lastUser > latest && c.lastNo:
		c.violate(d, ReasonUnconfirmed, !conf.decision, "the user's last message ("+strconv.Itoa(c.lastUser)+") backs out of what they accepted at message "+strconv.Itoa(latest))
	}
	if !ci.err && ci.obs >= 0 {
		c.lastWrite = ci.msg
		c.writes = append(c.writes, writeDone{msg: ci.msg, event: latest, tool: call.Name})
	}
	return sev
}

// unsupportedAmountIn returns the first amount of the agent text a
// confirmation answered whose evidence is unsupported or contradicted (a
// failed price), and the message stating it.
func (c *checker) unsupportedAmountIn(ev *confirmEvent) (*ArgEvidence, int) {
	first := slices.Min(ev.texts)
	for k := len(c.res.Decisions) - 1; k >= 0; k-- {
		d := &c.res.Decisions[k]
		if d.Message < first {
			break // decisions are in message order
		}
		if d.Call >= 0 || !slices.Contains(ev.texts, d.Message) {
			continue
		}
		for i := range d.Args {
			a := &d.Args[i]
			if a.Role == RoleAmount && (a.Status == StatusUnsupported || a.Status == StatusContradiction) {
				return a, d.Message
			}
		}
	}
	return nil, 0
}

// statesPrice reports whether the agent text a confirmation answered
// states an amount ("$" then a digit) or one of unpriced ("no additional
// cost").
func (c *checker) statesPrice(ev *confirmEvent, unpriced []string) bool {
	for _, t := range ev.texts {
		text := c.t.Messages[t].Content
		for i := 0; i < len(text); i++ {
			if text[i] != '$' {
				continue
			}
			j := i + 1
			for j < len(text) && text[j] == ' ' {
				j++
			}
			if j < len(text) && text[j] >= '0' && text[j] <= '9' {
				return true
			}
		}
		if c.mayHold(text, t, c.rt.confirm.gate) && containsAny(c.lowerContent(t), unpriced) {
			return true
		}
	}
	return false
}

// genericToolWords are tool-name words that say nothing about the action.
var genericToolWords = map[string]bool{"reservation": true, "update": true, "modify": true, "pending": true, "order": true,
	"detail": true, "get": true, "user": true, "item": true, "delivered": true, "set": true, "change": true, "edit": true}

// actionWords are the stems of a tool name that name its action:
// cancel_reservation → [cancel], update_reservation_baggages → [baggage].
// actionWordsOf is actionWords, remembered per tool name by the pooled
// checker (a log has a handful of tools; a bound keeps a hostile one from
// growing the memo without end).
func (c *checker) actionWordsOf(tool string) []string {
	if w, ok := c.actionWords[tool]; ok {
		return w
	}
	w := actionWords(tool)
	if c.actionWords == nil {
		c.actionWords = map[string][]string{}
	}
	if len(c.actionWords) < 256 {
		c.actionWords[strings.Clone(tool)] = w
	}
	return w
}

func actionWords(tool string) []string {
	var words []string
	for _, w := range stems(tool) {
		if !genericToolWords[w] {
			words = append(words, w)
		}
	}
	return words
}

// eventNamesValue reports whether the agent texts a "yes" answered named
// one of the entries.
func (c *checker) eventNamesValue(ev *confirmEvent, ents []int32) bool {
	for _, id := range ents {
		if slices.Contains(ev.ents, id) {
			return true
		}
	}
	return false
}

// eventNames reports whether the agent texts a "yes" answered named one of
// the entries or one of the action words.
func (c *checker) eventNames(ev *confirmEvent, ents []int32, words []string) bool {
	if c.eventNamesValue(ev, ents) {
		return true
	}
	for _, m := range ev.texts {
		text := c.t.Messages[m].Content
		for _, w := range words {
			if _, _, ok := stemIn(text, w); ok {
				return true
			}
		}
	}
	return false
}

// appendStems appends the stems of the words of text (the runs of ASCII
// letters stemIn tries). They are only compared while this trajectory is
// checked, so a capitalized word is lowered into the scratch slab rather
// than into a string of its own.
func (c *checker) appendStems(dst []string, text string) []string {
	for i, j := nextWord(text, 0); i < j; i, j = nextWord(text, j) {
		w := text[i:j]
		if hasASCIIUpper(w) {
			w = c.slab.cutLower(w) // a word is ASCII letters (nextWord)
		}
		dst = append(dst, stem(w))
	}
	return dst
}

// nextWord returns the span of the first run of ASCII letters in text at
// or after from; i == j when there is none.
func nextWord(text string, from int) (i, j int) {
	i = from
	for i < len(text) && !letterByte(text[i]) {
		i++
	}
	j = i
	for j < len(text) && letterByte(text[j]) {
		j++
	}
	return i, j
}

// stemIn finds a word of text whose stem matches w. A modal verb that
// merely begins w is no mention of it: "I can try again" does not name a
// cancellation (task0-trial3).
func stemIn(text, w string) (int, int, bool) {
	for i, j := nextWord(text, 0); i < j; i, j = nextWord(text, j) {
		if s := stem(text[i:j]); stemMatch(s, w) && !(len(s) < len(w) && modalWord(text[i:j])) {
			return i, j, true
		}
	}
	return 0, 0, false
}

func (c *checker) violate(d *DecisionResult, code string, trajectory bool, detail string) {
	c.res.Violations = append(c.res.Violations, Violation{Code: code, Decision: d.Ordinal, Message: d.Message, Detail: detail, Trajectory: trajectory})
	if !hasString(d.Reasons, code) {
		d.Reasons = c.reasonChunks.add(d.Reasons, code)
	}
}

// orderKey names an order rule (its index in the profile's) and the value
// a write on it names; orderMemo is how far the calls were read for it
// (upTo) and whether one of them satisfied the rule.
type orderKey struct {
	rule int
	val  string
}

type orderMemo struct {
	upTo int
	sat  bool
}

// modalWord reports whether word is the modal "can" (any case): the one
// modal that begins an action word (cancel).
func modalWord(word string) bool {
	return strings.EqualFold(word, "can")
}
