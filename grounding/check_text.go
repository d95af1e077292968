package grounding

import (
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// checkText checks the values stated in free text: a text reply (field
// "content") or a free-text argument (a think thought, a transfer summary).
// Ids, amounts, dates and times must be supported; small numbers and plain
// words are not checked (they prove and claim little alone). It appends one
// ArgEvidence per checked value and returns the worst severity.
func (c *checker) checkText(d *DecisionResult, field, text string, msg int, reply *mentionBuf, ci *callInfo) int {
	b := reply
	if b == nil {
		b = &c.tbuf
		c.scanProse(text, b)
	}

	// The values checked here are collected in a scratch slice and added
	// to d.Args at once, so a reply's evidence is allocated once at its
	// final size instead of growing (ArgEvidence is large).
	found := c.found[:0]
	args := c.argScratch[:0]
	base := len(d.Args)
	var stated []float64
	sev := sevOK
	for i := range b.ms {
		m := &b.ms[i]
		span := text[m.start:m.end]
		var f finding
		role := ""
		switch m.kind {
		case mDate, mTime:
			role = RoleDatetime
			f = c.keyedSupport(string(b.key(m)), span, msg, RoleDatetime)
		case mMoney:
			if m.small {
				continue
			}
			role = RoleAmount
			f = c.amountSupport(m.num, fmtNum(m.num), field, msg, true)
		case mNum:
			if m.small || m.norm == nkNumberWord || m.norm == nkOrdinal {
				continue
			}
			if m.isInt && m.num >= 10000 && onlyDigits(span) {
				role = RoleIdentifier
				f = c.identSupport(argLeaf{kind: 's', s: span, raw: c.quoteOut(span), path: field}, ArgProfile{Role: RoleIdentifier}, d, ci, msg, true)
			} else {
				role = RoleAmount
				f = c.amountSupport(m.num, fmtNum(m.num), field, msg, true)
				if f.status == StatusUnsupported && len(span) == 4 && onlyDigits(span) && afterLastFourLead(text, int(m.start)) {
					// A card's last four that no last_four holds: the end
					// of an id ("Gift Card ending in 1784" for
					// gift_card_1591784), a string to find.
					// Found nowhere, it stays an unsupported number.
					if g := c.identSupport(argLeaf{kind: 's', s: span, raw: c.quoteOut(span), path: field}, ArgProfile{Role: RoleIdentifier}, d, ci, msg, true); g.status != StatusUnsupported {
						role, f = RoleIdentifier, g
					}
				}
				if f.status == StatusUnsupported && m.isInt && m.num >= 0 && m.num <= 24 {
					// "(16 - 13)": hours of visible clock times.
					h := int(m.num)
					if id, o, how := c.lookup([]string{string(appendTimeKey(nil, h%24, 0))}, false, msg); how == howSup {
						ev, _ := c.visibleEvidence(o, span)
						ev.Normalization = strconv.Quote(c.spanText(o)) + " → " + span + " (the hour of a visible time)"
						f = finding{status: StatusNormalized, reason: ReasonNormalized, ev: ev, ent: id}
					}
				}
			}
		case mWord:
			if m.norm != nkNone {
				continue
			}
			strength := c.idLike(span)
			if strength == 0 {
				continue
			}
			role = RoleIdentifier
			f = c.identSupport(argLeaf{kind: 's', s: span, raw: c.quoteOut(span), path: field}, ArgProfile{Role: RoleIdentifier}, d, ci, msg, true)
			if strength == 1 && f.sev == sevFail && f.status == StatusUnsupported {
				f.sev = sevAmbiguous // an all-caps word may be a plain word
			}
		default:
			continue
		}
		if field == "content" && role == RoleAmount && f.status == StatusNormalized && strings.HasSuffix(f.ev.Normalization, "(sign)") &&
			!refundWordNear(text, int(m.start), int(m.end)) {
			// Visible only as money going back (a refund, a negative
			// payment), stated with no word that says so: the reply may
			// be telling the user a refund is a charge.
			f.status, f.reason, f.sev = StatusUnsupported, ReasonUnsupported, sevAmbiguous
			f.ev.Note = "visible only with the opposite sign (money going back), and the reply says nothing of a refund around it"
		}
		if field == "content" && role == RoleAmount && (f.status == StatusLiteral || f.status == StatusNormalized) &&
			isPricePath(f.ev.JSONPath) && differenceWordNear(text, int(m.start), int(m.end)) {
			// "A price difference of $146" where $146 is one fare of a
			// visible record: the agent states the new price as the
			// difference. A difference must come out of arithmetic over
			// visible amounts (or amounts this reply stated).
			// (A difference of amounts this reply stated is found below.)
			if der, ok := c.derive(m.num, msg); ok {
				f = derivedFinding(der, -1)
			} else {
				f.status, f.reason, f.sev = StatusUnsupported, ReasonUnsupported, sevFail
				f.ev.Note = "stated as a difference, but it is one price of a visible record, not a difference of visible amounts"
			}
		}
		if field == "content" && role == RoleAmount && f.status != StatusLiteral && f.status != StatusNormalized && f.status != StatusDerived {
			// A total of values the reply itself stated above ("$51 … $55
			// … in total $106").
			if der, ok := sumOfStated(stated, m.num); ok {
				f = derivedFinding(der+" (stated above in this reply)", -1)
			}
		}
		if role == RoleAmount && (f.status == StatusLiteral || f.status == StatusNormalized || f.status == StatusDerived) {
			stated = append(stated, m.num)
			if field == "content" {
				c.stated = append(c.stated, numOcc{v: m.num, msg: int32(msg), start: m.start, end: m.end})
			}
		}
		if f.sev > sev {
			sev = f.sev
		}
		found = append(found, checked{arg: base + len(args), ent: f.ent, status: f.status})
		c.keyBuf = append(append(c.keyBuf[:0], field...), '[')
		c.keyBuf = append(strconv.AppendInt(c.keyBuf, int64(m.start), 10), ':')
		c.keyBuf = append(strconv.AppendInt(c.keyBuf, int64(m.end), 10), ']')
		args = append(args, ArgEvidence{
			Path:   c.out.cut(c.keyBuf), // field[start:end]
			Value:  c.vals.quote(span),
			Role:   role,
			Status: f.status,
			Reason: f.reason,
			Where:  f.ev,
		})
	}
	if len(args) > 0 {
		if d.Args == nil {
			d.Args = c.argChunks.take(len(args))
		}
		d.Args = c.argChunks.add(d.Args, args...)
	}
	clear(args) // drop references to this text's strings
	c.argScratch = args[:0]
	defer func() { c.found = found[:0] }()
	if reply == nil && field != "content" {
		return sev
	}
	if s := c.checkClaims(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkReport(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkCharges(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkCounts(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkSameDay(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkOriginalPayment(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkUpcomingTotal(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkItemOptions(d, text, msg); s > sev {
		sev = s
	}
	if s := c.checkRecordFacts(d, text, msg); s > sev {
		sev = s
	}
	// Choice in replies: a reply that proposes exactly one of several
	// visible candidates of a kind (a payment method) made a choice; one
	// that lists several presents options.
	for _, kr := range c.rt.kindList {
		if !kr.spec.Choice || !kr.spec.InText {
			continue
		}
		ks := c.kindSetOf(kr)
		if ks == nil || len(ks.cands) <= 1 {
			continue
		}
		mentioned := map[int32][]int{}
		for k, x := range found {
			if x.ent < 0 || (x.status != StatusLiteral && x.status != StatusNormalized) {
				continue
			}
			if _, ok := ks.pos[x.ent]; ok {
				mentioned[x.ent] = append(mentioned[x.ent], k)
			}
		}
		if len(mentioned) != 1 {
			continue
		}
		for ent, idxs := range mentioned {
			if _, ok := c.singledOut(kr, ks, ks.pos[ent], ci, msg); ok {
				continue
			}
			if c.ents[ent].recordVal {
				continue // describes the record just read, does not choose
			}
			for _, k := range idxs {
				a := &d.Args[found[k].arg]
				if contra, why := c.contradicts(kr, ks, ks.pos[ent], msg); contra {
					a.Status, a.Reason = StatusContradiction, ReasonContradiction
					a.Where.Note = why
					sev = sevFail
					continue
				}
				a.Status, a.Reason = StatusChoice, ReasonChoice
				a.Where.Note = "one of " + strconv.Itoa(len(ks.cands)) + " visible " + kr.name + " candidates; nothing visible singled it out"
				s := sevAmbiguous
				if c.rt.choiceFail {
					s = sevFail
				}
				if s > sev {
					sev = s
				}
			}
		}
	}
	return sev
}

// checked is a value checkText added to d.Args: where, and what it matched.
type checked struct {
	arg    int // index in d.Args
	ent    int32
	status string
}

// scanProse scans text as prose into b.
func (c *checker) scanProse(text string, b *mentionBuf) {
	b.reset()
	saved := c.sc.out
	c.sc.out = b
	c.sc.ctx = mention{obj: -1, valObj: -1}
	c.sc.scan(text, 0)
	c.sc.pendingMD = c.sc.pendingMD[:0]
	c.sc.out = saved
}

// idLike says whether a word in text looks like an identifier: 2 for a
// strong shape (letters and digits, an email, #W123…, a knowledge value such
// as an airport code), 1 for an all-caps word of five or more letters
// (HATHAT) that might be a plain word, 0 otherwise.
func (c *checker) idLike(s string) int {
	if len(s) < 3 || len(s) > 64 {
		return 0
	}
	// Most words of prose are lower-case letters only, which no rule below
	// accepts (no digit, '@', '#' or capital).
	k := 0
	for k < len(s) && s[k]-'a' < 26 {
		k++
	}
	if k == len(s) {
		return 0
	}
	letters, digits, upper, other := 0, 0, 0, 0
	dash := false
	at, dot := -1, -1 // first '@' and '.'
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'A' && ch <= 'Z':
			letters++
			upper++
		case ch >= 'a' && ch <= 'z':
			letters++
		case digitByte(ch):
			digits++
		case ch == '-':
			dash = true
		case ch == '@':
			if at < 0 {
				at = i
			}
		case ch == '.':
			if dot < 0 {
				dot = i
			}
		case ch == '_' || ch == '#':
		default:
			other++
		}
	}
	if other > 0 {
		return 0
	}
	if at > 0 && dot > 0 { // an email
		return 2
	}
	if letters > 0 && digits > 0 {
		if dash && upper == 0 {
			return 0 // "24-hour", "5-day"
		}
		return 2
	}
	if s[0] == '#' && digits > 0 {
		return 2
	}
	if upper == len(s) && len(s) == 3 {
		k := [5]byte{'s', ':', lowerByte(s[0]), lowerByte(s[1]), lowerByte(s[2])} // ASCII capitals
		for _, t := range c.rt.knowledge {
			if _, ok := t[string(k[:])]; ok {
				return 2
			}
		}
		return 0
	}
	if upper == len(s) && len(s) >= 5 && !dash {
		return 1
	}
	return 0
}

// keyedSupport checks a date or time mention by its canonical key.
func (c *checker) keyedSupport(key, span string, msg int, role string) finding {
	id, o, how := c.lookup([]string{key}, false, msg)
	switch how {
	case howSup, howEcho, howConfirmed:
		ev, _ := c.visibleEvidence(o, span)
		f := finding{status: StatusLiteral, ev: ev, ent: id, how: how}
		vis := c.spanText(o)
		if !strings.EqualFold(vis, span) {
			f.status, f.reason = StatusNormalized, ReasonNormalized
			ev.Normalization = c.quoteTmp(vis) + " ~ " + c.quoteTmp(span) + " (" + key[2:] + ")"
			f.ev = ev
		} else {
			f.ev.Normalization = ""
		}
		return f
	}
	return c.notVisible([]string{key}, span, ArgProfile{}, how, id, msg, role, true)
}

// doneVerbs are the participles of a reported write; a sentence reports
// one as done when an auxiliary ("has been", "successfully", "I've")
// precedes it closely and nothing makes it hypothetical or negative.
var (
	doneVerbs    = []string{"added", "updated", "cancelled", "canceled", "booked", "changed", "upgraded", "downgraded", "modified", "issued", "sent", "removed", "rebooked", "applied"}
	doneAux      = []string{"has been", "have been", "successfully", "i've", "i have", "we've"}
	hypothetical = []string{"if ", "since ", "not ", "n't ", "unable", "cannot", "might", "would", "could", "once ", "unfortunately", "whether", "should"}

	hypotheticalSet = newPhraseSet(hypothetical)
)

// checkClaims flags sentences of a reply that report a write as done when
// no successful call of a tool doing that action ran before: "one checked
// bag has been added" with no baggage update. The action is recognized by
// the words of the write tools' names (cancel, book, baggage, passenger,
// certificate, …).
func (c *checker) checkClaims(d *DecisionResult, text string, msg int) int {
	sev := sevOK
	// A done verb in the text is one in its lowered form: the gate's.
	if !c.mayHold(text, msg, gateDone) || !mayReportDone(text) {
		return sev
	}
	// An ASCII reply's sentences lowered are slices of the lowered reply.
	lowText := ""
	if lt := c.lowOf(msg); lt.ascii && text == c.t.Messages[msg].Content {
		lowText = lt.low
	}
	start := 0
	for start < len(text) {
		end := start
		for end < len(text) && text[end] != '.' && text[end] != '!' && text[end] != '\n' && text[end] != '?' {
			end++
		}
		sentence := text[start:end]
		low := ""
		if lowText != "" {
			low = lowText[start:end]
		} else {
			// strings.ToLower, into the scratch slab: only reportsDone
			// reads it.
			c.lowBuf = appendLower(c.lowBuf[:0], sentence)
			low = c.slab.cut(c.lowBuf)
		}
		if end < len(text) {
			end++
		}
		s0 := start
		start = end
		if !reportsDone(low) {
			continue
		}
		named, done := "", false
		// The sentence's word stems, once for all the tools' words (stemIn
		// for each word stemmed every word of the sentence again).
		c.stemBuf = c.appendStems(c.stemBuf[:0], sentence)
		for _, wt := range c.rt.writeWords {
			name := wt.tool
			for _, w := range wt.words {
				if !slices.ContainsFunc(c.stemBuf, func(st string) bool { return stemMatch(st, w) }) {
					continue
				}
				if named == "" {
					named = w
				}
				if c.succeededBefore(msg, func(n string, _ string) bool { return n == name }) {
					done = true
				}
			}
		}
		if named == "" || done {
			continue
		}
		d.Args = c.argChunks.add(d.Args, c.unsupportedSpan(s0, sentence, "reports a "+named+" action as done; no successful call before it did that"))
		sev = sevAmbiguous
	}
	return sev
}

// unevidencedWords are the words of a reported value that need no record:
// what a report of a successful write may say of it (its success is the
// evidence: "confirmed", "booked") and function words ("with", "the").
var unevidencedWords = []string{"confirmed", "complete", "completed", "success", "successful", "successfully", "done", "booked",
	"cancelled", "canceled", "updated", "changed", "active", "processed", "yes", "none", "with", "your", "and", "the", "for"}

// checkReport flags the "Label: value" lines of a reply that reports a
// write it has just made (the message before it is a successful write's
// observation) when the line states something the write recorded nothing
// of: "Seats: Aisle and middle seat together" after a booking whose
// arguments and result hold no seat. A line is left alone when it has a
// digit (its ids, amounts, dates and times are checked as values), when a
// word of its label names a field of the write's arguments or result
// ("Baggage" and total_baggages), or when a word of its value (other than
// the label's own words and unevidencedWords) is found in the write's record
// or in a visible tool result before it ("Membership: Gold" after
// get_user_details said gold). What the user asked for is not evidence
// that it was done.
func (c *checker) checkReport(d *DecisionResult, text string, msg int) int {
	if msg == 0 || strings.IndexByte(text, ':') < 0 {
		return sevOK
	}
	var write *callInfo
	for k := len(c.calls) - 1; k >= 0; k-- {
		if ci := &c.calls[k]; ci.obs == msg-1 {
			if t, ok := c.rt.tools[ci.name]; ok && !ci.err && (t.action == ActionWrite || t.action == ActionIrreversibleWrite) {
				write = ci
			}
			break
		}
	}
	if write == nil {
		return sevOK
	}
	record := "" // the write's arguments and result lowered, once a line needs them
	sev := sevOK
	for start := 0; start < len(text); {
		end := start + strings.IndexByte(text[start:], '\n')
		if end < start {
			end = len(text)
		}
		line := text[start:end]
		s0 := start
		start = end + 1
		colon := strings.IndexByte(line, ':')
		if colon < 0 || strings.IndexFunc(line, func(r rune) bool { return r >= '0' && r <= '9' }) >= 0 {
			continue
		}
		labelWords := reportWords(line[:colon])
		if len(labelWords) == 0 || len(labelWords) > 3 {
			continue
		}
		valueWords := reportWords(line[colon+1:])
		if len(valueWords) == 0 {
			continue
		}
		if record == "" {
			record = strings.ToLower(write.args + " " + c.t.Messages[write.obs].Content)
		}
		if slices.ContainsFunc(labelWords, func(w string) bool { return strings.Contains(record, stem(w)) }) {
			continue
		}
		supported, cut := false, false
		for _, w := range valueWords {
			if slices.Contains(unevidencedWords, w) || slices.ContainsFunc(labelWords, func(l string) bool { return stemMatch(stem(l), stem(w)) }) {
				continue
			}
			if strings.Contains(record, w) {
				supported = true
				break
			}
			found, stop := c.inToolResult(w, msg)
			if found {
				supported = true
				break
			}
			cut = cut || stop
		}
		if supported {
			continue
		}
		note := "reports " + strings.Join(labelWords, " ") + " as part of the " + write.name +
			" just made (message " + strconv.Itoa(write.msg) + "); neither its arguments nor its result say so"
		if cut {
			limit := strconv.Itoa(maxReportSearch) + " bytes"
			if maxReportSearch >= 1<<20 {
				limit = strconv.Itoa(maxReportSearch>>20) + " MiB"
			}
			note += " (earlier tool results not all searched: this trajectory's searches read their limit of " + limit + ")"
		}
		d.Args = c.argChunks.add(d.Args, c.unsupportedSpan(s0, line, note))
		sev = sevAmbiguous
	}
	return sev
}

// unsupportedSpan is the evidence of a reply's span [start, start+len(span))
// that nothing visible supports, with note saying what it claims.
func (c *checker) unsupportedSpan(start int, span, note string) ArgEvidence {
	ev := nowhere()
	ev.Note = note
	return ArgEvidence{
		Path:   "content[" + strconv.Itoa(start) + ":" + strconv.Itoa(start+len(span)) + "]",
		Value:  c.vals.quote(strings.TrimSpace(span)),
		Role:   RoleFreeText,
		Status: StatusUnsupported,
		Reason: ReasonUnsupported,
		Where:  ev,
	}
}

// contradictedSpan is unsupportedSpan for a span that what the agent saw
// contradicts (vis.contradiction).
func (c *checker) contradictedSpan(start int, span, note string) ArgEvidence {
	a := c.unsupportedSpan(start, span, note)
	a.Status, a.Reason = StatusContradiction, ReasonContradiction
	return a
}

// reportWords are the lower-cased words (runs of ASCII letters) of s:
// total_baggages → [total baggages].
func reportWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') })
}

// inToolResult reports whether a visible tool result before message msg
// contains w (lower-cased). A substring search has no index, and a reply
// after each of thousands of writes can ask it for many words, so the
// searches of one trajectory read at most maxReportSearch bytes; past that
// cut is true and the word counts as not found (the line goes to a human,
// never passes unread).
func (c *checker) inToolResult(w string, msg int) (found, cut bool) {
	for i := 0; i < msg; i++ {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() {
			continue
		}
		low := c.lowerContent(i)
		if c.reportRead+len(low) > maxReportSearch {
			return false, true
		}
		c.reportRead += len(low)
		if strings.Contains(low, w) {
			return true, false
		}
	}
	return false, false
}

// maxReportSearch is how many bytes inToolResult reads per trajectory; one
// trajectory of the real τ-bench logs read at most 10 KB (airline) and
// 22 KB (retail).
var maxReportSearch = 64 << 20 // a var for the tests

// mayReportDone is a quick test before the sentence-by-sentence one: does
// text contain one of doneVerbs? All but "sent" end in "ed", so one pass
// over the "ed"s of the text tests them together (reportsDone relies on
// that too).
func mayReportDone(text string) bool {
	for off := 0; ; {
		k := strings.Index(text[off:], "ed")
		if k < 0 {
			break
		}
		end := off + k + 2
		for _, v := range doneVerbs {
			if len(v) <= end && text[end-len(v):end] == v {
				return true
			}
		}
		off += k + 1
	}
	return strings.Contains(text, "sent")
}

// fieldsN returns the first n of strings.Fields(s), appended to buf.
func fieldsN(s string, n int, buf []string) []string {
	start := -1
	for i := 0; i < len(s) && len(buf) < n; {
		r, w := rune(s[i]), 1
		space := false
		if r < utf8.RuneSelf {
			space = asciiSpace[r]
		} else {
			r, w = utf8.DecodeRuneInString(s[i:])
			space = unicode.IsSpace(r)
		}
		switch {
		case space && start >= 0:
			buf = append(buf, s[start:i])
			start = -1
		case !space && start < 0:
			start = i
		}
		i += w
	}
	if start >= 0 && len(buf) < n {
		buf = append(buf, s[start:])
	}
	return buf
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

// asciiLower lower-cases the ASCII letters of s, byte for byte.
func asciiLower(s string) string {
	if !hasASCIIUpper(s) {
		return s
	}
	b := []byte(s)
	lowerASCIIInPlace(b)
	return string(b)
}

// reportsDone reports whether a lower-cased sentence states that a write
// happened.
func reportsDone(low string) bool {
	// Both tests are pure: the done verbs, which few sentences have, are
	// looked for first, the hypothetical phrases only in a sentence with one.
	return hasDoneVerb(low) && !hypotheticalSet.contains(low)
}

// hasDoneVerb reports whether a lower-cased sentence has a done verb closely
// after an auxiliary (doneAt).
func hasDoneVerb(low string) bool {
	// Every occurrence of a done verb, found as in mayReportDone: the "ed"
	// verbs at the "ed"s of the sentence, then "sent".
	for off := 0; ; {
		k := strings.Index(low[off:], "ed")
		if k < 0 {
			break
		}
		end := off + k + 2
		off += k + 1
		for _, v := range doneVerbs {
			if len(v) <= end && low[end-len(v):end] == v && doneAt(low, end-len(v), v) {
				return true
			}
		}
	}
	for off := 0; ; {
		k := strings.Index(low[off:], "sent")
		if k < 0 {
			break
		}
		k += off
		off = k + 1
		if doneAt(low, k, "sent") {
			return true
		}
	}
	return false
}

// doneAt reports whether the verb v at k of a lower-cased sentence is a
// whole word closely preceded by an auxiliary ("has been", "successfully").
func doneAt(low string, k int, v string) bool {
	if k+len(v) < len(low) && letterByte(low[k+len(v)]) {
		return false
	}
	from := k - 24
	if from < 0 {
		from = 0
	}
	for _, a := range doneAux {
		if strings.Contains(low[from:k], a) {
			return true
		}
	}
	return false
}

// succeededBefore reports whether a call that ran without error, and whose
// observation came back, happened before msg and satisfies match (given the
// tool's name and the decoded arguments). changedBefore, anySucceededBefore
// and the "reports an action as done" rule all ask this one question.
func (c *checker) succeededBefore(msg int, match func(name, args string) bool) bool {
	for k := range c.calls {
		ci := &c.calls[k]
		if ci.msg >= msg {
			break
		}
		if !ci.err && ci.obs >= 0 && ci.obs < msg && match(c.t.Messages[ci.msg].ToolCalls[ci.call].Name, ci.args) {
			return true
		}
	}
	return false
}

// countLeads start a count over a set of the user's entities when a number
// follows ("you have two business reservations", "all of your
// reservations", "found three reservations").
var countLeads = []string{"you have", "there are", "found", "only", "all of your", "all your", "none of your", "both of your", "both your"}

var countLeadSet = newPhraseSet(countLeads)

// countedStems returns the stems of the words low (lower-cased) counts:
// after a lead, within five words a number word or "all"/"none", then
// within four more words the counted word. A reply counts the entities of
// a kind when one of them matches the kind's stem (stemMatch); the stems
// are gathered once for all kinds.
func countedStems(low string) []string {
	var buf [8]string
	var out []string
	// One pass finds every lead (countLeadSet.each), instead of a
	// strings.Index pass per lead.
	countLeadSet.each(low, func(k int, lead string) bool {
		words := fieldsN(low[k+len(lead):], 8, buf[:0])
		quant := strings.HasPrefix(lead, "all") || strings.HasPrefix(lead, "none") || strings.HasPrefix(lead, "both")
		for i, w := range words {
			w = strings.Trim(w, ".,:;!?*()")
			if _, ok := numberWord([]byte(w)); ok && i < 3 {
				quant = true
			}
			if onlyDigits(w) && i < 3 {
				quant = true
			}
			if quant {
				out = append(out, stem(w))
			}
		}
		return true
	})
	return out
}

// checkCounts flags a reply that counts or summarizes the user's entities
// of a kind (reservations) while some of the ones listed to the agent were
// never read: the claim rests on what the agent did not look at.
func (c *checker) checkCounts(d *DecisionResult, text string, msg int) int {
	// Only a kind with at least two candidates before msg, some read and
	// some not, can be flagged: the text is searched for counts only when
	// one is.
	if !c.mayHold(text, msg, gateCounts) {
		return sevOK // no count lead: countedStems would find nothing
	}
	flaggable := false
	for _, kr := range c.rt.kindList {
		if kr.spec.Choice {
			if unread, _ := c.unreadBefore(kr, msg); unread > 0 {
				flaggable = true
				break
			}
		}
	}
	if !flaggable {
		return sevOK
	}
	// The leads are lower-case ASCII: they are matched in the text with its
	// ASCII letters lowered, ignoring case as far as ASCII goes.
	fold, low := "", ""
	if lt := c.lowOf(msg); text == c.t.Messages[msg].Content {
		low = lt.low
		if !lt.ascii {
			fold = lt.foldOf(text, &c.slab)
		}
	} else { // a free-text argument named content
		fold, low = asciiLower(text), strings.ToLower(text)
	}
	// ASCII text lowered is its fold: countedStems finds no lead in it when
	// there is none, without a pass of its own.
	if fold != "" && !countLeadSet.contains(fold) {
		return sevOK
	}
	var counted []string
	countedDone := false
	for _, kr := range c.rt.kindList {
		if !kr.spec.Choice {
			continue
		}
		unread, _ := c.unreadBefore(kr, msg)
		if unread == 0 {
			continue
		}
		if !countedDone {
			counted, countedDone = countedStems(low), true
		}
		if ks := stem(kr.name); !slices.ContainsFunc(counted, func(w string) bool { return stemMatch(w, ks) }) {
			continue
		}
		ev := nowhere()
		ev.Note = "speaks about the user's " + kr.name + "s while " + strconv.Itoa(unread) + " listed ones were never read"
		d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "content", Value: c.vals.quote(clip(strings.TrimSpace(text), 80)), Role: RoleFreeText,
			Status: StatusUnsupported, Reason: ReasonUnsupported, Where: ev})
		return sevAmbiguous
	}
	return sevOK
}

// unreadBefore counts the candidates of kind kr listed before msg that no
// successful read was keyed by, when there are at least two candidates and
// one of them was read; else it returns 0.
func (c *checker) unreadBefore(kr *kindRuntime, msg int) (int, bool) {
	ks := c.kindSetOf(kr)
	if ks == nil || len(ks.cands) < 2 {
		return 0, false
	}
	unread := 0
	readable := false
	for _, cd := range ks.cands {
		if int(cd.msg) >= msg {
			continue
		}
		if c.ents[cd.ent].readKey {
			readable = true
		} else {
			unread++
		}
	}
	if !readable {
		return 0, false
	}
	return unread, true
}

// sumOfStated finds v as the sum or difference of two (or the sum of three)
// supported numbers stated earlier in the same text.
func sumOfStated(xs []float64, v float64) (string, bool) {
	const eps = 1e-6
	if len(xs) > 12 {
		xs = xs[len(xs)-12:]
	}
	for i := range xs {
		for j := i + 1; j < len(xs); j++ {
			if math.Abs(xs[i]+xs[j]-v) < eps {
				return fmtNum(xs[i]) + " + " + fmtNum(xs[j]) + " = " + fmtNum(v), true
			}
			if math.Abs(math.Abs(xs[i]-xs[j])-v) < eps {
				return fmtNum(math.Max(xs[i], xs[j])) + " − " + fmtNum(math.Min(xs[i], xs[j])) + " = " + fmtNum(v), true
			}
			for k := j + 1; k < len(xs); k++ {
				if math.Abs(xs[i]+xs[j]+xs[k]-v) < eps {
					return fmtNum(xs[i]) + " + " + fmtNum(xs[j]) + " + " + fmtNum(xs[k]) + " = " + fmtNum(v), true
				}
			}
		}
	}
	return "", false
}

// isPricePath reports whether a JSON path ends at a price: "prices.economy",
// "flights[0].price", "[1].prices.business".
func isPricePath(p string) bool {
	k := strings.LastIndexAny(p, ".]")
	last := p[k+1:]
	if last == "price" {
		return true
	}
	if k > 0 && p[k] == '.' {
		j := strings.LastIndexAny(p[:k], ".]")
		return p[j+1:k] == "prices"
	}
	return false
}

// differenceWordNear reports whether the reply calls the amount at
// text[start:end] a difference: right after "difference" ("Price
// Difference: $146", "the price difference of $146") or right before it
// ("$146 price difference"). An amount on a line that shows its
// arithmetic ("$164.28 - $137.94 = $26.34", "$46.66 vs. $46.85") is an
// operand, not the difference.
func differenceWordNear(text string, start, end int) bool {
	lo, hi := lineAround(text, start, end, 80, 80)
	if !strings.Contains(text[lo:hi], "ifference") && !strings.Contains(text[lo:hi], "IFFERENCE") {
		return false // most amounts: no lowering needed to see there is no "difference"
	}
	line := asciiLower(text[lo:hi])
	if strings.ContainsAny(line, "=−") || strings.Contains(line, " - $") || strings.Contains(line, " vs") {
		return false
	}
	before := line[:start-lo]
	if k := strings.LastIndex(before, "difference"); k >= 0 && onlyJoiners(before[k+len("difference"):], " *:(+-", "of", "is") {
		return true
	}
	after := line[end-lo:]
	k := strings.Index(after, "difference")
	return k >= 0 && onlyJoiners(after[:k], " *", "price", "fare", "cost", "in")
}

// onlyJoiners reports whether s holds nothing but the bytes of punct
// ("**: ", " (+") and the words given.
func onlyJoiners(s, punct string, words ...string) bool {
	if len(s) > 24 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !strings.ContainsRune(punct, r) {
			return false
		}
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if !slices.Contains(words, w) {
			return false
		}
	}
	return true
}

// refundWords say that money goes back to the user.
var refundWords = []string{"refund", "credit", "reimburs", "returned", "back to", "receive", "get back", "saving", "save", "cheaper", "lower", "less", "reduc", "decrease"}

// refundWordNear reports whether the line around text[start:end] (up to 100
// bytes before it and 60 after) has one of refundWords.
func refundWordNear(text string, start, end int) bool {
	lo, hi := lineAround(text, start, end, 100, 60)
	return containsAny(asciiLower(text[lo:hi]), refundWords)
}

// lineAround bounds the line holding text[start:end], at most before bytes
// before it and after bytes after it.
func lineAround(text string, start, end, before, after int) (lo, hi int) {
	lo, hi = max(0, start-before), min(len(text), end+after)
	if k := strings.LastIndexByte(text[lo:start], '\n'); k >= 0 {
		lo += k + 1
	}
	if k := strings.IndexByte(text[end:hi], '\n'); k >= 0 {
		hi = end + k
	}
	return lo, hi
}

// occurrences yields the index of each occurrence of sub in s, left to
// right, each search starting after the previous occurrence.
func occurrences(s, sub string) iter.Seq[int] {
	return func(yield func(int) bool) {
		for off := 0; off <= len(s); {
			k := strings.Index(s[off:], sub)
			if k < 0 {
				return
			}
			k += off
			if !yield(k) {
				return
			}
			off = k + max(len(sub), 1)
		}
	}
}

// sentences yields the bounds [start, end) of each sentence of s, split at
// '.', '!', '?' and newlines; end is the index of the terminator, or len(s)
// for a last sentence without one. The sentence checks of the replies walk
// text with it.
func sentences(s string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for start := 0; start < len(s); {
			end := start + strings.IndexAny(s[start:], ".!?\n")
			if end < start {
				end = len(s)
			}
			if !yield(start, end) {
				return
			}
			start = end + 1
		}
	}
}

// afterLastFourLead reports whether text[:at] ends with a lead that
// introduces a card's last four digits ("ending in", "last four: ").
func afterLastFourLead(text string, at int) bool {
	before := strings.TrimRight(text[max(0, at-24):at], " :*-")
	for _, lead := range lastFourLeads {
		if len(before) >= len(lead) && strings.EqualFold(before[len(before)-len(lead):], lead) {
			return true
		}
	}
	return false
}
