package grounding

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// conditions applies the profile's policy conditions (workflow.conditions)
// to a call: a write the visible record of its entity does not allow (a
// cancellation booked more than 24 hours ago, in economy, without insurance
// covering the reason the user gave) is ambiguous. Not a fail: the rule is
// the policy's, the engine reads it off one record, and reference actions
// of the logs sometimes break it; a human decides. The finding is a
// vis.unsupported evidence on the path "policy": nothing visible supports
// that the write is allowed.
func (c *checker) conditions(d *DecisionResult, call *ToolCall, msg int) int {
	sev := sevOK
	for i := range c.rt.conditions {
		r := &c.rt.conditions[i]
		if !r.tools[call.Name] || !call.ArgumentsValid() {
			continue
		}
		if r.route != nil && r.route.OfCall {
			// A booking: its own arguments state the route it books.
			if why, off := c.offRoute(r.route, record(call.Arguments), call, msg); off {
				d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
					Status: StatusUnsupported, Reason: ReasonUnsupported,
					Where: againstPolicy(fmt.Sprintf("the call books %s; the policy allows %s only when %s", why, call.Name, r.rule))})
				sev = sevAmbiguous
			}
			continue
		}
		val, ok := record(call.Arguments).str(r.arg)
		if !ok || val == "" {
			continue
		}
		rec, recMsg := c.latestRecord(r.arg, val, msg)
		if recMsg < 0 {
			continue
		}
		var why string
		if r.route != nil {
			w, off := c.offRoute(r.route, rec, call, msg)
			if !off {
				continue
			}
			why = w
		} else {
			w, allowed := c.allowedBy(r, rec, msg)
			if allowed {
				continue
			}
			why = w
		}
		ev := againstPolicy(fmt.Sprintf("the record of %s (message %d) shows %s; the policy allows %s only when %s",
			val, recMsg, why, call.Name, r.rule))
		ev.Record = c.recordRef(val, recMsg)
		d.Args = c.argChunks.add(d.Args, ArgEvidence{
			Path:   "policy",
			Value:  c.vals.quote(val),
			Role:   RoleFreeText,
			Status: StatusUnsupported,
			Reason: ReasonUnsupported,
			Where:  ev,
		})
		sev = sevAmbiguous
	}
	return sev
}

// offRoute reports whether the flights call lists leave the route of rec
// (see RouteRule), and how. It says nothing (false) when the record lacks
// the route fields or a flight's endpoints are visible nowhere.
func (c *checker) offRoute(rr *RouteRule, rec record, call *ToolCall, msg int) (string, bool) {
	origin, ok1 := rec.str(rr.Origin)
	dest, ok2 := rec.str(rr.Destination)
	trip, _ := rec.str(rr.Trip)
	if !ok1 || !ok2 || origin == "" || dest == "" {
		return "", false
	}
	var legs []string // origin, destination of each flight, in order
	ok := true
	recordValues(record(call.Arguments), rr.Flights, func(fn string) bool {
		o, d, found := c.flightEndpoints(fn, rr, msg)
		if !found {
			ok = false
			return false
		}
		legs = append(legs, o, d)
		return true
	})
	if !ok || len(legs) == 0 {
		return "", false
	}
	first, last := legs[0], legs[len(legs)-1]
	path := first
	for i := 1; i < len(legs); i += 2 {
		path += "-" + legs[i]
	}
	kind := "a trip"
	switch trip {
	case "round_trip":
		kind = "a round trip"
	case "one_way":
		kind = "a one-way trip"
	}
	off := first != origin
	if trip == "round_trip" {
		reaches := false
		for i := 1; i < len(legs); i += 2 {
			reaches = reaches || legs[i] == dest
		}
		off = off || !reaches || last != origin
	} else {
		off = off || last != dest
	}
	if !off {
		return "", false
	}
	return fmt.Sprintf("%s from %s to %s, while the new flights go %s", kind, origin, dest, path), true
}

