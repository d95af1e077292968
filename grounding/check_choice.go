package grounding

import (
	"slices"
	"strconv"
	"strings"
)

// choice applies the "choice is not evidence" rule to a call argument of a
// kind: when several candidates are visible, the one used must have been
// singled out; else the decision made a choice nothing visible justifies.
func (c *checker) choice(f *finding, kind string, d *DecisionResult, ci *callInfo, msg int) {
	kr := c.rt.kinds[kind]
	if kr == nil || !kr.spec.Choice || d == nil || !c.rt.choiceAction[d.Action] || f.ent < 0 {
		return
	}
	ks := c.kindSetOf(kr)
	if ks == nil {
		return
	}
	idx, ok := ks.pos[f.ent]
	if !ok {
		return
	}
	if len(ks.cands) == 1 {
		c.recordOnlyChoice(f, kr, ks, kind, ci, msg)
		return
	}
	if how, ok := c.singledOut(kr, ks, idx, ci, msg); ok {
		if contra, why := c.contradicts(kr, ks, idx, msg); contra {
			// "the original payment method, the credit card ending in
			// 6791" where the original is another card: the user said
			// both, and a human decides which one they meant.
			f.status, f.reason, f.sev = StatusChoice, ReasonChoice, sevAmbiguous
			f.ev.Note = how + "; but " + why
			return
		}
		if how != "" {
			if f.ev.Note != "" {
				f.ev.Note += "; "
			}
			f.ev.Note += how
		}
		return
	}
	if contra, why := c.contradicts(kr, ks, idx, msg); contra {
		f.status, f.reason, f.sev = StatusContradiction, ReasonContradiction, sevFail
		f.ev.Note = why
		return
	}
	f.status, f.reason, f.sev = StatusChoice, ReasonChoice, sevAmbiguous
	if c.rt.choiceFail {
		f.sev = sevFail
	}
	f.ev.Note = "one of " + strconv.Itoa(len(ks.cands)) + " visible " + kind + " candidates; nothing visible singled it out"
}

// recordOnlyChoice handles the one visible candidate of a kind with
// record_phrases when it was never listed as one of the user's own (no
// payment_methods read), only referenced by a record: the payment a booking
// was once paid with, reused for a new charge. Being the only one in sight
// is then no choice: the policy has the user choose how to pay, so unless
// the user asked for it ("the original card"), named or described it, or
// accepted the agent's proposal of it, the argument gets vis.choice like any
// other choice nobody made.
func (c *checker) recordOnlyChoice(f *finding, kr *kindRuntime, ks *kindSet, kind string, ci *callInfo, msg int) {
	cand := ks.cands[0]
	if len(kr.spec.RecordPhrases) == 0 || cand.listed {
		return
	}
	if how, ok := c.singledOut(kr, ks, 0, ci, msg); ok {
		if how != "" {
			if f.ev.Note != "" {
				f.ev.Note += "; "
			}
			f.ev.Note += how
		}
		return
	}
	f.status, f.reason, f.sev = StatusChoice, ReasonChoice, sevAmbiguous
	if c.rt.choiceFail {
		f.sev = sevFail
	}
	f.ev.Note = "the only " + kind + " in sight is one a record shows as used before (message " + strconv.Itoa(int(cand.msg)) +
		"); the user's own were never listed and the user never chose it"
}

// singledOut reports whether candidate idx of a kind was singled out before
// msg, and how: named by the user (whole or by its number), described
// uniquely by the attributes the user stated, listed in the record of the
// entity the call is keyed by, or proposed by the agent and accepted.
func (c *checker) singledOut(kr *kindRuntime, ks *kindSet, idx int, ci *callInfo, msg int) (string, bool) {
	if how, ok := c.userSingled(ks, idx, msg); ok {
		return how, true
	}
	cand := ks.cands[idx]
	e := &c.ents[cand.ent]
	if kr.spec.Record && ci != nil {
		for _, r := range ci.identEnts {
			if r != cand.ent && c.records.has(r, cand.ent) {
				return "listed in the record of " + strings.TrimPrefix(c.ents[r].key, "s:"), true
			}
		}
	}
	if len(kr.spec.RecordPhrases) > 0 && ci != nil {
		for _, r := range ci.identEnts {
			if r == cand.ent || !c.records.has(r, cand.ent) {
				continue
			}
			for _, um := range c.userMsgs {
				if int(um) >= msg {
					break
				}
				for pi, p := range kr.spec.RecordPhrases {
					if _, _, ok := c.phraseInMsg(um, kr.recordWords[pi]); ok {
						return "the one in the record of " + strings.TrimPrefix(c.ents[r].key, "s:") + ", as the user asked (\"" + p + "\", message " + strconv.Itoa(int(um)) + ")", true
					}
				}
			}
		}
	}
	if e.confirmBy >= 0 && int(e.confirmBy) < msg {
		return "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(e.confirmBy)), true
	}
	var parts [4]string
	for _, p := range appendIDNumberParts(parts[:0], e.key) {
		if id, ok := c.findIDPart(p); ok {
			if pe := &c.ents[id]; pe.confirmBy >= 0 && int(pe.confirmBy) < msg {
				return "proposed by the agent (as " + p + ") and accepted by the user at message " + strconv.Itoa(int(pe.confirmBy)), true
			}
		}
	}
	return "", false
}

