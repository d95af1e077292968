package grounding

import (
	"slices"
	"strconv"
	"strings"
)

// factRuntime is a RecordFactRule with its phrases lower-cased.
type factRuntime struct {
	RecordFactRule
	phrases []string
	gate    uint64 // their bit in the reply gate
}

// factGuards are the words that, right before a fact's phrase, make the
// sentence say something other than that a named record has it: "not
// basic economy", "from basic economy", "upgrade to business".
var factGuards = []string{"not", "n't", "no longer", "non", "from", "to", "into", "than", "upgrade", "downgrade", "change", "switch"}

// checkRecordFacts checks the facts a reply states of the records it names
// (RecordFactRule): a sentence that names visible records in one list and
// holds one of a fact's phrases says each of them has the fact; one whose
// latest visible record gives the key another value fails
// (vis.contradiction), pointing at that record ("cannot cancel UDMOP1,
// XAZ3C0 and 4XGCCM due to the restrictions on basic economy flights",
// where 4XGCCM's record is business).
func (c *checker) checkRecordFacts(d *DecisionResult, text string, msg int) int {
	if len(c.rt.facts) == 0 {
		return sevOK
	}
	low := c.textLower(text, msg)
	sev := sevOK
	for i := range c.rt.facts {
		r := &c.rt.facts[i]
		if !c.mayHold(text, msg, r.gate) || !containsAny(low, r.phrases) {
			continue
		}
		x := c.recordsBefore(r.Field, msg)
		if len(x.latest) == 0 {
			continue
		}
		for s0, end := range sentences(low) {
			phrase, ok := factPhraseIn(low[s0:end], r.phrases)
			if !ok {
				continue
			}
			ids := namedList(text[s0:end], x)
			for _, id := range ids {
				m := int(x.latest[id])
				v, ok := record(c.t.Messages[m].Content).str(r.Key)
				if !ok || v == r.Value {
					continue
				}
				a := c.contradictedSpan(s0, text[s0:end], "states \""+phrase+"\" of "+id+", but its record (message "+
					strconv.Itoa(m)+") gives "+r.Key+" \""+v+"\"")
				c.pointAtRecord(&a, id, m)
				d.Args = c.argChunks.add(d.Args, a)
				sev = max(sev, sevFail)
				break
			}
		}
	}
	return sev
}

// factPhraseIn finds one of phrases in the lower-cased sentence s that no
// guard word comes right before and no "to" right after.
func factPhraseIn(s string, phrases []string) (string, bool) {
	for _, p := range phrases {
		for k := range occurrences(s, p) {
			off := k + len(p)
			before := strings.TrimRight(s[:k], " -")
			guarded := slices.ContainsFunc(factGuards, func(g string) bool {
				return strings.HasSuffix(before, g) && (len(before) == len(g) || !letterByte(before[len(before)-len(g)-1]) || g == "n't")
			})
			if guarded || strings.HasPrefix(s[off:], " to ") {
				continue
			}
			return p, true
		}
	}
	return "", false
}

// namedList is the ids of x's records that sentence names, when they form
// one list ("UDMOP1, XAZ3C0, and 4XGCCM"): only commas, spaces and "and"
// stand between them. A sentence that names records apart ("X has
// insurance, Y has none") says nothing of all of them; it gets none.
func namedList(sentence string, x *recordIndex) []string {
	type at struct {
		id         string
		start, end int
	}
	var found []at
	for id := range x.latest {
		for k := range occurrences(sentence, id) {
			off := k + len(id)
			if (k == 0 || !idByte(sentence[k-1])) && (off == len(sentence) || !idByte(sentence[off])) {
				found = append(found, at{id, k, off})
				break
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b at) int { return a.start - b.start })
	ids := make([]string, 0, len(found))
	for i, f := range found {
		if i > 0 {
			gap := strings.TrimSpace(strings.NewReplacer(",", " ", "*", " ", "#", " ").Replace(sentence[found[i-1].end:f.start]))
			if gap != "" && gap != "and" {
				return nil
			}
		}
		ids = append(ids, f.id)
	}
	return ids
}