// flightEndpoints finds flight number fn in the latest visible successful
// tool result before msg that lists it as a value of an object with the
// route's origin and destination fields (a search result, a record). The
// result is read as written, without decoding; only writes ask, and the
// reading is bounded like inToolResult's.
func (c *checker) flightEndpoints(fn string, rr *RouteRule, msg int) (origin, dest string, ok bool) {
	quoted := `"` + fn + `"`
	for i := msg - 1; i >= 0; i-- {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() {
			continue
		}
		if c.reportRead+len(m.Content) > maxReportSearch {
			return "", "", false
		}
		c.reportRead += len(m.Content)
		if !strings.Contains(m.Content, quoted) || c.isError(m) {
			continue
		}
		if o, d, found := findFlight(m.Content, quoted, rr); found {
			return o, d, true
		}
	}
	return "", "", false
}

// findFlight finds, in the JSON text s, an object that holds quoted (a
// flight number with its quotes) as one of its values and gives the
// route's origin and destination as strings.
func findFlight(s, quoted string, rr *RouteRule) (string, string, bool) {
	for off := 0; ; {
		k := strings.Index(s[off:], quoted)
		if k < 0 {
			return "", "", false
		}
		k += off
		off = k + len(quoted)
		if n := skipSpace(s, off); n < len(s) && s[n] == ':' {
			continue // a key, not a value
		}
		// The object it is a value of: the first unmatched brace before it.
		start, depth := -1, 0
	back:
		for j := k - 1; j >= 0; j-- {
			switch s[j] {
			case '}', ']':
				depth++
			case '{', '[':
				if depth == 0 {
					if s[j] == '{' {
						start = j
					}
					break back
				}
				depth--
			}
		}
		if start < 0 {
			continue
		}
		end := valueEnd(s, start)
		if end < 0 {
			continue
		}
		obj := record(s[start:end])
		o, ok1 := obj.str(rr.Origin)
		d, ok2 := obj.str(rr.Destination)
		if ok1 && ok2 {
			return o, d, true
		}
	}
}

// latestRecord is the latest visible successful tool observation before msg
// that is a JSON object whose top-level field holds val, with its message
// index. It is read as written, without decoding.
func (c *checker) latestRecord(field, val string, msg int) (record, int) {
	x := c.recordsBefore(field, msg)
	i, ok := x.latest[val]
	if !ok {
		return "", -1
	}
	return record(c.t.Messages[i].Content), int(i)
}

// recordRef points at the record of val that latestRecord found at
// message msg. Its top-level field holds val quoted, so the quoted id is
// there (-1 only if written with other escapes); only a finding pays this.
func (c *checker) recordRef(val string, msg int) *RecordRef {
	ref := &RecordRef{Message: msg, ID: val, Start: -1, End: -1}
	if k := strings.Index(c.t.Messages[msg].Content, `"`+val+`"`); k >= 0 {
		ref.Start, ref.End = k+1, k+1+len(val)
	}
	return ref
}

// recordIndex indexes, for one field a policy rule keys records by, the
// visible successful tool results before message upTo: every value the
// field takes at any depth (recordIDs), and per value the latest result
// whose top-level field holds it (latestRecord). Decisions come in message
// order, so it grows forward and the policy rules stay linear in the
// trajectory's size; a query behind upTo rebuilds it.
type recordIndex struct {
	field  string
	upTo   int
	ids    map[string]bool
	lens   []int // the lengths of the ids
	latest map[string]int32
	// namedVal is lastNamedBefore's answer for the messages before namedAt
	// while x held namedN ids (-1: none kept).
	namedAt, namedN int
	namedVal        string
}

