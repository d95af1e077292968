package grounding

import (
	"math"
	"strconv"
	"strings"
)

// How a lookup found a value.
const (
	howNone      = iota
	howSup       // an occurrence from the system prompt, the user or a tool
	howEcho      // a tool echo of a value the agent introduced with support
	howConfirmed // the agent proposed it in text and the user said yes
	howPart      // the number part of a visible identifier (text only)
	howBadEcho   // only echoes of the agent's own unsupported value
	howAgent     // only the agent's own earlier messages
)

// lookup finds the best visible occurrence of any of keys before msg.
func (c *checker) lookup(keys []string, allowPart bool, msg int) (int32, occ, int) {
	bestHow, bestID, best := howNone, int32(-1), noOcc
	rank := func(h int) int {
		switch h {
		case howSup:
			return 6
		case howEcho:
			return 5
		case howConfirmed:
			return 4
		case howPart:
			return 3
		case howBadEcho:
			return 2
		case howAgent:
			return 1
		}
		return 0
	}
	for _, k := range keys {
		id, ok := c.find(k)
		if !ok {
			continue
		}
		e := &c.ents[id]
		h, o := howNone, noOcc
		switch {
		case e.sup.ok():
			h, o = howSup, e.sup
		case e.echo.ok() && !e.agentBad:
			h, o = howEcho, e.echo
		case e.confirmed.ok() && e.confirmBy >= 0 && int(e.confirmBy) < msg && !e.agentBad:
			h, o = howConfirmed, e.confirmed
		case allowPart && e.part.ok():
			h, o = howPart, e.part
		case e.echo.ok():
			h, o = howBadEcho, e.echo
		case e.agent.ok():
			h, o = howAgent, e.agent
		}
		if rank(h) > rank(bestHow) {
			bestHow, bestID, best = h, id, o
		}
	}
	return bestID, best, bestHow
}

// visibleEvidence renders an occurrence; literal reports whether the visible
// text is exactly raw.
func (c *checker) visibleEvidence(o occ, raw string) (Evidence, bool) {
	ev := Evidence{Found: "visible", Message: int(o.msg), Start: int(o.start), End: int(o.end), JSONPath: c.keptPath(o), HiddenEntry: -1, HiddenMessage: -1}
	if o.msg < 0 {
		ev.Found = "schema"
		return ev, true
	}
	content := c.t.Messages[o.msg].Content
	text := ""
	if int(o.end) <= len(content) && o.start >= 0 && o.start <= o.end {
		text = content[o.start:o.end]
	}
	if text == raw && o.norm == nkNone {
		return ev, true
	}
	ev.Normalization = c.describeNorm(o.norm, text, raw)
	return ev, false
}

func (c *checker) describeNorm(n normKind, text, raw string) string {
	q := c.quoteTmp(text) // every branch copies it into a new string
	switch n {
	case nkMoney:
		return q + " → " + raw + " ($ amount)"
	case nkDate:
		return q + " → " + raw + " (date form)"
	case nkDateYear:
		return q + " → " + raw + " (date, year " + strconv.Itoa(c.sc.refYear) + " from the visible history)"
	case nkToday:
		return q + " → " + raw + " (today: the current date the visible history states)"
	case nkTomorrow:
		return q + " → " + raw + " (tomorrow, from the current date the visible history states)"
	case nkClock12:
		return q + " → " + raw + " (12-hour clock)"
	case nkTimestamp:
		return q + " → " + raw + " (time of a timestamp)"
	case nkOrdinal:
		return q + " → " + raw + " (ordinal)"
	case nkNumberWord:
		return q + " → " + raw + " (number word)"
	case nkPlural:
		return q + " → " + raw + " (plural)"
	case nkIDPart:
		return q + " → " + raw + " (number part of an identifier)"
	}
	if mayParseFloat(text) {
		if _, err := strconv.ParseFloat(strings.ReplaceAll(text, ",", ""), 64); err == nil {
			return q + " → " + raw + " (number form)"
		}
	}
	return q + " → " + raw + " (case and spacing)"
}

// mayParseFloat is false for a text that strconv.ParseFloat rejects
// once its commas are dropped, for want of a byte any number, "inf" or
// "nan" starts with: the test spares the error ParseFloat allocates.
func mayParseFloat(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c != ',' {
			return floatStart[c]
		}
	}
	return true // "" (ParseFloat rejects it; let it say so)
}

var floatStart = byteSet("+-.0123456789iInN")

// support checks one argument value for its role.
func (c *checker) support(l argLeaf, ap ArgProfile, schema *toolSchema, d *DecisionResult, ci *callInfo, msg int) finding {
	switch ap.Role {
	case RoleEnum, RoleBoolean:
		return c.enumSupport(l, ap, schema, ci, msg)
	case RoleDatetime:
		if l.kind == 's' {
			if f, ok := c.dateSupport(l.s, msg); ok {
				return f
			}
		}
	case RoleAmount:
		if v, ok := numericValue(l); ok {
			return c.amountSupport(v, l.raw, l.path, msg, false)
		}
	}
	return c.identSupport(l, ap, d, ci, msg, false)
}

func numericValue(l argLeaf) (float64, bool) {
	switch l.kind {
	case 'n':
		return l.f, true
	case 's':
		return parseNumber(strings.TrimPrefix(strings.TrimSpace(l.s), "$"))
	}
	return 0, false
}

// weak reports whether a value proves nothing alone: a small integer or a
// listed common token.
func (c *checker) weakNumber(v float64) bool {
	return v == math.Trunc(v) && math.Abs(v) <= c.rt.weakMax
}

