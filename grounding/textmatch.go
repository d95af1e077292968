package grounding

import (
	"slices"
	"strings"
)

// phraseSet tests a text for any of a fixed list of phrases. The checks run
// lists of a dozen or two phrases (yes words, confirmation prompts, count
// leads) over every user message and reply; searching for each phrase
// separately walked the text once per phrase, stopping at every occurrence
// of its (often common) first letter. Two one-pass searches replace that:
//
//   - contains anchors each phrase on its rarest byte (by English letter
//     frequency), searches the text once per distinct anchor byte with
//     strings.IndexByte and compares phrases only there. Every occurrence
//     of a phrase contains its anchor, so none is missed. It suits long
//     texts (replies, agent prompts).
//   - containsWord visits the positions where a word may start and compares
//     the phrases beginning with that byte. On the short user messages it
//     runs on (yes and pick phrases, a dozen anchors) this measured faster
//     than the anchored search.
type phraseSet struct {
	list    []string
	anchors []phraseAnchor
	byFirst [256][]string
	empty   bool // the list has "": every test falls back to the plain loop
	// With every phrase two bytes or longer, each anchors a phrase on its
	// rarest byte pair instead (bigrams, found through the bitmap bigramBits
	// of their 16-bit values) and searches the text in one pass.
	bigrams    []phraseBigram
	bigramBits *[1 << 10]uint64
	// bigramAt finds a bigram's entry in bigrams without a scan: an open
	// addressing table of indexes (len a power of two, -1 empty).
	bigramAt    []int16
	bigramShift uint
}

// bigramSlot is where bigram bg's search in bigramAt starts.
func (ps *phraseSet) bigramSlot(bg uint16) int {
	return int((uint32(bg) * 2654435769) >> ps.bigramShift)
}

// bigramIndex returns the index of bigram bg in ps.bigrams, -1 if absent.
func (ps *phraseSet) bigramIndex(bg uint16) int {
	mask := len(ps.bigramAt) - 1
	for i := ps.bigramSlot(bg); ; i = (i + 1) & mask {
		k := ps.bigramAt[i]
		if k < 0 || ps.bigrams[k].bg == bg {
			return int(k)
		}
	}
}

// phraseBigram is one anchor byte pair (b0 | b1<<8) and the phrases
// anchored on it.
type phraseBigram struct {
	bg      uint16
	phrases []anchoredPhrase
}

// phraseAnchor is one anchor byte and the phrases anchored on it.
type phraseAnchor struct {
	b       byte
	phrases []anchoredPhrase
}

type anchoredPhrase struct {
	p   string
	off int // offset of the anchor byte in p
}

// byteRarity ranks bytes for anchoring: higher is rarer in English text.
var byteRarity = func() (r [256]int) {
	for i := range r {
		r[i] = 100 // digits, punctuation, other bytes: rare in prose
	}
	for i, c := range []byte(" etaoinshrdlcumwfgypbvkjxqz") {
		r[c] = i // space and letters, most frequent first
		if c >= 'a' && c <= 'z' {
			r[c-'a'+'A'] = i
		}
	}
	return r
}()

func newPhraseSet(list []string) *phraseSet {
	ps := &phraseSet{list: list}
	for _, p := range list {
		if p == "" {
			ps.empty = true
			continue
		}
		ps.byFirst[p[0]] = append(ps.byFirst[p[0]], p)
		off := 0
		for i := 1; i < len(p); i++ {
			if byteRarity[p[i]] > byteRarity[p[off]] {
				off = i
			}
		}
		k := 0
		for k < len(ps.anchors) && ps.anchors[k].b != p[off] {
			k++
		}
		if k == len(ps.anchors) {
			ps.anchors = append(ps.anchors, phraseAnchor{b: p[off]})
		}
		ps.anchors[k].phrases = append(ps.anchors[k].phrases, anchoredPhrase{p, off})
	}
	if !ps.empty && !slices.ContainsFunc(list, func(p string) bool { return len(p) < 2 }) {
		ps.bigramBits = new([1 << 10]uint64)
		for _, p := range list {
			off := 0
			for i := 1; i+1 < len(p); i++ {
				if byteRarity[p[i]]+byteRarity[p[i+1]] > byteRarity[p[off]]+byteRarity[p[off+1]] {
					off = i
				}
			}
			bg := uint16(p[off]) | uint16(p[off+1])<<8
			ps.bigramBits[bg>>6] |= 1 << (bg & 63)
			k := 0
			for k < len(ps.bigrams) && ps.bigrams[k].bg != bg {
				k++
			}
			if k == len(ps.bigrams) {
				ps.bigrams = append(ps.bigrams, phraseBigram{bg: bg})
			}
			ps.bigrams[k].phrases = append(ps.bigrams[k].phrases, anchoredPhrase{p, off})
		}
		bits := uint(1)
		for 1<<bits < 2*len(ps.bigrams) {
			bits++
		}
		if len(ps.bigrams) < 1<<15 {
			ps.bigramShift = 32 - bits
			ps.bigramAt = make([]int16, 1<<bits)
			for i := range ps.bigramAt {
				ps.bigramAt[i] = -1
			}
			for k, b := range ps.bigrams {
				i := ps.bigramSlot(b.bg)
				for ps.bigramAt[i] >= 0 {
					i = (i + 1) & (len(ps.bigramAt) - 1)
				}
				ps.bigramAt[i] = int16(k)
			}
		}
	}
	return ps
}

