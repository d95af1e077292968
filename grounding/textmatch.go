package grounding

import "strings"

// phraseSet tests a text for any of a fixed list of phrases in one pass
// over the text, comparing at each position only the phrases that start
// with that byte. The checks run lists of a dozen or two phrases (yes
// words, confirmation prompts, count leads) over every user message and
// reply; searching for each phrase separately walked the text once per
// phrase, stopping at every occurrence of its (often common) first letter.
type phraseSet struct {
	list    []string
	byFirst [256][]string
	empty   bool // the list has "": every test falls back to the plain loop
}

func newPhraseSet(list []string) *phraseSet {
	ps := &phraseSet{list: list}
	for _, p := range list {
		if p == "" {
			ps.empty = true
			continue
		}
		ps.byFirst[p[0]] = append(ps.byFirst[p[0]], p)
	}
	return ps
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
	for i := 0; i < len(s); i++ {
		for _, p := range ps.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], p) {
				return true
			}
		}
	}
	return false
}

// containsWord reports whether s contains one of the phrases on word
// boundaries (containsWord). An occurrence must start where no word byte
// precedes, so only those positions are compared.
func (ps *phraseSet) containsWord(s string) bool {
	if ps.empty {
		for _, p := range ps.list {
			if containsWord(s, p) {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(s); i++ {
		if i > 0 && wordByte(s[i-1]) {
			continue
		}
		for _, p := range ps.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], p) && (i+len(p) == len(s) || !wordByte(s[i+len(p)])) {
				return true
			}
		}
	}
	return false
}