// identSupport checks an identifier-like value (also the fallback role).
func (c *checker) identSupport(l argLeaf, ap ArgProfile, d *DecisionResult, ci *callInfo, msg int, inText bool) finding {
	var kbuf [4]string
	keys := kbuf[:0]
	switch l.kind {
	case 'n':
		if c.weakNumber(l.f) {
			return c.weakSupport(l.f, l.raw, l.path, msg)
		}
		keys = append(keys, c.numberKeyCut(l.f))
		if l.f == math.Trunc(l.f) && l.f >= 0 {
			keys = append(keys, stringKey(strconv.FormatInt(int64(l.f), 10)))
		}
	case 'b':
		keys = append(keys, c.stringKeyCut(l.s))
	default:
		sk := c.stringKeyCut(l.s)
		if c.rt.weakTokens[sk] || len(strings.TrimSpace(l.s)) <= 1 {
			return finding{status: StatusWeak, reason: ReasonWeak, sev: sevAmbiguous, ev: nowhere(), ent: -1}
		}
		keys = append(keys, sk)
		// An order number written with its "#" ("#W8665881") is the one
		// a user types without it.
		if t := strings.TrimSpace(l.s); len(t) > 3 && t[0] == '#' && idByte(t[1]) {
			keys = append(keys, c.stringKeyCut(t[1:]))
		}
		if onlyDigits(strings.TrimSpace(l.s)) {
			if f, ok := parseNumber(strings.TrimSpace(l.s)); ok {
				if c.weakNumber(f) {
					return c.weakSupport(f, l.raw, l.path, msg)
				}
				keys = append(keys, c.numberKeyCut(f))
			}
		}
	}
	id, o, how := c.lookup(keys, inText, msg)
	raw := l.s
	if l.kind != 's' {
		raw = l.raw
	}
	switch how {
	case howSup, howEcho, howConfirmed, howPart:
		ev, literal := c.visibleEvidence(o, raw)
		f := finding{status: StatusLiteral, ev: ev, ent: id, how: how}
		if how == howPart {
			f.ent = c.ents[id].partOf
		}
		if !literal || how == howPart {
			f.status, f.reason = StatusNormalized, ReasonNormalized
		}
		switch how {
		case howEcho:
			f.ev.Note = "a tool echo of the value the agent used at message " + strconv.Itoa(int(c.ents[id].agent.msg))
			if e := &c.ents[id]; e.agentGuess && c.lastUser < int(e.agent.msg) {
				// The reply is the first the user hears of the guess, or
				// the call rests on a guess the user has not answered.
				f.status, f.reason, f.sev = StatusKnowledge, ReasonKnowledge, sevAmbiguous
				f.ev.Note += ", which it took from outside knowledge; the user has not answered since"
			}
		case howConfirmed:
			f.ev.Note = "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(c.ents[id].confirmBy))
		}
		if ap.Kind != "" && !inText {
			c.choice(&f, ap.Kind, d, ci, msg)
		}
		return f
	}
	// A multi-word value may be visible as a phrase.
	if l.kind == 's' && strings.ContainsAny(strings.TrimSpace(l.s), " -_") && len(l.s) <= 120 {
		if m, s, e, ok := c.phraseVisible(l.s, msg); ok {
			if f, ok := c.emailOnly(occ{msg: int32(m), start: int32(s), end: int32(e), norm: nkNone}, l.s, l.s, msg); ok {
				return f
			}
			ev, _ := c.visibleEvidence(occ{msg: int32(m), start: int32(s), end: int32(e), norm: nkNone}, l.s)
			if ev.Normalization == "" {
				return finding{status: StatusLiteral, ev: ev, ent: -1}
			}
			return finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: -1}
		}
	}
	return c.notVisible(keys, l.s, ap, how, id, msg, RoleIdentifier, inText)
}

// stringKeyCut and numberKeyCut are stringKey and numberKey cut from the
// trajectory's slab: the checks make a few keys per value, and a string
// apiece showed in the allocation profile.
func (c *checker) stringKeyCut(s string) string {
	c.keyBuf = appendStringKey(c.keyBuf[:0], s)
	return c.slab.cut(c.keyBuf)
}

// quoteOut is strconv.Quote(s) cut from the result's slab: the raw form of
// a value found in text, which evidence may quote.
func (c *checker) quoteOut(s string) string {
	c.keyBuf = appendQuote(c.keyBuf[:0], s)
	return c.out.cut(c.keyBuf)
}

// quoteTmp is strconv.Quote(s) cut from the scratch slab: for quoted text
// that is searched for, or copied into a longer string, never kept as it
// is. Quoting into a new string cost an allocation each time.
func (c *checker) quoteTmp(s string) string {
	c.quoteBuf = appendQuote(c.quoteBuf[:0], s)
	return c.slab.cut(c.quoteBuf)
}

func (c *checker) numberKeyCut(f float64) string {
	c.keyBuf = appendNumberKey(c.keyBuf[:0], f)
	return c.slab.cut(c.keyBuf)
}

