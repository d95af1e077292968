package grounding

import "slices"

// The reply checks (found claims, last-four leads, counts, same-day,
// original payment, upcoming totals, condition and policy claims, unpriced
// confirmations) each look for their own phrases in a reply before doing
// any work, and almost every reply has none of them. Searching the reply
// once per list walked it a dozen times or more; the reply gate searches
// it once for the phrases of every list and records which lists occur.
// A check whose list does not occur skips its own search: the gate is a
// necessary condition, never a sufficient one (a check still tests its
// phrases where it reads them).

// Gate bits of the fixed lists; the profile's rules get the bits after
// them (replyGateRuntime.add).
const (
	gateFound    uint64 = 1 << iota // foundClaims
	gateLastFour                    // lastFourLeads
	gateCounts                      // countLeads
)

// replyGateRuntime is the profile's side of the gate: every phrase of every
// gated list, in one set, and per phrase the lists that hold it.
type replyGateRuntime struct {
	set  *phraseSet // nil when there is no phrase
	bits map[string]gateBits
	// heldAlways are the policy claim lists that hold "": such a list is
	// found in every text (see policyClaims).
	heldAlways uint64
	list       []string
	next       int // the next free bit of has
}

// gateBits are the lists a phrase belongs to: has for the gated lists,
// held for the lists of the policy claims (profileRuntime.claimBits).
type gateBits struct{ has, held uint64 }

// add gives list a bit of its own and returns it. A list with "" is found
// in every text, and the lists past the 64th have no bit: both get 0,
// which the gate always passes (mayHold).
func (g *replyGateRuntime) add(list []string) uint64 {
	if slices.Contains(list, "") || g.next >= 64 {
		return 0
	}
	mask := uint64(1) << g.next
	g.next++
	for _, p := range list {
		g.phrase(p, gateBits{has: mask})
	}
	return mask
}

// phrase adds p to the set with the lists of b.
func (g *replyGateRuntime) phrase(p string, b gateBits) {
	if g.bits == nil {
		g.bits = map[string]gateBits{}
	}
	old, ok := g.bits[p]
	if !ok {
		g.list = append(g.list, p)
	}
	g.bits[p] = gateBits{has: old.has | b.has, held: old.held | b.held}
}

// build makes the phrase set once every list is added.
func (g *replyGateRuntime) build() {
	if len(g.list) > 0 {
		g.set = newPhraseSet(g.list)
	}
}

// newReplyGateRuntime gathers the gated lists of rt, giving each rule its
// bit.
func newReplyGateRuntime(rt *profileRuntime) replyGateRuntime {
	// The fixed lists take the first bits, in their constants' order.
	var g replyGateRuntime
	if g.add(foundClaims) != gateFound || g.add(lastFourLeads) != gateLastFour || g.add(countLeads) != gateCounts {
		panic("reply gate: the fixed lists are out of order")
	}
	if rt.confirm != nil {
		rt.confirm.gate = g.add(rt.confirm.unpriced)
	}
	for i := range rt.conditions {
		if r := &rt.conditions[i]; r.claimSet != nil {
			r.gate = g.add(append(slices.Clip(r.allowedClaims), r.deniedClaims...))
		}
	}
	for i := range rt.sameDay {
		r := &rt.sameDay[i]
		r.gate = g.add(append(slices.Clip(r.claims), r.none...))
	}
	for i := range rt.original {
		r := &rt.original[i]
		r.gate = g.add(r.phrases)
	}
	for i := range rt.upcoming {
		r := &rt.upcoming[i]
		r.gate = g.add(r.phrases)
	}
	if rt.claimPhrases != nil {
		for p, held := range rt.claimBits {
			if p == "" {
				g.heldAlways |= held
				continue
			}
			g.phrase(p, gateBits{held: held})
		}
		// The set's order does not matter (each finds every occurrence),
		// but the same profile always builds the same set.
		slices.Sort(g.list)
	}
	g.build()
	return g
}

// replyGate is what the gate found in one message: the lists (has) and the
// policy claim lists (held) some phrase of which occurs in the message's
// content lower-cased (lowerContent) or ASCII-folded (lowText.foldOf),
// the two forms the checks search.
type replyGate struct {
	done      bool
	has, held uint64
}

// gate is message msg's gate, made on first need.
func (c *checker) gate(msg int) *replyGate {
	if n := len(c.t.Messages); len(c.gates) != n {
		c.gates = slices.Grow(c.gates[:0], n)[:n]
		clear(c.gates)
	}
	g := &c.gates[msg]
	if g.done {
		return g
	}
	g.done = true
	gr := &c.rt.gate
	g.held = gr.heldAlways
	if gr.set == nil {
		return g
	}
	add := func(_ int, p string) bool {
		b := gr.bits[p]
		g.has |= b.has
		g.held |= b.held
		return true
	}
	lt := c.lowOf(msg)
	gr.set.each(lt.low, add)
	if !lt.ascii {
		if f := lt.foldOf(c.t.Messages[msg].Content); f != lt.low {
			gr.set.each(f, add)
		}
	}
	return g
}

// mayHold reports whether text may hold a phrase of the gated list mask
// (lower-cased or ASCII-folded): false only when text is message msg's
// content and the gate found none of the list there.
func (c *checker) mayHold(text string, msg int, mask uint64) bool {
	if mask == 0 || text != c.t.Messages[msg].Content {
		return true
	}
	return c.gate(msg).has&mask != 0
}
