package grounding

import (
	"maps"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestSWARMatchesBytewise checks the word-at-a-time helpers against the
// byte-by-byte definitions on every byte value at every offset.
func TestSWARMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		b := make([]byte, r.Intn(40))
		for i := range b {
			switch r.Intn(4) {
			case 0:
				b[i] = byte(r.Intn(256))
			case 1:
				b[i] = byte('A' + r.Intn(26))
			case 2:
				b[i] = byte('@' + r.Intn(28)) // around the upper-case range
			default:
				b[i] = byte('a' + r.Intn(26))
			}
		}
		s := string(b)
		up, asc := false, true
		low := make([]byte, len(b))
		for i, c := range b {
			if c >= 'A' && c <= 'Z' {
				up = true
			}
			if c >= 0x80 {
				asc = false
			}
			low[i] = lowerByte(c)
		}
		if gu, ga := asciiInfo(s); gu != up || ga != asc {
			t.Fatalf("asciiInfo(%q) = %v %v, want %v %v", s, gu, ga, up, asc)
		}
		if hasASCIIUpper(s) != up || isASCII(s) != asc {
			t.Fatalf("hasASCIIUpper/isASCII(%q)", s)
		}
		got := append([]byte(nil), b...)
		lowerASCIIInPlace(got)
		if string(got) != string(low) {
			t.Fatalf("lowerASCIIInPlace(%q) = %q, want %q", s, got, low)
		}
		if asciiLower(s) != string(low) {
			t.Fatalf("asciiLower(%q)", s)
		}
	}
}

// TestStopWordLower checks the packed stop-word set against the list.
func TestStopWordLower(t *testing.T) {
	set := map[string]bool{}
	for _, w := range stopWords {
		set[w] = true
		if !stopWordLower([]byte(w)) {
			t.Errorf("stopWordLower(%q) = false", w)
		}
	}
	r := rand.New(rand.NewSource(2))
	for n := 0; n < 200000; n++ {
		b := make([]byte, r.Intn(8))
		for i := range b {
			const alpha = "abcdefghijklmnopqrstuvwxyz'0\x00\xff"
			b[i] = alpha[r.Intn(len(alpha))]
		}
		if n%3 == 0 && len(b) > 0 { // near misses of real stop words
			w := stopWords[r.Intn(len(stopWords))]
			b = append([]byte(w[:r.Intn(len(w))]), b[:r.Intn(len(b))]...)
		}
		if got := stopWordLower(b); got != set[string(b)] {
			t.Fatalf("stopWordLower(%q) = %v", b, got)
		}
	}
}

// TestLookupWord checks the packed word table against the tests it stands
// for, on every listed word in several cases and on random and near-miss
// words.
func TestLookupWord(t *testing.T) {
	check := func(w string) {
		low := []byte(w)
		for i := range low {
			low[i] = lowerByte(low[i])
		}
		if got, want := lookupWord(w), wordInfoOf(string(low)); got != want {
			t.Fatalf("lookupWord(%q) = %+v, want %+v", w, got, want)
		}
	}
	r := rand.New(rand.NewSource(3))
	for _, w := range wordWords {
		check(w)
		b := []byte(w)
		for n := 0; n < 20; n++ {
			for i := range b {
				if r.Intn(2) == 0 && b[i] >= 'a' && b[i] <= 'z' {
					b[i] -= 'a' - 'A'
				} else {
					b[i] = lowerByte(b[i])
				}
			}
			check(string(b))
			check(string(b[:r.Intn(len(b)+1)]))
			check(string(b) + "s")
			check(string(b) + "\x00")
		}
	}
	const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'0\x00\xff-"
	for n := 0; n < 300000; n++ {
		b := make([]byte, 1+r.Intn(10))
		for i := range b {
			b[i] = alpha[r.Intn(len(alpha))]
		}
		check(string(b))
	}
}

// TestWordEnd checks wordEnd against the byte loop it replaces.
func TestWordEnd(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	const alpha = "ab \t\n\r\x00\x01\x1f! \x7f\x80\xffZ"
	for n := 0; n < 200000; n++ {
		b := make([]byte, r.Intn(30))
		for i := range b {
			if r.Intn(3) == 0 {
				b[i] = alpha[r.Intn(len(alpha))]
			} else {
				b[i] = byte(r.Intn(256))
			}
		}
		s := string(b)
		i := 0
		if len(s) > 0 {
			i = r.Intn(len(s) + 1)
		}
		want := i
		for want < len(s) && !spaceByte(s[want]) {
			want++
		}
		if got := wordEnd(s, i); got != want {
			t.Fatalf("wordEnd(%q, %d) = %d, want %d", s, i, got, want)
		}
	}
}