// find reports whether s contains one of the phrases, searching from the
// anchors.
func (ps *phraseSet) find(s string) bool {
	found := false
	ps.each(s, func(int, string) bool {
		found = true
		return false
	})
	return found
}

// each calls f with the offset and the phrase of every occurrence of a
// phrase in s, overlapping ones included (as a strings.Index loop per
// phrase that resumes one byte after each match finds them), in no
// particular order, until f returns false. An occurrence is found once: at
// its phrase's anchor.
func (ps *phraseSet) each(s string, f func(k int, p string) bool) {
	if ps.empty {
		for _, p := range ps.list {
			for off := 0; off <= len(s); {
				k := strings.Index(s[off:], p)
				if k < 0 {
					break
				}
				if !f(off+k, p) {
					return
				}
				off += k + 1
			}
		}
		return
	}
	if ps.bigramBits != nil {
		bits := ps.bigramBits
		if len(s) < 2 {
			return
		}
		prev := uint16(s[0])
		for j := 1; j < len(s); j++ {
			// the pair s[k], s[k+1] with k = j-1, one byte loaded per step
			bg := prev | uint16(s[j])<<8
			prev = bg >> 8
			if bits[bg>>6]&(1<<(bg&63)) == 0 {
				continue
			}
			k := j - 1
			if ps.bigramAt != nil {
				if b := ps.bigramIndex(bg); b >= 0 {
					for _, ap := range ps.bigrams[b].phrases {
						if i := k - ap.off; i >= 0 && strings.HasPrefix(s[i:], ap.p) && !f(i, ap.p) {
							return
						}
					}
				}
				continue
			}
			for _, a := range ps.bigrams {
				if a.bg != bg {
					continue
				}
				for _, ap := range a.phrases {
					if i := k - ap.off; i >= 0 && strings.HasPrefix(s[i:], ap.p) && !f(i, ap.p) {
						return
					}
				}
			}
		}
		return
	}
	for _, a := range ps.anchors {
		for from := 0; ; {
			k := strings.IndexByte(s[from:], a.b)
			if k < 0 {
				break
			}
			k += from
			from = k + 1
			for _, ap := range a.phrases {
				if i := k - ap.off; i >= 0 && strings.HasPrefix(s[i:], ap.p) && !f(i, ap.p) {
					return
				}
			}
		}
	}
}

// contains reports whether s contains one of the phrases (strings.Contains).
func (ps *phraseSet) contains(s string) bool {
	if ps.empty {
		for _, p := range ps.list {
			if strings.Contains(s, p) {
				return true
			}
		}
		return false
	}
	return ps.find(s)
}

// containsWord reports whether s contains one of the phrases on word
// boundaries (containsWord).
func (ps *phraseSet) containsWord(s string) bool {
	if ps.empty {
		for _, p := range ps.list {
			if containsWord(s, p) {
				return true
			}
		}
		return false
	}
	// An occurrence must start where no word byte precedes, so only those
	// positions are compared: after a word byte, the rest of its word is
	// skipped, and the position after the byte that ends it is next.
	for i := 0; i < len(s); {
		c := s[i]
		for _, p := range ps.byFirst[c] {
			if strings.HasPrefix(s[i:], p) && (i+len(p) == len(s) || !wordByteTab[s[i+len(p)]]) {
				return true
			}
		}
		i++
		if wordByteTab[c] {
			for i < len(s) && wordByteTab[s[i]] {
				i++
			}
			i++ // preceded by the word's last byte
		}
	}
	return false
}

// wordByteTab is wordByte as a table.
var wordByteTab = func() (t [256]bool) {
	for i := range t {
		t[i] = wordByte(byte(i))
	}
	return t
}()