// recordsBefore is the field's index over the messages before msg.
func (c *checker) recordsBefore(field string, msg int) *recordIndex {
	var x *recordIndex
	for i := range c.recIdx {
		if c.recIdx[i].field == field {
			x = &c.recIdx[i]
			break
		}
	}
	if x == nil {
		c.recIdx = append(c.recIdx, recordIndex{field: field, ids: map[string]bool{}, latest: map[string]int32{}, namedN: -1})
		x = &c.recIdx[len(c.recIdx)-1]
	}
	if msg < x.upTo {
		clear(x.ids)
		clear(x.latest)
		x.lens = x.lens[:0]
		x.upTo, x.namedN = 0, -1
	}
	for ; x.upTo < msg && x.upTo < len(c.t.Messages); x.upTo++ {
		m := &c.t.Messages[x.upTo]
		if m.Role != RoleTool || m.IsHidden() || c.isError(m) {
			continue
		}
		found := false
		fieldValues(m.Content, field, func(v string) bool {
			found = true
			if v != "" && !x.ids[v] {
				x.ids[v] = true
				if !slices.Contains(x.lens, len(v)) {
					x.lens = append(x.lens, len(v))
				}
			}
			return true
		})
		if !found {
			continue // no key named field: not its record either
		}
		if v, ok := record(m.Content).str(field); ok && v != "" && strings.Contains(m.Content, v) {
			x.latest[v] = int32(x.upTo)
		}
	}
	return x
}

// lastNamedBefore is the id of x that the latest visible user or agent
// message before msg names (lastNamed), "" when none does. While x holds
// the same ids it remembers its last answer, so replies that name no id
// do not each read the whole history again.
func (c *checker) lastNamedBefore(x *recordIndex, msg int) string {
	from, val := 0, ""
	if x.namedN == len(x.ids) && x.namedAt <= msg {
		from, val = x.namedAt, x.namedVal
	}
	for j := msg - 1; j >= from; j-- {
		m := &c.t.Messages[j]
		if (m.Role == RoleUser || m.Role == RoleAssistant) && !m.IsHidden() {
			if v := lastNamed(m.Content, x); v != "" {
				val = v
				break
			}
		}
	}
	x.namedAt, x.namedN, x.namedVal = msg, len(x.ids), val
	return val
}

// resetRecords empties the indexes for a new trajectory, keeping their
// maps.
func (c *checker) resetRecords() {
	for i := range c.recIdx {
		x := &c.recIdx[i]
		clear(x.ids)
		clear(x.latest)
		x.lens = x.lens[:0]
		x.upTo, x.namedN = 0, -1
	}
	c.said = c.said[:0]
	clear(c.itemOpts)
	clear(c.itemIdx)
	c.gates = c.gates[:0]
}

// fieldValues calls f with each string value the JSON text s gives a key
// named field ("reservation_id": "XEHM4B"), at any depth, until f returns
// false. It reads the text as written, without decoding it.
func fieldValues(s, field string, f func(string) bool) {
	for off := 0; ; {
		k := strings.Index(s[off:], field)
		if k < 0 {
			return
		}
		k += off
		off = k + len(field)
		if k == 0 || s[k-1] != '"' || off >= len(s) || s[off] != '"' {
			continue
		}
		j := off + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		if j >= len(s) || s[j] != ':' {
			continue
		}
		j++
		for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
			j++
		}
		if j >= len(s) || s[j] != '"' {
			continue
		}
		e := strings.IndexByte(s[j+1:], '"')
		if e < 0 {
			return
		}
		if !f(s[j+1 : j+1+e]) {
			return
		}
		off = j + 1 + e
	}
}

// allowedBy reports whether the record meets the rule, else what the record
// shows against it.
func (c *checker) allowedBy(r *conditionRuntime, rec record, msg int) (string, bool) {
	if _, ok := c.checkAllowed(r, rec, msg, false); ok {
		return "", true
	}
	return c.checkAllowed(r, rec, msg, true)
}

