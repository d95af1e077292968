package grounding

import (
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
	if ks == nil || len(ks.cands) <= 1 {
		return
	}
	idx, ok := ks.pos[f.ent]
	if !ok {
		return
	}
	if how, ok := c.singledOut(kr, ks, idx, ci, msg); ok {
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
				for _, p := range kr.spec.RecordPhrases {
					if _, _, ok := c.phraseInMsg(um, phraseWords(p)); ok {
						return "the one in the record of " + strings.TrimPrefix(c.ents[r].key, "s:") + ", as the user asked (\"" + p + "\", message " + strconv.Itoa(int(um)) + ")", true
					}
				}
			}
		}
	}
	if e.confirmBy >= 0 && int(e.confirmBy) < msg {
		return "proposed by the agent and accepted by the user at message " + strconv.Itoa(int(e.confirmBy)), true
	}
	for _, p := range idNumberParts(e.key) {
		if id, ok := c.find("s:" + p); ok {
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
	for _, p := range idNumberParts(e.key) {
		if id, ok := c.find("s:" + p); ok {
			if u := c.ents[id].user; u.ok() && int(u.msg) < msg {
				return "named by its number " + p + " by the user at message " + strconv.Itoa(int(u.msg)), true
			}
		}
	}
	best, bestOther := 0, 0
	var why []string
	var mine []int32
	for j := range ks.cands {
		score, w, ents := c.attrScore(&ks.cands[j], msg)
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
func (c *checker) attrScore(cand *candidate, msg int) (int, []string, []int32) {
	n := 0
	var why []string
	var ents []int32
	seen := map[int32]bool{}
	said := map[string]bool{}
	for _, a := range cand.attrs {
		if seen[a.ent] {
			continue
		}
		seen[a.ent] = true
		e := &c.ents[a.ent]
		if e.small || c.rt.weakTokens[e.key] {
			continue
		}
		if e.user.ok() && int(e.user.msg) < msg {
			if w := a.key + " " + e.key[2:]; !said[w] {
				said[w] = true
				n++
				why = append(why, w)
				ents = append(ents, a.ent)
			}
			continue
		}
		// Multi-word attributes ("gift_card") as phrases in user messages.
		if strings.HasPrefix(e.key, "s:") && strings.IndexByte(e.key, '_') > 0 && !strings.ContainsAny(e.key, "0123456789") {
			phrase := e.key[2:]
			words := phraseWords(phrase)
			for _, um := range c.userMsgs {
				if int(um) >= msg {
					break
				}
				if _, _, ok := c.phraseInMsg(um, words); ok {
					n++
					why = append(why, a.key+" "+strings.ReplaceAll(phrase, "_", " "))
					ents = append(ents, a.ent)
					break
				}
			}
		}
	}
	return n, why, ents
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

// idNumberParts returns the all-digit parts (3+ digits) of an identifier key
// "s:credit_card_4421486" → ["4421486"].
func idNumberParts(key string) []string {
	var out []string
	for _, p := range strings.FieldsFunc(strings.TrimPrefix(key, "s:"), func(r rune) bool { return r == '_' || r == '-' }) {
		if len(p) >= 3 && onlyDigits(p) && p != strings.TrimPrefix(key, "s:") {
			out = append(out, p)
		}
	}
	return out
}