// notVisible classifies a value the visible history does not support:
// knowledge, an echo of the agent's own guess, a hidden leak, or nowhere.
func (c *checker) notVisible(keys []string, s string, ap ArgProfile, how int, id int32, msg int, role string, inText bool) finding {
	if how == howBadEcho && inText {
		e := &c.ents[id]
		if k := c.obsCall[e.echo.msg]; k >= 0 && (c.calls[k].action == ActionWrite || c.calls[k].action == ActionIrreversibleWrite) && !c.calls[k].err {
			ev, _ := c.visibleEvidence(e.echo, s)
			ev.Note = "as the successful " + c.calls[k].name + " at message " + strconv.Itoa(c.calls[k].msg) + " recorded it"
			return finding{status: StatusLiteral, ev: ev, ent: id}
		}
	}
	// A message too long to index was searched for the value's text.
	tailUnsearched := false
	if len(c.tails) > 0 {
		ev, found, searched := c.tailLiteral(s, msg)
		if found {
			return finding{status: StatusLiteral, ev: ev, ent: id}
		}
		tailUnsearched = !searched
	}
	for _, k := range keys {
		if len(k) == 12 && strings.HasPrefix(k, "d:") {
			y, mo, d := digitsValue(k[2:6]), digitsValue(k[7:9]), digitsValue(k[10:12])
			if der, ok := c.deriveDate(y, mo, d, msg); ok {
				return derivedFinding(der, id)
			}
		}
	}
	if ap.Knowledge != "" || inText {
		if f, ok := c.knowledgeSupport(keys, ap.Knowledge, msg); ok {
			return f
		}
	}
	hard := role == RoleIdentifier
	if h, ok := c.hiddenFind(keys, msg); ok {
		ev := nowhere()
		ev.Found = "hidden"
		ev.Hidden, ev.HiddenEntry, ev.HiddenMessage = h.describe(c.t), h.entry, h.msg
		if tailUnsearched {
			ev.Note = tailUnsearchedNote
			return finding{status: StatusHiddenOnly, reason: ReasonHiddenLeak, sev: sevAmbiguous, ev: ev, ent: id}
		}
		return finding{status: StatusHiddenOnly, reason: ReasonHiddenLeak, sev: sevFail, ev: ev, ent: id}
	}
	// A value of a knowledge table (a real airport code) that nothing
	// visible names still needs outside knowledge, not invention.
	for _, k := range keys {
		for name, t := range c.rt.knowledge {
			if _, ok := t[k]; ok {
				ev := nowhere()
				ev.Note = "a known " + name + " value; nothing visible names it"
				return finding{status: StatusKnowledge, reason: ReasonKnowledge, sev: sevAmbiguous, ev: ev, ent: id}
			}
		}
	}
	if c.rt.authored {
		ev := nowhere()
		ev.Note = "the agent's own: this profile counts what the agent writes as authored, not as a claim"
		return finding{status: StatusFreeText, ev: ev, ent: id}
	}
	sev := sevAmbiguous
	if hard && !tailUnsearched {
		sev = sevFail
	}
	if how == howBadEcho {
		e := &c.ents[id]
		ev := nowhere()
		ev.Found = "visible"
		ev.Message, ev.Start, ev.End, ev.JSONPath = int(e.echo.msg), int(e.echo.start), int(e.echo.end), c.keptPath(e.echo)
		ev.Note = "only a tool echo of the agent's own unsupported value (message " + strconv.Itoa(int(e.agent.msg)) + "); echoes are not evidence"
		return finding{status: StatusEcho, reason: ReasonEcho, sev: sev, ev: ev, ent: id}
	}
	ev := nowhere()
	if how == howAgent {
		ev.Note = "visible only in the agent's own earlier message " + strconv.Itoa(int(c.ents[id].agent.msg))
	}
	if tailUnsearched {
		ev.Note = tailUnsearchedNote
	}
	return finding{status: StatusUnsupported, reason: ReasonUnsupported, sev: sev, ev: ev, ent: id}
}

// tailUnsearchedNote says why a value nothing indexed supports is not
// failed: part of the history was too long to index or search.
const tailUnsearchedNote = "not found in what the checks index; part of a very long earlier message was not searched"

// dateSupport checks an ISO date, date-time or clock time. ok is false when
// s is none of these.
func (c *checker) dateSupport(s string, msg int) (finding, bool) {
	var keys []string
	var parts []string
	// The keys are looked up, never kept: they are cut from the scratch slab.
	if y, mo, d, ok := parseISODate(s); ok {
		c.keyBuf = appendDateKey(c.keyBuf[:0], y, mo, d)
		keys = append(keys, c.slab.cut(c.keyBuf))
		parts = append(parts, s[:10])
		if len(s) > 11 && (s[10] == 'T' || s[10] == ' ') {
			if h, mi, _, ok := parseClock(s[11:]); ok {
				c.keyBuf = appendTimeKey(c.keyBuf[:0], h, mi)
				keys = append(keys, c.slab.cut(c.keyBuf))
				parts = append(parts, s[11:])
			}
		}
	} else if h, mi, n, ok := parseClock(s); ok && n == len(s) {
		c.keyBuf = appendTimeKey(c.keyBuf[:0], h, mi)
		keys = append(keys, c.slab.cut(c.keyBuf))
		parts = append(parts, s)
	} else {
		return finding{}, false
	}
	// Every part (date, time) must be supported; report the weakest.
	var out finding
	for i, k := range keys {
		id, o, how := c.lookup([]string{k}, false, msg)
		var f finding
		switch how {
		case howSup, howEcho, howConfirmed:
			ev, literal := c.visibleEvidence(o, parts[i])
			f = finding{status: StatusLiteral, ev: ev, ent: id, how: how}
			if !literal {
				f.status, f.reason = StatusNormalized, ReasonNormalized
			}
			if how == howConfirmed {
				f.ev.Note = "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(c.ents[id].confirmBy))
			}
		default:
			f = c.notVisible([]string{k}, s, ArgProfile{}, how, id, msg, RoleDatetime, false)
		}
		if i == 0 || f.sev > out.sev || (f.sev == out.sev && f.status == StatusNormalized) {
			out = f
		}
	}
	return out, true
}

