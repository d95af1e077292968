package grounding

import (
	"strconv"
	"strings"
	"testing"
)

// refStringEnd and refTopLevelValue are the byte-at-a-time forms
// stringEnd and topLevelValue replaced; they must agree on every input.
func refStringEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

func refTopLevelValue(s, key string) (string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			j := refStringEnd(s, i)
			if j < 0 {
				return "", false
			}
			if depth == 1 {
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

// TestTopLevelValueAgrees holds topLevelValue and stringEnd to their
// byte-at-a-time forms on every string over a small alphabet of JSON's
// structural bytes and backslashes, and on real-looking records.
func TestTopLevelValueAgrees(t *testing.T) {
	alpha := []byte{'"', '\\', '{', '}', '[', ']', ':', 'a', ' '}
	var gen func(prefix []byte, n int)
	n := 0
	gen = func(prefix []byte, left int) {
		s := string(prefix)
		for i := 0; i < len(s); i++ {
			if got, want := stringEnd(s, i), refStringEnd(s, i); got != want {
				t.Fatalf("stringEnd(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
		for _, key := range []string{"a", "", "aa", `a\`} {
			gv, gok := topLevelValue(s, key)
			wv, wok := refTopLevelValue(s, key)
			if gv != wv || gok != wok {
				t.Fatalf("topLevelValue(%q, %q) = %q, %v; want %q, %v", s, key, gv, gok, wv, wok)
			}
		}
		n++
		if left == 0 {
			return
		}
		for _, b := range alpha {
			gen(append(prefix, b), left-1)
		}
	}
	gen(nil, 6)
	recs := []string{
		`{"reservation_id": "ABC123", "cabin": "economy", "flights": [{"a": "b\\"c"}], "insurance": "no"}`,
		`{"x": {"reservation_id": "N"}, "reservation_id" : "Y\\\\", "z": 1}`,
		`[{"reservation_id": "ABC123"}]`,
		`{"reservation_id": 12, "note": "say \"reservation_id\": \"X\""}`,
	}
	for _, r := range recs {
		for _, key := range []string{"reservation_id", "cabin", "insurance", "z", "note", "flights"} {
			gv, gok := topLevelValue(r, key)
			wv, wok := refTopLevelValue(r, key)
			if gv != wv || gok != wok || !strings.Contains(r, gv) {
				t.Errorf("topLevelValue(%q, %q) = %q, %v; want %q, %v", r, key, gv, gok, wv, wok)
			}
		}
	}
	t.Logf("%d strings", n)
}

// TestAppendLowerAgrees holds appendLower to strings.ToLower on text with
// every kind of byte: ASCII, multi-byte letters that lower (É, Σ, İ),
// ones that do not (’, —, emoji), and invalid UTF-8.
func TestAppendLowerAgrees(t *testing.T) {
	parts := []string{"A", "z", " ", "É", "é", "Σ", "İ", "K", "’", "—", "😀", "\xff", "\xe2\x80", "\xed\xa0\x80", "ǅ", "ẞ", "Ⅻ"}
	var gen func(s string, left int)
	gen = func(s string, left int) {
		if got, want := string(appendLower(nil, s)), strings.ToLower(s); got != want {
			t.Fatalf("appendLower(%q) = %q, want %q", s, got, want)
		}
		if left == 0 {
			return
		}
		for _, p := range parts {
			gen(s+p, left-1)
		}
	}
	gen("", 3)
}

// TestQuoteAgrees holds appendQuote to strconv on every byte and
// on strings mixing plain and escaped ones.
func TestQuoteAgrees(t *testing.T) {
	var cases []string
	for b := 0; b < 256; b++ {
		cases = append(cases, string([]byte{byte(b)}), "ab"+string([]byte{byte(b)})+"cd")
	}
	cases = append(cases, "", "flights[0]", "W7510987", `say "hi"`, `a\b`, "tab\there", "café", "’", "\u2028", "\x7f", "~ ")
	for _, s := range cases {
		if got, want := string(appendQuote([]byte("x"), s)), strconv.AppendQuote([]byte("x"), s); got != string(want) {
			t.Errorf("appendQuote(%q) = %s, want %s", s, got, want)
		}
	}
}