// TestPhraseSetContainsWord checks the word-skipping search against
// containsWord per phrase.
func TestPhraseSetContainsWord(t *testing.T) {
	list := []string{"yes", "ok", "that's right", "go ahead", "a", "i'd", "the first", "1"}
	ps := newPhraseSet(list)
	r := rand.New(rand.NewSource(6))
	const alpha = "yesokthat'srightgoaheadi'dfirst1 _.-,!\n"
	for n := 0; n < 300000; n++ {
		b := make([]byte, r.Intn(30))
		for i := range b {
			b[i] = alpha[r.Intn(len(alpha))]
		}
		if r.Intn(2) == 0 && len(b) > 0 {
			p := list[r.Intn(len(list))]
			at := r.Intn(len(b))
			b = append(b[:at], append([]byte(p), b[at:]...)...)
		}
		s := string(b)
		want := false
		for _, p := range list {
			if containsWord(s, p) {
				want = true
			}
		}
		if got := ps.containsWord(s); got != want {
			t.Fatalf("containsWord(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestPhraseSetEach checks the bigram-anchored search against a
// strings.Index loop per phrase: the same occurrences, each once.
func TestPhraseSetEach(t *testing.T) {
	lists := [][]string{countLeads, hypothetical, confirmPrompts, {"ab", "ba", "aa", "abab", "a b"}}
	r := rand.New(rand.NewSource(7))
	for _, list := range lists {
		ps := newPhraseSet(list)
		if ps.bigramBits == nil {
			t.Fatalf("%q: no bigram anchors", list)
		}
		alpha := " ab.\\n"
		for _, p := range list {
			alpha += p
		}
		for n := 0; n < 30000; n++ {
			b := make([]byte, r.Intn(40))
			for i := range b {
				b[i] = alpha[r.Intn(len(alpha))]
			}
			for k := r.Intn(3); k > 0 && len(b) > 0; k-- {
				p := list[r.Intn(len(list))]
				at := r.Intn(len(b))
				b = append(b[:at], append([]byte(p), b[at:]...)...)
			}
			s := string(b)
			want := map[[2]int]int{}
			for pi, p := range list {
				for off := 0; off <= len(s); {
					k := strings.Index(s[off:], p)
					if k < 0 {
						break
					}
					want[[2]int{off + k, pi}]++
					off += k + 1
				}
			}
			got := map[[2]int]int{}
			ps.each(s, func(k int, p string) bool {
				got[[2]int{k, slices.Index(list, p)}]++
				return true
			})
			if !maps.Equal(got, want) {
				t.Fatalf("each(%q) = %v, want %v", s, got, want)
			}
			if ps.contains(s) != (len(want) > 0) {
				t.Fatalf("contains(%q)", s)
			}
		}
	}
}

// TestFloatTable checks floatTable against a map[float64] used the way
// addSum and derive used it, across resets.
func TestFloatTable(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	var ft floatTable
	for round := 0; round < 50; round++ {
		ft.reset()
		m := map[float64]sumRef{}
		for n := 0; n < 2000; n++ {
			v := float64(r.Intn(500)) + []float64{0, 0.5, 0.25, 0.1}[r.Intn(4)]
			if r.Intn(10) == 0 {
				v = -v
			}
			if v == 0 {
				v = 0
			}
			ref := sumRef{group: int32(n), v: v}
			if _, ok := m[v]; !ok {
				m[v] = ref
			}
			ft.addIfAbsent(v, ref)
			q := float64(r.Intn(500))
			got, gok := ft.get(q)
			want, wok := m[q]
			if gok != wok || got != want {
				t.Fatalf("get(%v) = %v %v, want %v %v", q, got, gok, want, wok)
			}
		}
		if _, ok := ft.get(math.NaN()); ok {
			t.Fatal("NaN found")
		}
	}
}

// TestNameHasPart checks nameHasPart against the concatenating tests.
func TestNameHasPart(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	const alpha = "ab_"
	for n := 0; n < 200000; n++ {
		mk := func(k int) string {
			b := make([]byte, k)
			for i := range b {
				b[i] = alpha[r.Intn(len(alpha))]
			}
			return string(b)
		}
		name, p := mk(r.Intn(7)), mk(r.Intn(4))
		want := strings.HasSuffix(name, "_"+p) || strings.HasPrefix(name, p+"_")
		if got := nameHasPart(name, p); got != want {
			t.Fatalf("nameHasPart(%q, %q) = %v", name, p, got)
		}
	}
}