// amountSupport checks a number in an amount role: literal, normalized
// (number forms, sign), derived by a little arithmetic, or not.
func (c *checker) amountSupport(v float64, raw, path string, msg int, inText bool) finding {
	if c.weakNumber(v) {
		return c.weakSupport(v, raw, path, msg)
	}
	keys := [1]string{c.numberKeyCut(v)}
	id, o, how := c.lookup(keys[:], false, msg)
	switch how {
	case howSup, howEcho, howConfirmed:
		ev, literal := c.visibleEvidence(o, raw)
		f := finding{status: StatusLiteral, ev: ev, ent: id, how: how}
		if !literal {
			f.status, f.reason = StatusNormalized, ReasonNormalized
		}
		if how == howConfirmed {
			f.ev.Note = "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(c.ents[id].confirmBy))
		}
		return f
	}
	// A refund shown as a negative payment.
	if nid, no, nhow := c.lookup([]string{c.numberKeyCut(-v)}, false, msg); nhow == howSup {
		ev, _ := c.visibleEvidence(no, raw)
		ev.Normalization = strconv.Quote(c.spanText(no)) + " → " + raw + " (sign)"
		return finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: nid, how: nhow}
	}
	if der, ok := c.derive(v, msg); ok {
		return derivedFinding(der, -1)
	}
	return c.notVisible(keys[:], raw, ArgProfile{}, how, id, msg, RoleAmount, inText)
}

func (c *checker) spanText(o occ) string {
	if o.msg < 0 {
		return ""
	}
	content := c.t.Messages[o.msg].Content
	if int(o.end) > len(content) || o.start < 0 || o.start > o.end {
		return ""
	}
	return content[o.start:o.end]
}

// enumSupport checks an enum or boolean value. The visible schema lists the
// allowed values, so they are supported, unless the profile says the user
// must have chosen the value (cabin, insurance): then the user must have
// said it, or accepted the agent's listing of it, or it is what the record
// being changed already holds.
func (c *checker) enumSupport(l argLeaf, ap ArgProfile, schema *toolSchema, ci *callInfo, msg int) finding {
	raw := l.s
	if l.kind != 's' {
		raw = l.raw
	}
	key := stringKey(raw)
	if l.kind == 'n' {
		key = numberKey(l.f)
	}
	inEnum := enumHas(l.propertySchema(schema), key, &c.keyBuf)
	if l.kind == 'b' {
		inEnum = true
	}
	if !ap.UserChoice {
		if inEnum {
			ev := nowhere()
			ev.Found = "schema"
			return finding{status: StatusEnum, ev: ev, ent: -1}
		}
		return c.identSupport(l, ArgProfile{Role: RoleIdentifier}, nil, ci, msg, false)
	}
	// The user said it: "economy", "one way", "no insurance".
	argName := l.name()
	yesNo := key == "s:yes" || key == "s:no" || key == "s:true" || key == "s:false"
	if yesNo {
		if m, s, e, ok := c.userYesNo(argName, key == "s:yes" || key == "s:true", msg); ok {
			ev, _ := c.visibleEvidence(occ{msg: int32(m), start: int32(s), end: int32(e)}, raw)
			ev.Normalization = strconv.Quote(c.t.Messages[m].Content[s:e]) + " → " + raw + " (the user's answer about " + strings.ReplaceAll(argName, "_", " ") + ")"
			return finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: -1}
		}
	} else {
		if um, s, e, ok := c.firstPhrase('u', c.userMsgs, raw, msg); ok {
			ev, _ := c.visibleEvidence(occ{msg: um, start: int32(s), end: int32(e)}, raw)
			if ev.Normalization == "" {
				return finding{status: StatusLiteral, ev: ev, ent: -1}
			}
			return finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: -1}
		}
	}
	if id, ok := c.find(key); ok {
		e := &c.ents[id]
		// Accepted in the agent's listing.
		if e.confirmed.ok() && e.confirmBy >= 0 && int(e.confirmBy) < msg && !yesNo {
			ev, _ := c.visibleEvidence(e.confirmed, raw)
			ev.Note = "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(e.confirmBy))
			return finding{status: StatusLiteral, ev: ev, ent: id}
		}
		// What the record being changed holds (the reservation's cabin).
		if ci != nil {
			for _, r := range ci.identEnts {
				if c.records.has(r, id) {
					ev := nowhere()
					ev.Found = "visible"
					ev.Message = -1
					if e.sup.ok() {
						ev, _ = c.visibleEvidence(e.sup, raw)
					}
					ev.Note = "the value the record being changed (" + strings.TrimPrefix(c.ents[r].key, "s:") + ") already holds"
					return finding{status: StatusLiteral, ev: ev, ent: id}
				}
			}
		}
	}
	if yesNo {
		if m, ok := c.agentAskedConfirmed(argName, msg); ok {
			ev := nowhere()
			ev.Found = "visible"
			ev.Message = m
			ev.Note = "the agent named " + strings.ReplaceAll(argName, "_", " ") + " and the user accepted"
			return finding{status: StatusLiteral, ev: ev, ent: -1}
		}
	}
	ev := nowhere()
	if inEnum {
		ev.Found = "schema"
	}
	ev.Note = "the schema allows it, but nothing visible says the user chose it"
	sev := sevAmbiguous
	if c.rt.choiceFail {
		sev = sevFail
	}
	return finding{status: StatusChoice, reason: ReasonChoice, sev: sev, ev: ev, ent: -1}
}

// stems are the content words of an argument name, for context matching:
// total_baggages → [baggage].
func stems(name string) []string {
	var out []string
	for _, w := range reportWords(name) {
		switch w {
		case "total", "number", "num", "count", "new", "old", "id", "of", "the", "amount", "is", "updated", "nonfree", "non", "free", "n", "a":
			continue
		}
		if len(w) >= 3 {
			out = append(out, stem(w))
		}
	}
	return out
}

func stem(w string) string {
	w = strings.ToLower(w)
	if strings.HasSuffix(w, "ies") && len(w) > 4 {
		return w[:len(w)-3] + "y"
	}
	if strings.HasSuffix(w, "es") && len(w) > 4 {
		w = w[:len(w)-2]
	} else if strings.HasSuffix(w, "s") && len(w) > 3 {
		w = w[:len(w)-1]
	}
	return w
}

