package grounding

import (
	"strings"
	"testing"
)

// TestReplyGateDFA checks the gate's automaton against a plain search for
// each of its phrases: the lists it reports are exactly those with a phrase
// in the text.
func TestReplyGateDFA(t *testing.T) {
	texts := []string{"", "y", "you have two upcoming reservations", "i've found your reservation. ending in 1234",
		"the last 4 digits: 7334", "ÉNDING IN 12 — ending inending with", "i have located your accountfound your order"}
	for _, tr := range benchPool(10) {
		for _, m := range tr.Messages {
			texts = append(texts, strings.ToLower(m.Content))
		}
	}
	for _, name := range []string{"airline", "retail"} {
		g := &ProfileFor(name).compiled.gate
		for _, x := range append(texts, g.list...) {
			var want gateBits
			for _, p := range g.list {
				if strings.Contains(x, p) {
					want.has |= g.bits[p].has
					want.held |= g.bits[p].held
				}
			}
			if got := g.dfa.scan(x); got != want {
				t.Fatalf("%s: %q: got %+v, want %+v", name, x, got, want)
			}
		}
	}
}

// TestFirstFoundClaim checks the anchored search for found claims against
// a search for each claim.
func TestFirstFoundClaim(t *testing.T) {
	texts := []string{"", " your ", "i found your order", "so i've located your account. i found your order",
		"i have identified your your booking and i pulled up your details", "i've i have found your information"}
	for _, tr := range benchPool(10) {
		for _, m := range tr.Messages {
			texts = append(texts, strings.ToLower(m.Content))
		}
	}
	for _, x := range texts {
		want := -1
		for _, p := range foundClaims {
			if j := strings.Index(x, p); j >= 0 && (want < 0 || j < want) {
				want = j
			}
		}
		if got := firstFoundClaim(x); got != want {
			t.Fatalf("%q: got %d, want %d", x, got, want)
		}
	}
}