// checkAllowed is allowedBy's test; with explain it also says why not.
func (c *checker) checkAllowed(r *conditionRuntime, rec record, msg int, explain bool) (string, bool) {
	var shown []string
	if r.unlessPast != "" {
		if now, ok := c.currentTime(); ok {
			today, past := now.Truncate(24*time.Hour), ""
			sameDay := false
			recordValues(rec, r.unlessPast, func(v string) bool {
				at, ok := parseRecordTime(v)
				if ok && at.Before(today) {
					past, sameDay = v, false
					return false
				}
				if ok && at.Before(today.Add(24*time.Hour)) {
					past, sameDay = v, true // keep looking for one already past
				}
				return true
			})
			if past != "" {
				if !explain {
					return "", false
				}
				if sameDay {
					// A flight of the current day may have flown: no
					// visible time or status says whether it has.
					return r.unlessPast + " " + past + " is the current day, and nothing visible says whether it has flown", false
				}
				return r.unlessPast + " " + past + " is already past", false
			}
		}
	}
	if w := r.within; w != nil {
		at, ok1 := parseRecordTime(rec.text(w.Field))
		now, ok2 := c.currentTime()
		if !ok1 || !ok2 {
			return "", true // cannot tell: the rule says nothing
		}
		if now.Sub(at) <= time.Duration(w.Hours*float64(time.Hour)) {
			return "", true
		}
		if explain {
			shown = append(shown, fmt.Sprintf("%s %s, more than %g hours before the current time %s",
				w.Field, rec.text(w.Field), w.Hours, now.Format("2006-01-02 15:04")))
		}
	}
	words := false
	for _, a := range r.allow {
		fieldOK, wordsOK := true, true
		if a.field != "" {
			got := rec.text(a.field)
			fieldOK = slices.ContainsFunc(a.values, func(v string) bool { return strings.EqualFold(v, got) })
			if explain && !hasString(shown, a.field+" "+got) {
				shown = append(shown, a.field+" "+got)
			}
		}
		if a.words != nil {
			wordsOK = c.userSaidAny(a.words, msg)
		}
		if fieldOK && wordsOK {
			return "", true
		}
		words = words || fieldOK && !wordsOK
	}
	if !explain {
		return "", false
	}
	why := strings.Join(shown, ", ")
	if words {
		why += ", and no user message gives a reason the policy accepts"
	}
	return why, false
}

// userSaidAny reports whether a visible user message before msg contains one
// of the phrases.
func (c *checker) userSaidAny(words *phraseSet, msg int) bool {
	var m *saidMemo
	for i := range c.said {
		if c.said[i].words == words {
			m = &c.said[i]
			break
		}
	}
	if m == nil {
		c.said = append(c.said, saidMemo{words: words, first: -1})
		m = &c.said[len(c.said)-1]
	}
	for m.first < 0 && m.scanned < len(c.userMsgs) && int(c.userMsgs[m.scanned]) < msg {
		if i := c.userMsgs[m.scanned]; words.contains(c.lowerContent(int(i))) {
			m.first = i
		}
		m.scanned++
	}
	return m.first >= 0 && int(m.first) < msg
}

// saidMemo remembers, for one phrase set, the first visible user message
// that contains one of its phrases (first, -1: none among the scanned
// first user messages): userSaidAny reads each user message once per set.
type saidMemo struct {
	words   *phraseSet
	scanned int
	first   int32
}

var currentTimeRe = regexp.MustCompile(`(?i)current time is\s+(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)`)

// currentTime is the time the first visible system message states ("The
// current time is 2024-05-15 15:00:00 EST").
func (c *checker) currentTime() (time.Time, bool) {
	if !c.nowDone {
		c.now, c.nowOK = c.findCurrentTime()
		c.nowDone = true
	}
	return c.now, c.nowOK
}

func (c *checker) findCurrentTime() (time.Time, bool) {
	for i := range c.t.Messages {
		m := &c.t.Messages[i]
		if m.Role != RoleSystem || m.IsHidden() {
			continue
		}
		sm := currentTimeRe.FindStringSubmatch(m.Content)
		if sm == nil {
			return time.Time{}, false
		}
		return parseRecordTime(sm[1] + "T" + sm[2])
	}
	return time.Time{}, false
}

// parseRecordTime reads the date-times records and policies write:
// 2024-05-01T05:17:41, 2024-05-01 05:17, 2024-05-01.
func parseRecordTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(strings.Replace(s, " ", "T", 1))
	// The layout by length: a failed time.Parse allocates its error.
	var layout string
	switch len(s) {
	case len("2006-01-02T15:04:05"):
		layout = "2006-01-02T15:04:05"
	case len("2006-01-02T15:04"):
		layout = "2006-01-02T15:04"
	case len("2006-01-02"):
		layout = "2006-01-02"
	default:
		return time.Time{}, false
	}
	t, err := time.Parse(layout, s)
	return t, err == nil
}