func stemMatch(a, b string) bool {
	if len(a) < 3 || len(b) < 3 {
		return false
	}
	return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
}

// nearWords returns the words within a few words of [start,end) in text.
func nearWords(text string, start, end int) []string {
	var out []string
	// after
	i := end
	for n := 0; n < 3 && i < len(text); n++ {
		for i < len(text) && !letterByte(text[i]) {
			if text[i] == '\n' || text[i] == '.' || text[i] == ';' {
				i = len(text)
				break
			}
			i++
		}
		j := i
		for j < len(text) && letterByte(text[j]) {
			j++
		}
		if j > i {
			out = append(out, stem(text[i:j]))
		}
		i = j
	}
	// before
	i = start
	for n := 0; n < 3 && i > 0; n++ {
		for i > 0 && !letterByte(text[i-1]) {
			if text[i-1] == '\n' || text[i-1] == '.' {
				i = 0
				break
			}
			i--
		}
		j := i
		for j > 0 && letterByte(text[j-1]) {
			j--
		}
		if j < i {
			out = append(out, stem(text[j:i]))
		}
		i = j
	}
	return out
}

// weakSupport checks a small number: alone it proves nothing, but next to
// the argument's own word ("3 checked bags" for total_baggages) it counts.
func (c *checker) weakSupport(v float64, raw, path string, msg int) finding {
	name := path
	if k := strings.LastIndexAny(name, ".]"); k >= 0 {
		name = name[k+1:]
	}
	st := stems(name)
	if len(st) > 0 {
		for _, s := range c.small {
			if int(s.msg) >= msg || s.v != v {
				continue
			}
			match := false
			if s.jsonKey != "" {
				// A record's own field: the same field, not a neighbour
				// (total_baggages does not support nonfree_baggages).
				match = s.jsonKey == name
			} else if s.msg >= 0 {
				match = anyStemMatch(st, nearWords(c.t.Messages[s.msg].Content, int(s.start), int(s.end)))
			}
			if match {
				o := occ{msg: s.msg, start: s.start, end: s.end}
				ev, literal := c.visibleEvidence(o, raw)
				ev.JSONPath = s.jsonKey // the field it was stated in, if any
				ev.Note = "stated next to \"" + strings.Join(st, " ") + "\""
				if literal {
					return finding{status: StatusLiteral, ev: ev, ent: -1}
				}
				return finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: -1}
			}
		}
		if h, ok := c.hiddenContext(v, st, msg); ok {
			ev := nowhere()
			ev.Found = "hidden"
			ev.Hidden, ev.HiddenEntry, ev.HiddenMessage = h.describe(c.t), h.entry, h.msg
			ev.Note = "the hidden context states it next to \"" + strings.Join(st, " ") + "\"; nothing visible does"
			return finding{status: StatusHiddenOnly, reason: ReasonHiddenLeak, sev: sevFail, ev: ev, ent: -1}
		}
	}
	ev := nowhere()
	ev.Note = "a small number proves nothing alone"
	return finding{status: StatusWeak, reason: ReasonWeak, sev: sevAmbiguous, ev: ev, ent: -1}
}

func anyStemMatch(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if stemMatch(x, y) {
				return true
			}
		}
	}
	return false
}

// userYesNo finds the user's answer about an argument ("No, I do not want
// travel insurance"): a user message naming the argument's word, negated or
// not as the value says.
func (c *checker) userYesNo(argName string, yes bool, msg int) (int, int, int, bool) {
	st := stems(argName)
	if len(st) == 0 {
		return 0, 0, 0, false
	}
	for k := len(c.userMsgs) - 1; k >= 0; k-- {
		um := int(c.userMsgs[k])
		if um >= msg {
			continue
		}
		low := c.lowerContent(um)
		for _, s := range st {
			at := strings.Index(low, s)
			if at < 0 {
				continue
			}
			// The clause around the word decides.
			from := strings.LastIndexAny(low[:at], ".!?\n")
			to := strings.IndexAny(low[at:], ".!?\n")
			if to < 0 {
				to = len(low)
			} else {
				to += at
			}
			clause := low[from+1 : to]
			neg := containsWord(clause, "no") || containsWord(clause, "not") || containsWord(clause, "don't") ||
				containsWord(clause, "do not") || containsWord(clause, "without") || containsWord(clause, "decline") || containsWord(clause, "skip")
			if neg != yes {
				return um, at, at + len(s), true
			}
			return 0, 0, 0, false
		}
	}
	return 0, 0, 0, false
}

// agentAskedConfirmed: an agent text naming the argument's word was
// accepted by the user.
func (c *checker) agentAskedConfirmed(argName string, msg int) (int, bool) {
	for _, s := range stems(argName) {
		for k, e := range c.ents {
			_ = k
			if e.confirmBy >= 0 && int(e.confirmBy) < msg && strings.HasPrefix(e.key, "s:"+s) {
				return int(e.confirmed.msg), true
			}
		}
	}
	return 0, false
}

// phraseVisible finds a multi-word value in the visible non-agent text
// messages before msg.
func (c *checker) phraseVisible(s string, msg int) (int, int, int, bool) {
	words := phraseWords(s)
	for _, m := range c.textMsgs {
		if int(m) >= msg {
			break
		}
		if st, e, ok := c.phraseInMsg(m, words); ok {
			return int(m), st, e, true
		}
	}
	return 0, 0, 0, false
}

