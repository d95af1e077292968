package grounding

import (
	"math/rand"
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