// conditionClaims checks what a reply (field "content") or a transfer
// summary says about a conditional write: a sentence that tells the user the
// write is allowed ("you are eligible for a full refund") when the record
// of the entity it is about does not allow it, or that it is not allowed
// ("does not meet the conditions for cancellation") when the record allows
// it, is ambiguous (vis.unsupported on the sentence). The entity is the
// last one the text names, else the last one named by the latest visible
// user or agent message that names one. low is text lower-cased.
func (c *checker) conditionClaims(d *DecisionResult, field, text, low string, msg int) int {
	sev := sevOK
	for i := range c.rt.conditions {
		r := &c.rt.conditions[i]
		if r.claimSet == nil || !c.mayHold(text, msg, r.gate) {
			continue
		}
		// Every claim in the text, in one pass: a sentence holds a claim
		// when one lies within it, so the sentences are not each searched
		// for every phrase.
		occs := c.claimOccs[:0]
		r.claimSet.each(low, func(k int, p string) bool {
			occs = append(occs, claimOcc{start: k, end: k + len(p), kind: r.claimKind[p]})
			return true
		})
		c.claimOccs = occs
		if len(occs) == 0 {
			continue
		}
		ids := c.recordIDs(r.arg, msg)
		if len(ids.ids) == 0 {
			continue
		}
		// The entity a sentence is about: the ones it names, else the last
		// one the text named before it, else the last one the latest
		// visible user or agent message named.
		before := c.lastNamedBefore(ids, msg)
		if r.describe != "" && lastNamed(text, ids) == "" {
			// A reply that names no record may describe one by its
			// flights: that one, rather than the last named before.
			if v := c.describedRecord(r, text, ids, msg); v != "" {
				before = v
			}
		}
		for s0, end := range sentences(low) {
			sent := low[s0:end]
			var kinds uint8
			for _, o := range occs {
				if o.start >= s0 && o.end <= end {
					kinds |= o.kind
				}
			}
			denied := kinds&claimDenied != 0
			if kinds == 0 {
				if v := lastNamed(text[s0:end], ids); v != "" {
					before = v
				}
				continue
			}
			named := allNamed(text[s0:end], ids)
			if len(named) == 0 && strings.HasSuffix(strings.TrimSpace(sent), ":") {
				// "the following reservations cannot be cancelled:"
				// introduces the list after it, up to a blank line.
				para := text[min(end+1, len(text)):]
				if k := strings.Index(para, "\n\n"); k >= 0 {
					para = para[:k]
				}
				named = allNamed(para, ids)
			}
			if len(named) == 0 && before != "" {
				named = []string{before}
			}
			var note string
			var ref *RecordRef
			for _, val := range named {
				before = val
				rec, recMsg := c.latestRecord(r.arg, val, msg)
				if recMsg < 0 {
					continue
				}
				why, allowed := c.allowedBy(r, rec, msg)
				if denied && allowed {
					note = "says the policy does not allow it, but the record of " + val + " (message " + strconv.Itoa(recMsg) +
						") meets the policy: it allows it when " + r.rule
					ref = c.recordRef(val, recMsg)
					break
				}
				if !denied && !allowed {
					note = "says the policy allows it, but the record of " + val + " (message " + strconv.Itoa(recMsg) + ") shows " + why +
						"; the policy allows it only when " + r.rule
					ref = c.recordRef(val, recMsg)
					break
				}
			}
			if note == "" {
				continue
			}
			a := c.unsupportedSpan(s0, text[s0:end], note)
			a.Where.Found, a.Where.Record = "policy", ref
			a.Path = field + a.Path[strings.IndexByte(a.Path, '['):]
			d.Args = c.argChunks.add(d.Args, a)
			sev = sevAmbiguous
		}
	}
	return sev
}

// claimOcc is where a text holds a claims phrase of a condition, and
// whether the phrase denies or allows.
type claimOcc struct {
	start, end int
	kind       uint8
}