// userSingled: the user named the candidate or described it uniquely.
func (c *checker) userSingled(ks *kindSet, idx int, msg int) (string, bool) {
	cand := ks.cands[idx]
	e := &c.ents[cand.ent]
	if e.user.ok() && int(e.user.msg) < msg {
		return "named by the user at message " + strconv.Itoa(int(e.user.msg)), true
	}
	var parts [4]string
	for _, p := range appendIDNumberParts(parts[:0], e.key) {
		if id, ok := c.findIDPart(p); ok {
			if u := c.ents[id].user; u.ok() && int(u.msg) < msg {
				return "named by its number " + p + " by the user at message " + strconv.Itoa(int(u.msg)), true
			}
		}
	}
	best, bestOther := 0, 0
	var why []string
	var mine []int32
	for j := range ks.cands {
		score, w, ents := c.attrScore(&ks.cands[j], msg, j == idx)
		if j == idx {
			best, why, mine = score, w, ents
		} else if score > bestOther {
			bestOther = score
		}
	}
	if best > 0 && best > bestOther {
		return "described by the user (" + strings.Join(why, ", ") + ")", true
	}
	// One stated attribute no other candidate has ("my 7447 card") is
	// enough even when a shared one ("certificates") ties the count.
	for k, a := range mine {
		unique := true
		for j := range ks.cands {
			if j == idx {
				continue
			}
			for _, b := range ks.cands[j].attrs {
				if b.ent == a {
					unique = false
				}
			}
		}
		if unique {
			return "described by the user (" + why[k] + ")", true
		}
	}
	return "", false
}

// attrScore counts the attributes of a candidate the user stated before msg.
// With detail it also says which ("last_four 7447") and their entries;
// without, it only counts (userSingled needs detail for one candidate).
func (c *checker) attrScore(cand *candidate, msg int, detail bool) (int, []string, []int32) {
	n := 0
	// With detail, the lists are the checker's scratch: userSingled, the
	// only caller, reads them before it asks again.
	var why []string
	var ents []int32
	if detail {
		why, ents = c.whyBuf[:0], c.whyEnts[:0]
		defer func() { c.whyBuf, c.whyEnts = why[:0], ents[:0] }()
	}
	// The "key value" pairs counted, to count each once: kept as pairs and
	// compared as the joined strings they stand for.
	var saidBuf [8][2]string
	said := saidBuf[:0]
	for i, a := range cand.attrs {
		if slices.ContainsFunc(cand.attrs[:i], func(b attr) bool { return b.ent == a.ent }) {
			continue // the same value under another key
		}
		e := &c.ents[a.ent]
		if e.small || c.weakToken(e) {
			continue
		}
		if e.user.ok() && int(e.user.msg) < msg {
			v := e.key[2:]
			if !slices.ContainsFunc(said, func(p [2]string) bool { return joinedEq(p[0], p[1], a.key, v) }) {
				said = append(said, [2]string{a.key, v})
				n++
				if detail {
					why = append(why, a.key+" "+v)
					ents = append(ents, a.ent)
				}
			}
			continue
		}
		// Multi-word attributes ("gift_card") as phrases in user messages.
		if c.attrPhraseSaid(a.ent, msg) {
			n++
			if detail {
				why = append(why, a.key+" "+strings.ReplaceAll(e.key[2:], "_", " "))
				ents = append(ents, a.ent)
			}
		}
	}
	return n, why, ents
}

// phraseSeen is what attrScore knows of an entry's key as a phrase the
// user may have written: kind is 0 not looked at yet, 1 not a multi-word
// attribute (it has a digit), 2 one ("gift_card"); searched is the number of c.userMsgs
// searched for it, found 1 + the first that has it (0: none of them).
type phraseSeen struct {
	searched, found int32
	kind            int8
}