// knowledgeSupport: the value is not visible, but a visible phrase names it
// with outside knowledge (a city for its airport code).
func (c *checker) knowledgeSupport(keys []string, table string, msg int) (finding, bool) {
	for name, t := range c.rt.knowledge {
		if table != "" && name != table {
			continue
		}
		for _, k := range keys {
			aliases, ok := t[k]
			if !ok {
				continue
			}
			for _, a := range aliases {
				if m, s, e, ok := c.firstPhrase('t', c.textMsgs, a, msg); ok {
					ev := Evidence{Found: "visible", Message: int(m), Start: s, End: e, HiddenEntry: -1, HiddenMessage: -1}
					ev.Note = strconv.Quote(c.t.Messages[m].Content[s:e]) + " names " + strings.ToUpper(strings.TrimPrefix(k, "s:")) + " only with outside knowledge (" + name + ")"
					return finding{status: StatusKnowledge, reason: ReasonKnowledge, sev: sevAmbiguous, ev: ev, ent: -1}, true
				}
			}
		}
	}
	return finding{}, false
}

// derive looks for value as a little arithmetic over visible numbers: the
// sum of a group of values in one JSON observation (the prices of a
// reservation's flights, the balances of a user's gift cards) or of a few of
// them, such a sum times 2..5, and a ± b or a × k over the numbers of the
// last few short messages (an error that states a total, a calculator
// result). Group sums are computed once per observation.
func (c *checker) derive(v float64, msg int) (string, bool) {
	const eps = 1e-6
	c.groupSumsUpTo(msg)
	key := v
	if key == 0 {
		key = 0 // -0
	}
	if r, ok := c.sums.get(key); ok && r.msg(c) < msg {
		return r.text(c), true
	}
	// Recent non-agent messages with numbers.
	var recent []int32
	for k := len(c.nums) - 1; k >= 0 && len(recent) < 4; k-- {
		m := c.nums[k].msg
		if int(m) >= msg {
			continue
		}
		if len(recent) == 0 || recent[len(recent)-1] != m {
			recent = append(recent, m)
		}
	}
	// a ± b and a × k over the numbers of recent short messages.
	var pool []numOcc
	if c.numsAt == nil {
		c.numsAt = map[int32][]int32{}
	}
	for ; c.numsAtN < len(c.nums); c.numsAtN++ {
		m := c.nums[c.numsAtN].msg
		c.numsAt[m] = append(c.numsAt[m], int32(c.numsAtN))
	}
	for _, m := range recent {
		at := c.numsAt[m]
		if len(at) > 6 {
			continue
		}
		for _, k := range at {
			if x := c.nums[k]; !c.weakNumber(x.v) {
				pool = append(pool, x)
			}
		}
	}
	// Amounts the agent's recent replies stated with support ("$174 each")
	// are visible steps of its arithmetic.
	n := 0
	for k := len(c.stated) - 1; k >= 0 && n < 8; k-- {
		if x := c.stated[k]; int(x.msg) < msg && !c.weakNumber(x.v) {
			pool = append(pool, x)
			n++
		}
	}
	for i, a := range pool {
		for k := 2.0; k <= 5; k++ {
			if math.Abs(a.v*k-v) < eps {
				return fmtNum(a.v) + " (message " + strconv.Itoa(int(a.msg)) + ") × " + fmtNum(k) + " = " + fmtNum(v), true
			}
		}
		for j, b := range pool {
			if i == j {
				continue
			}
			if j > i && math.Abs(a.v+b.v-v) < eps {
				return fmtNum(a.v) + " (message " + strconv.Itoa(int(a.msg)) + ") + " + fmtNum(b.v) + " (message " + strconv.Itoa(int(b.msg)) + ") = " + fmtNum(v), true
			}
			if math.Abs(a.v-b.v-v) < eps {
				return fmtNum(a.v) + " (message " + strconv.Itoa(int(a.msg)) + ") − " + fmtNum(b.v) + " (message " + strconv.Itoa(int(b.msg)) + ") = " + fmtNum(v), true
			}
		}
	}
	return "", false
}

// sumGroup is one group of an observation's numbers (see groupSumsUpTo).
type sumGroup struct {
	label string // the wildcarded path, for the derivation's text
	msg   int
	wide  bool // every index and id-like key wildcarded, not only the last index
	xs    []float64
}

// sumRef says how a value derives from a group: the total, the total times
// k, or the subset sum of mask. Its text is rendered only when a
// derivation is reported: most of the sums are never asked for.
type sumRef struct {
	group int32
	op    uint8 // sumTotal, sumTimes, sumSubset
	k     uint8
	mask  uint32
	v     float64 // the value, exactly as computed
}

const (
	sumTotal = iota
	sumTimes
	sumSubset
)

func (r sumRef) msg(c *checker) int { return c.sumGroups[r.group].msg }

// text renders the derivation: "152 + 103 (flights[*].price in message 4) = 255".
func (r sumRef) text(c *checker) string {
	g := &c.sumGroups[r.group]
	where := " (" + g.label + " in message " + strconv.Itoa(g.msg) + ")"
	switch r.op {
	case sumTotal:
		if len(g.xs) > 8 {
			return "sum of " + strconv.Itoa(len(g.xs)) + " values" + where + " = " + fmtNum(r.v)
		}
		parts := make([]string, len(g.xs))
		for i, x := range g.xs {
			parts[i] = fmtNum(x)
		}
		return strings.Join(parts, " + ") + where + " = " + fmtNum(r.v)
	case sumTimes:
		return fmtNum(float64(r.k)) + " × sum" + where + " = " + fmtNum(r.v)
	}
	var parts []string
	for i, x := range g.xs {
		if r.mask&(1<<i) != 0 {
			parts = append(parts, fmtNum(x))
		}
	}
	return strings.Join(parts, " + ") + where + " = " + fmtNum(r.v)
}