const (
	claimDenied uint8 = 1 << iota
	claimAllowed
)

// describedRecord is the one record of ids (its latest visible version
// before msg) some of whose values at r.describe text names, "" when none
// or several are.
func (c *checker) describedRecord(r *conditionRuntime, text string, ids *recordIndex, msg int) string {
	found := ""
	for id := range ids.latest {
		rec, recMsg := c.latestRecord(r.arg, id, msg)
		if recMsg < 0 {
			continue
		}
		named := false
		recordValues(rec, r.describe, func(v string) bool {
			named = len(v) >= 3 && strings.Contains(text, v)
			return !named
		})
		if !named {
			continue
		}
		if found != "" {
			return ""
		}
		found = id
	}
	return found
}

// recordIDs is the index of the values of field in the visible tool
// results before msg (the reservations read so far).
func (c *checker) recordIDs(field string, msg int) *recordIndex {
	return c.recordsBefore(field, msg)
}

// fewIDs is how many ids the name searches try one by one; with more, they
// look each window of the text up instead, so a trajectory that reads
// thousands of records stays linear.
const fewIDs = 16

// allNamed are the ids of x that text names, in order.
func allNamed(text string, x *recordIndex) []string {
	var out []string
	if len(x.ids) <= fewIDs {
		for id := range x.ids {
			if strings.Contains(text, id) {
				out = append(out, id)
			}
		}
	} else {
		for _, n := range x.lens {
			for k := 0; k+n <= len(text); k++ {
				if id := text[k : k+n]; x.ids[id] {
					out = append(out, id)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lastNamed is the id of x that text names last (of ids starting at the
// same place, the smallest), "" when none.
func lastNamed(text string, x *recordIndex) string {
	best, at := "", -1
	if len(x.ids) <= fewIDs {
		for id := range x.ids {
			if k := strings.LastIndex(text, id); k > at || (k == at && k >= 0 && id < best) {
				best, at = id, k
			}
		}
		return best
	}
	for _, n := range x.lens {
		for k := len(text) - n; k >= 0 && k >= at; k-- {
			if id := text[k : k+n]; x.ids[id] {
				if k > at || id < best {
					best, at = id, k
				}
				break
			}
		}
	}
	return best
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// lastFourLeads introduce a card's last four digits in a reply.
var lastFourLeads = []string{"ending in", "ending with", "last four", "last 4"}

// lastFourClaims checks the cards a reply names by their last four digits
// ("charged to your credit card ending in 7334"): the digits must end a
// string some visible tool result holds (a payment method's last_four, a
// gift card's id).
// Digits only the user said are not the record of which card a write
// used: the sentence is ambiguous.
func (c *checker) lastFourClaims(d *DecisionResult, text, low string, msg int) int {
	sev := sevOK
	if !c.mayHold(text, msg, gateLastFour) {
		return sevOK
	}
	last := -1 // where the digits of the last finding start
	for _, lead := range lastFourLeads {
		for k := range occurrences(low, lead) {
			off := k + len(lead)
			j := skipLeadFiller(low, off)
			if j+4 > len(low) || !onlyDigits(low[j:j+4]) || j+4 < len(low) && digitByte(low[j+4]) || j == last {
				continue
			}
			// A last_four value ("7334") or an id that ends in the digits
			// (gift_card_7091239).
			if found, _ := c.inToolResult(low[j:j+4]+`"`, msg); found {
				continue
			}
			last = j
			a := c.unsupportedSpan(k, text[k:j+4], "names a card by last four digits no visible payment method shows: only the user said them, which is not the record of the card a write used")
			a.Where.Found = "policy"
			d.Args = c.argChunks.add(d.Args, a)
			sev = sevAmbiguous
		}
	}
	return sev
}

// skipLeadFiller skips what may stand between a last-four lead and the
// digits: spaces, ":", "-", "*", and the words "digits", "of", "is", "are".
func skipLeadFiller(s string, i int) int {
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == ':' || s[i] == '-' || s[i] == '*') {
			i++
		}
		switch {
		case strings.HasPrefix(s[i:], "digits"):
			i += len("digits")
		case strings.HasPrefix(s[i:], "of "), strings.HasPrefix(s[i:], "is "):
			i += 3
		case strings.HasPrefix(s[i:], "are "):
			i += 4
		default:
			return i
		}
	}
}

// claimContext reports whether a claim's with or with_user phrases hold
// around a reply: with in the reply or in the agent's previous text reply,
// with_user in the latest visible user message before msg (any earlier
// one, with with_user_any).
func (c *checker) claimContext(pc *policyClaimRuntime, low string, msg int) bool {
	if pc.with != nil {
		if pc.with.contains(low) {
			return true
		}
		for i := msg - 1; i >= 0; i-- {
			m := &c.t.Messages[i]
			if m.Role == RoleUser && !m.IsHidden() {
				continue // the user's answer to that reply
			}
			if m.Role == RoleAssistant && !m.IsHidden() && strings.TrimSpace(m.Content) != "" {
				if pc.with.contains(c.lowerContent(i)) {
					return true
				}
				break
			}
		}
	}
	if pc.withUser != nil {
		for k := len(c.userMsgs) - 1; k >= 0; k-- {
			if um := int(c.userMsgs[k]); um < msg {
				if pc.withUser.contains(c.lowerContent(um)) {
					return true
				}
				if !pc.userAny {
					return false
				}
			}
		}
	}
	return false
}

// record is a JSON object observation, read as written.
type record string

// str is the string value of the record's top-level key (its text between
// the quotes, escapes left as written).
func (r record) str(key string) (string, bool) {
	v, ok := topLevelValue(string(r), key)
	if !ok || len(v) < 2 || v[0] != '"' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

// text is the value of key as written: a string's text, else the JSON.
func (r record) text(key string) string {
	if s, ok := r.str(key); ok {
		return s
	}
	v, _ := topLevelValue(string(r), key)
	return v
}

// topLevelValue is the JSON text of the value the object s gives key at its
// top level (a string with its quotes).
func topLevelValue(s, key string) (string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		// Most bytes are none of the five it acts on: one table look-up
		// passes them (the policy rules read whole records this way, 2% of
		// checking the real airline log).
		if !jsonStop[s[i]] {
			continue
		}
		switch s[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := stringEnd(s, i)
			if j < 0 {
				return "", false
			}
			if depth == 1 && j-i-1 == len(key) {
				k := skipSpace(s, j+1)
				if k < len(s) && s[k] == ':' && s[i+1:j] == key {
					start := skipSpace(s, k+1)
					end := valueEnd(s, start)
					if end < 0 {
						return "", false
					}
					return s[start:end], true
				}
			}
			i = j
		}
	}
	return "", false
}

// jsonStop marks the bytes topLevelValue acts on.
var jsonStop = [256]bool{'{': true, '[': true, '}': true, ']': true, '"': true}

// stringEnd is the index of the quote closing the string that opens at i:
// the first quote after it that an odd run of backslashes does not escape
// (a backslash escapes the byte after it, a backslash too).
func stringEnd(s string, i int) int {
	for j := i + 1; j <= len(s); {
		q := strings.IndexByte(s[j:], '"')
		if q < 0 {
			return -1
		}
		q += j
		b := q
		for b > i+1 && s[b-1] == '\\' {
			b--
		}
		if (q-b)%2 == 0 {
			return q
		}
		j = q + 1
	}
	return -1
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// valueEnd is the index just past the JSON value that starts at i.
func valueEnd(s string, i int) int {
	if i >= len(s) {
		return -1
	}
	switch s[i] {
	case '"':
		j := stringEnd(s, i)
		if j < 0 {
			return -1
		}
		return j + 1
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			case '"':
				if j = stringEnd(s, j); j < 0 {
					return -1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' {
		j++
	}
	return j
}

// recordValues calls f with the string values at path in rec, "cabin", or
// "flights[*].date" for a field of each item of an array, until f returns
// false.
func recordValues(rec record, path string, f func(string) bool) {
	head, tail, each := strings.Cut(path, "[*].")
	if !each {
		if v, ok := rec.str(path); ok {
			f(v)
		}
		return
	}
	arr, _ := topLevelValue(string(rec), head)
	fieldValues(arr, tail, f)
}

// policyClaims flags the sentences of a reply (field "content") or a
// transfer summary (field "arguments") that state a rule the profile's
// policy_claims say the policy contradicts.
func (c *checker) policyClaims(d *DecisionResult, field, text, low string, msg int) int {
	sev := sevOK
	// Which lists of which claims the reply holds somewhere, in one pass
	// over it: a claim none of whose sentences can hold all its lists is
	// skipped without reading sentences.
	var held uint64
	if c.rt.claimPhrases != nil {
		if text == c.t.Messages[msg].Content {
			// The gate searched the reply lowered (and ASCII-folded, which
			// can only add lists): what it holds is at least held.
			held = c.gate(msg).held
		} else {
			c.rt.claimPhrases.each(low, func(_ int, p string) bool {
				held |= c.rt.claimBits[p]
				return true
			})
		}
		if held == 0 {
			return sev
		}
	}
	for i := range c.rt.claims {
		pc := &c.rt.claims[i]
		if c.rt.claimPhrases != nil && held&pc.need != pc.need || c.rt.claimPhrases == nil && !pc.first.contains(low) {
			continue
		}
		if pc.repliesOnly && field != "content" {
			continue
		}
		if pc.unlessReply != nil && pc.unlessReply.contains(low) {
			continue
		}
		if pc.unlessUser != nil && c.userSaidAny(pc.unlessUser, msg) {
			continue
		}
		if pc.unlessAfter != nil && c.succeededBefore(msg, func(n, _ string) bool { return pc.unlessAfter[n] }) {
			continue
		}
		if (pc.with != nil || pc.withUser != nil) && !c.claimContext(pc, low, msg) {
			continue
		}
		resultSaid := -1 // unknown until a sentence needs it
		for s0, end := range sentences(low) {
			sent := low[s0:end]
			question := end < len(low) && low[end] == '?'
			if pc.statements && question || pc.questions && !question {
				continue
			}
			// Most sentences of a reply that holds the claim's lists
			// somewhere lack one: the lists are tested before unless (both
			// only skip the sentence).
			all := true
			for _, g := range pc.all {
				if !containsAny(sent, g) {
					all = false
					break
				}
			}
			if !all || containsAny(sent, pc.unless) {
				continue
			}
			if resultSaid < 0 {
				resultSaid = 0
				for _, w := range pc.unlessResult {
					if found, _ := c.inToolResult(w, msg); found {
						resultSaid = 1
						break
					}
				}
			}
			if resultSaid == 1 {
				break
			}
			a := c.unsupportedSpan(s0, text[s0:end], pc.note)
			a.Where.Found = "policy"
			if pc.tools {
				a.Where.Found = "tools"
			}
			if pc.transfer && field == "content" {
				c.offerMsg, c.offerNote = msg, strings.TrimPrefix(pc.note, "states a rule the policy contradicts: ")
			}
			if pc.onlyOffer {
				continue
			}
			if field != "content" {
				a.Path = field + a.Path[strings.IndexByte(a.Path, '['):]
			}
			if pc.fails {
				a.Status, a.Reason = StatusContradiction, ReasonContradiction
				c.addClaimFinding(d, a)
				sev = sevFail
				continue
			}
			c.addClaimFinding(d, a)
			sev = max(sev, sevAmbiguous)
		}
	}
	return sev
}

// addClaimFinding adds a claim's finding on a sentence to d, once: when
// an earlier claim already flagged the same span, the finding that fails
// stays (the sentence reads once in the evidence, with its worst note).
func (c *checker) addClaimFinding(d *DecisionResult, a ArgEvidence) {
	for k := range d.Args {
		if e := &d.Args[k]; e.Path == a.Path && (e.Status == StatusContradiction || e.Status == StatusUnsupported) {
			if e.Status == StatusUnsupported && a.Status == StatusContradiction {
				*e = a
			}
			return
		}
	}
	d.Args = c.argChunks.add(d.Args, a)
}
