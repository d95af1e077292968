package grounding

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// phraseTexts exercise phrase search: overlapping and repeated phrases, a
// phrase at either end, phrases sharing an anchor byte, none at all.
var phraseTexts = []string{
	"",
	"you have two reservations",
	"you have you have",
	"all of your reservations, and all your bags; both of your flights",
	"found found. only only",
	"there are none of your cards",
	"nothing to count here",
	"aaaa",
	"onlyfound",
	"yes, yes please — oui, yés",
}

func TestPhraseSetEachFindsWhatIndexLoopsFind(t *testing.T) {
	sets := [][]string{
		countLeads,
		{"aa", "a", "aaa"},
		{"yes", "yes please", "es"},
		{"", "x"}, // the empty phrase: every test falls back to the plain loop
	}
	for _, list := range sets {
		ps := newPhraseSet(list)
		for _, text := range phraseTexts {
			var want []string
			for _, p := range list {
				for off := 0; off <= len(text); {
					k := strings.Index(text[off:], p)
					if k < 0 {
						break
					}
					want = append(want, p+"@"+strconv.Itoa(off+k))
					off += k + 1
				}
			}
			var got []string
			ps.each(text, func(k int, p string) bool { got = append(got, p+"@"+strconv.Itoa(k)); return true })
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("phrases %q in %q: each found %v, Index loops %v", list, text, got, want)
			}
			if c := slices.ContainsFunc(list, func(p string) bool { return strings.Contains(text, p) }); ps.contains(text) != c {
				t.Errorf("phrases %q in %q: contains = %v, strings.Contains says %v", list, text, !c, c)
			}
		}
	}
}
