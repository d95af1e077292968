package grounding

import "slices"

// The reply checks (found claims, last-four leads, counts, same-day,
// original payment, upcoming totals, record facts, condition and policy
// claims, unpriced confirmations) each look for their own phrases in a reply before doing
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
	gateDone                        // doneVerbs
)

// replyGateRuntime is the profile's side of the gate: every phrase of every
// gated list, and per phrase the lists that hold it, searched for together
// by one automaton (phraseDFA).
type replyGateRuntime struct {
	dfa  *phraseDFA // nil when there is no phrase
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

// build makes the automaton once every list is added.
func (g *replyGateRuntime) build() {
	if len(g.list) > 0 {
		g.dfa = newPhraseDFA(g.list, g.bits)
	}
}

// newReplyGateRuntime gathers the gated lists of rt, giving each rule its
// bit.
func newReplyGateRuntime(rt *profileRuntime) replyGateRuntime {
	// The fixed lists take the first bits, in their constants' order.
	var g replyGateRuntime
	if g.add(foundClaims) != gateFound || g.add(lastFourLeads) != gateLastFour || g.add(countLeads) != gateCounts ||
		g.add(doneVerbs) != gateDone {
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
	// The record facts came last: searching every reply for each fact's
	// phrases (eight insurance ones) was 4% of checking the airline log.
	for i := range rt.facts {
		r := &rt.facts[i]
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
		// The automaton does not depend on the order of its phrases, but
		// the same profile always builds the same one.
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
	if gr.dfa == nil {
		return g
	}
	lt := c.lowOf(msg)
	b := gr.dfa.scan(lt.low)
	if !lt.ascii {
		if f := lt.foldOf(c.t.Messages[msg].Content, &c.slab); f != lt.low {
			b2 := gr.dfa.scan(f)
			b.has, b.held = b.has|b2.has, b.held|b2.held
		}
	}
	g.has, g.held = b.has, g.held|b.held
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

// phraseDFA is an Aho-Corasick automaton over bytes: it reads a text once,
// one table step per byte, and reports the union of the gateBits of every
// phrase that occurs in it (overlapping occurrences included). A gate
// holds hundreds of phrases (the airline profile's policy claims and the
// found claims: 600), and a search anchored on each phrase's rarest byte
// pair stopped at most byte pairs of a reply.
type phraseDFA struct {
	class  [256]uint8 // byte → its class; 0 for the bytes no phrase has
	nclass int
	// next is the transition table: next[s+class] for the state s (a
	// multiple of nclass) is the next state, shifted left by one, with bit
	// 0 set when some phrase ends there.
	next []uint32
	out  map[uint32]gateBits // state → the lists of the phrases that end there
}

func newPhraseDFA(phrases []string, bits map[string]gateBits) *phraseDFA {
	d := &phraseDFA{nclass: 1}
	for _, p := range phrases {
		for i := 0; i < len(p); i++ {
			if d.class[p[i]] == 0 {
				d.class[p[i]] = uint8(d.nclass)
				d.nclass++
			}
		}
	}
	// The trie: child[s*nclass+c] is the state after s on class c, or 0
	// (the root has no parent, so 0 is never a child).
	nc := d.nclass
	child := make([]int32, nc)
	ends := []gateBits{{}}
	for _, p := range phrases {
		s := int32(0)
		for i := 0; i < len(p); i++ {
			k := int(s)*nc + int(d.class[p[i]])
			if child[k] == 0 {
				child[k] = int32(len(ends))
				child = append(child, make([]int32, nc)...)
				ends = append(ends, gateBits{})
			}
			s = child[k]
		}
		b := bits[p]
		ends[s].has |= b.has
		ends[s].held |= b.held
	}
	// Breadth first, each state's failure (its longest proper suffix that
	// is a trie state) is known before its children's: the transitions a
	// trie state lacks are its failure's, and its outputs include its
	// failure's.
	n := len(ends)
	fail := make([]int32, n)
	delta := make([]int32, n*nc)
	queue := make([]int32, 0, n)
	for c := 0; c < nc; c++ {
		if t := child[c]; t != 0 {
			delta[c] = t
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		ends[s].has |= ends[f].has
		ends[s].held |= ends[f].held
		for c := 0; c < nc; c++ {
			k := int(s)*nc + c
			if t := child[k]; t != 0 {
				fail[t] = delta[int(f)*nc+c]
				delta[k] = t
				queue = append(queue, t)
			} else {
				delta[k] = delta[int(f)*nc+c]
			}
		}
	}
	d.next = make([]uint32, n*nc)
	d.out = map[uint32]gateBits{}
	for k, t := range delta {
		v := uint32(int(t)*nc) << 1
		if ends[t] != (gateBits{}) {
			v |= 1
			d.out[uint32(int(t)*nc)] = ends[t]
		}
		d.next[k] = v
	}
	return d
}

// scan returns the lists of the phrases that occur in s.
func (d *phraseDFA) scan(s string) gateBits {
	var b gateBits
	next, class := d.next, &d.class
	st := uint32(0)
	for i := 0; i < len(s); i++ {
		v := next[st+uint32(class[s[i]])]
		st = v >> 1
		if v&1 != 0 {
			o := d.out[st]
			b.has |= o.has
			b.held |= o.held
		}
	}
	return b
}