// groupSumsUpTo adds the group sums of the JSON observations before msg not
// yet summed. A group is the numbers of one observation that share a path
// once indexes and id-like keys are wildcarded (flights[*].price,
// payment_methods.*.amount); siblings (only the last index wildcarded) of up
// to 8 values give every subset sum, wider groups of up to 6 too, else only
// the total.
func (c *checker) groupSumsUpTo(msg int) {
	for _, m := range c.jsonMsgs {
		if int(m) >= msg || int(m) <= c.summedTo {
			continue
		}
		c.summedTo = int(m)
		content := c.t.Messages[m].Content
		// The groups of this message, in order of first appearance, and
		// every number with its group (a number joins up to two groups).
		c.groupAt.reset()
		g0 := len(c.sumGroups)
		c.groupVals = c.groupVals[:0]
		c.groupMsg = int(m)
		c.jw.walkLeaves(content, c.onGroupLeaf)
		// Each group's numbers in order, cut from the trajectory's store.
		for g := g0; g < len(c.sumGroups); g++ {
			x0 := len(c.sumVals)
			for _, v := range c.groupVals {
				if int(v.g) == g {
					c.sumVals = append(c.sumVals, v.v)
				}
			}
			c.sumGroups[g].xs = c.sumVals[x0:len(c.sumVals):len(c.sumVals)]
		}
		for g := g0; g < len(c.sumGroups); g++ {
			xs := c.sumGroups[g].xs
			if len(xs) < 2 {
				continue
			}
			sum := 0.0
			for _, x := range xs {
				sum += x
			}
			c.addSum(sumRef{group: int32(g), op: sumTotal, v: sum})
			for k := 2.0; k <= 5; k++ {
				c.addSum(sumRef{group: int32(g), op: sumTimes, k: uint8(k), v: sum * k})
			}
			limit := 8
			if c.sumGroups[g].wide {
				limit = 6
			}
			if len(xs) > limit {
				continue
			}
			for mask := 1; mask < 1<<len(xs); mask++ {
				if mask&(mask-1) == 0 {
					continue // a single value is not a derivation
				}
				s := 0.0
				for i := range xs {
					if mask&(1<<i) != 0 {
						s += xs[i]
					}
				}
				c.addSum(sumRef{group: int32(g), op: sumSubset, mask: uint32(mask), v: s})
			}
		}
	}
}

// groupLeaf is groupSumsUpTo's walkLeaves callback (kept as one method
// value, c.onGroupLeaf, so walking allocates no closure): a number joins
// its siblings' group and its wide group.
func (c *checker) groupLeaf(w *jsonWalker, kind byte, s string, f float64, start, end int) {
	if kind != 'n' || w.pathCutOff() {
		return // a cut path does not say which numbers are siblings
	}
	// siblings: only the last index wildcarded
	last := -1
	for i := len(w.segs) - 1; i >= 0; i-- {
		if w.segs[i].key == "" && w.segs[i].index >= 0 {
			last = i
			break
		}
	}
	if last >= 0 {
		saved := w.segs[last].index
		w.segs[last].index = wildIndex
		c.groupKey = w.appendPath(append(c.groupKey[:0], "s\x00"...))
		w.segs[last].index = saved
		c.joinGroup(c.groupKey, f)
	}
	// wide: every index and id-like key wildcarded
	b := append(c.groupKey[:0], "w\x00"...)
	wild := false
	for _, sg := range w.segs {
		switch {
		case sg.key == "" && sg.index >= 0:
			b = append(b, "[*]"...)
			wild = true
		case hasDigit(sg.key):
			b = append(b, ".*"...)
			wild = true
		default:
			b = append(b, '.')
			b = append(b, sg.key...)
		}
	}
	c.groupKey = b
	if wild {
		c.joinGroup(b, f)
	}
}

// hasDigit reports whether s has an ASCII digit (strings.IndexAny(s,
// "0123456789") >= 0, without building its byte set each call).
func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if digitByte(s[i]) {
			return true
		}
	}
	return false
}

// joinGroup adds f to the group of key in message c.groupMsg, making the
// group on its first number.
func (c *checker) joinGroup(key []byte, f float64) {
	h := hashKey(key)
	g, slot, ok := c.groupAt.findBytes(h, key)
	if !ok {
		g = int32(len(c.sumGroups))
		k := c.slab.cut(key)
		c.groupAt.insert(slot, h, k, g)
		c.sumGroups = append(c.sumGroups, sumGroup{label: k[2:], msg: c.groupMsg, wide: key[0] == 'w'})
	}
	c.groupVals = append(c.groupVals, groupVal{g, f})
}

// groupVal is a number of an observation and the group it joins.
type groupVal struct {
	g int32
	v float64
}

// addSum keeps the first derivation of each value. Values are keyed by
// their float64 (0 for -0), which is what their canonical key n:… names.
func (c *checker) addSum(r sumRef) {
	if c.weakNumber(r.v) {
		return
	}
	v := r.v
	if v != v {
		return // NaN: amounts looked up are finite
	}
	if v == 0 {
		v = 0 // -0 and 0 are both n:0
	}
	c.sums.addIfAbsent(v, r)
}

// deriveDate finds a date the user described relative to a visible one:
// "the day after", "delay it by one day", "a week later".
func (c *checker) deriveDate(y, mo, d int, msg int) (string, bool) {
	c.relWordsUpTo(msg)
	for _, h := range c.relHits {
		if int(h.msg) >= msg {
			break
		}
		r := &relDateWords[h.rel]
		// The visible date it is relative to.
		by, bm, bd := addDaysSigned([3]int{y, mo, d}, -r.days)
		key := string(appendDateKey(nil, by, bm, bd))
		if id, ok := c.find(key); ok && c.ents[id].sup.ok() && int(c.ents[id].sup.msg) < msg {
			w := r.words[h.word]
			return fmtDate(by, bm, bd) + " (message " + strconv.Itoa(int(c.ents[id].sup.msg)) + ") " + strconv.Quote(w) + " as the user said (message " + strconv.Itoa(int(h.msg)) + ")", true
		}
	}
	return "", false
}