// attrPhraseSaid reports whether entry id's key is a multi-word attribute
// ("s:gift_card", no digits) that a user message before msg has as a
// phrase. Each user message is searched at most once per entry and
// trajectory: the messages searched and the first that matched are kept, so
// the decisions that ask again (every candidate scored at every later
// choice) resume where the last search stopped rather than re-reading the
// conversation.
func (c *checker) attrPhraseSaid(id int32, msg int) bool {
	if k := c.ents[id].key; !strings.HasPrefix(k, "s:") || strings.IndexByte(k, '_') <= 0 {
		return false // not a multi-word string: no need to keep anything
	}
	if int(id) >= len(c.phraseSeen) {
		c.phraseSeen = append(c.phraseSeen, make([]phraseSeen, int(id)+1-len(c.phraseSeen))...)
	}
	ps := &c.phraseSeen[id]
	if ps.kind == 0 {
		ps.kind = 1
		if !strings.ContainsAny(c.ents[id].key, "0123456789") {
			ps.kind = 2
		}
	}
	if ps.kind != 2 {
		return false
	}
	if ps.found == 0 && int(ps.searched) < len(c.userMsgs) && int(c.userMsgs[ps.searched]) < msg {
		var wbuf [8]string
		words := keyPhraseWords(c.ents[id].key[2:], wbuf[:0])
		for int(ps.searched) < len(c.userMsgs) {
			um := c.userMsgs[ps.searched]
			if int(um) >= msg {
				break
			}
			ps.searched++
			if _, _, ok := c.phraseInMsg(um, words); ok {
				ps.found = um + 1
				break
			}
		}
	}
	return ps.found > 0 && int(ps.found-1) < msg
}

// keyPhraseWords is phraseWords for the text of a string key, appended to
// buf: an ASCII key is already lower-case with its separators folded to
// single inner '_', so its words are its '_'-separated parts.
func keyPhraseWords(phrase string, buf []string) []string {
	if !isASCII(phrase) {
		return phraseWords(phrase)
	}
	for len(phrase) > 0 {
		k := strings.IndexByte(phrase, '_')
		if k < 0 {
			return append(buf, phrase)
		}
		if k > 0 {
			buf = append(buf, phrase[:k])
		}
		phrase = phrase[k+1:]
	}
	return buf
}

// joinedEq reports whether k1+" "+v1 == k2+" "+v2, without joining.
func joinedEq(k1, v1, k2, v2 string) bool {
	if len(k1)+len(v1) != len(k2)+len(v2) {
		return false
	}
	if len(k1) == len(k2) {
		return k1 == k2 && v1 == v2
	}
	at := func(k, v string, i int) byte {
		switch {
		case i < len(k):
			return k[i]
		case i == len(k):
			return ' '
		}
		return v[i-len(k)-1]
	}
	for i := 0; i <= len(k1)+len(v1); i++ {
		if at(k1, v1, i) != at(k2, v2, i) {
			return false
		}
	}
	return true
}

// contradicts: the user stated, for an attribute the profile lists (the
// last four digits of a card), a value that belongs to another candidate
// while this one's differs.
func (c *checker) contradicts(kr *kindRuntime, ks *kindSet, idx int, msg int) (bool, string) {
	if len(kr.contradict) == 0 {
		return false, ""
	}
	cand := ks.cands[idx]
	for _, a := range cand.attrs {
		if !kr.contradict[a.key] {
			continue
		}
		if u := c.ents[a.ent].user; u.ok() && int(u.msg) < msg {
			return false, "" // the user also named this one's
		}
		for j := range ks.cands {
			if j == idx {
				continue
			}
			for _, b := range ks.cands[j].attrs {
				if b.key != a.key || b.ent == a.ent {
					continue
				}
				if u := c.ents[b.ent].user; u.ok() && int(u.msg) < msg {
					return true, "the user named " + a.key + " " + c.ents[b.ent].key[2:] + " (message " + strconv.Itoa(int(u.msg)) +
						"), which belongs to " + c.ents[ks.cands[j].ent].key[2:] + "; this one's is " + c.ents[a.ent].key[2:]
				}
			}
		}
	}
	return false, ""
}

// appendIDNumberParts appends the all-digit parts (3+ digits) of an
// identifier key to dst: "s:credit_card_4421486" → ["4421486"]. The parts
// are the runs between '_' and '-' (ASCII, so splitting bytes splits runes).
func appendIDNumberParts(dst []string, key string) []string {
	id := strings.TrimPrefix(key, "s:")
	for i := 0; i < len(id); {
		for i < len(id) && (id[i] == '_' || id[i] == '-') {
			i++
		}
		j := i
		for j < len(id) && id[j] != '_' && id[j] != '-' {
			j++
		}
		if p := id[i:j]; len(p) >= 3 && onlyDigits(p) && p != id {
			dst = append(dst, p)
		}
		i = j
	}
	return dst
}

// findIDPart is find("s:" + p) without making the key a string.
func (c *checker) findIDPart(p string) (int32, bool) {
	c.keyBuf = append(append(c.keyBuf[:0], "s:"...), p...)
	return c.entryFor(c.keyBuf)
}