// relDateWords are the ways users move a date by a few days.
var relDateWords = []struct {
	days  int
	words []string
}{
	{1, []string{"day after", "next day", "following day", "one day later", "a day later", "1 day later", "by one day", "by a day", "by 1 day"}},
	{-1, []string{"day before", "previous day", "one day earlier", "a day earlier", "1 day earlier"}},
	{7, []string{"week later", "a week after", "one week after", "next week", "by a week", "by one week"}},
	{-7, []string{"week earlier", "a week before", "one week before"}},
}

// relHit is a relDateWords phrase a user message holds: deriveDate tries
// them in the order of messages, relDateWords and their words, and each
// user message is read for them once per trajectory (relWordsUpTo).
type relHit struct {
	msg       int32
	rel, word int8
}

// relWordsUpTo adds to c.relHits the phrases of the user messages before
// msg not read yet.
func (c *checker) relWordsUpTo(msg int) {
	for ; c.relRead < len(c.userMsgs) && int(c.userMsgs[c.relRead]) < msg; c.relRead++ {
		um := c.userMsgs[c.relRead]
		low := c.lowerContent(int(um))
		for ri := range relDateWords {
			for wi, w := range relDateWords[ri].words {
				if strings.Contains(low, w) {
					c.relHits = append(c.relHits, relHit{msg: um, rel: int8(ri), word: int8(wi)})
				}
			}
		}
	}
}

func fmtDate(y, m, d int) string { return string(appendDateKey(nil, y, m, d))[2:] }

// addDaysSigned moves a date by n days (n may be negative).
func addDaysSigned(ref [3]int, n int) (int, int, int) {
	if n >= 0 {
		return addDays(ref, n)
	}
	y, m, d := ref[0], ref[1], ref[2]
	for ; n < 0; n++ {
		d--
		if d < 1 {
			m--
			if m < 1 {
				m = 12
				y--
			}
			d = monthDays[m]
			if m == 2 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
				d = 28
			}
		}
	}
	return y, m, d
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// phraseKey names a firstPhrase search: the list of messages searched
// ('u' user messages, 't' textMsgs) and the phrase.
type phraseKey struct {
	list   byte
	phrase string
}

// phraseMemo is how far a firstPhrase search read its list (scanned
// entries) and the first message found to hold the phrase, with its span
// (msg -1: none of those read).
type phraseMemo struct {
	scanned, msg, start, end int32
}

// firstPhrase is the first message of msgs (c.userMsgs or c.textMsgs,
// named by list) before msg that holds the phrase (as phraseInMsg finds
// its phraseWords), with the span. Each message of the list is read at most
// once per phrase and trajectory, so values looked up at every decision do
// not re-read the conversation each time.
func (c *checker) firstPhrase(list byte, msgs []int32, phrase string, msg int) (int32, int, int, bool) {
	if c.phraseFirst == nil {
		c.phraseFirst = map[phraseKey]phraseMemo{}
	}
	k := phraseKey{list, phrase}
	pm, ok := c.phraseFirst[k]
	if !ok {
		pm.msg = -1
	}
	var words []string
	for pm.msg < 0 && int(pm.scanned) < len(msgs) && int(msgs[pm.scanned]) < msg {
		if words == nil {
			words = phraseWords(phrase)
		}
		m := msgs[pm.scanned]
		if s, e, ok := c.phraseInMsg(m, words); ok {
			pm.msg, pm.start, pm.end = m, int32(s), int32(e)
		}
		pm.scanned++
	}
	c.phraseFirst[k] = pm
	if pm.msg >= 0 && int(pm.msg) < msg {
		return pm.msg, int(pm.start), int(pm.end), true
	}
	return 0, 0, 0, false
}

// emailOnly reports an identifier visible before msg only as the local
// part of an email address ("sophia_silva_7557" in
// "sophia_silva_7557@gmail.com", given by a user who does not remember
// the id): an address is not the id, and taking one for the other is a
// guess nothing visible confirms, so it is vis.weak (ambiguous). o is the
// occurrence the lookup found; every other visible occurrence must be
// one too.
func (c *checker) emailOnly(o occ, v, raw string, msg int) (finding, bool) {
	if o.msg < 0 || len(v) < 3 {
		return finding{}, false
	}
	content := c.t.Messages[o.msg].Content
	if int(o.end) >= len(content) || content[o.end] != '@' {
		return finding{}, false
	}
	for i := 0; i < msg; i++ {
		m := &c.t.Messages[i]
		if m.IsHidden() {
			continue
		}
		for off := 0; ; {
			k := strings.Index(m.Content[off:], v)
			if k < 0 {
				break
			}
			k += off
			off = k + len(v)
			if k > 0 && idByte(m.Content[k-1]) || off < len(m.Content) && idByte(m.Content[off]) {
				continue // inside a longer token
			}
			if off >= len(m.Content) || m.Content[off] != '@' {
				return finding{}, false
			}
		}
	}
	ev, _ := c.visibleEvidence(o, raw)
	ev.Note = "visible only as the name of an email address, not as an id: nothing visible says the id is the address's name"
	return finding{status: StatusWeak, reason: ReasonWeak, sev: sevAmbiguous, ev: ev, ent: -1}, true
}

// idByte reports whether b can continue an identifier token.
func idByte(b byte) bool { return letterByte(b) || digitByte(b) || b == '_' }

// derivedFinding is a value that arithmetic over visible values gives (der
// shows it: "152 + 103 = 255"); ent is the entity it stands for, or -1.
func derivedFinding(der string, ent int32) finding {
	ev := nowhere()
	ev.Found = "derived"
	ev.Derivation = der
	return finding{status: StatusDerived, reason: ReasonDerived, ev: ev, ent: ent}
}
