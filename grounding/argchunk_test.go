package grounding

import (
	"strconv"
	"testing"
)

// TestArgChunkAdd: a decision's evidence grows in place while it is the
// chunk's latest handout, moves when another was cut after it, and never
// writes over another decision's evidence.
func TestArgChunkAdd(t *testing.T) {
	ev := func(i int) ArgEvidence { return ArgEvidence{Path: strconv.Itoa(i)} }
	var ac chunk[ArgEvidence]
	a := ac.take(2)
	a = ac.add(a, ev(0), ev(1))
	a = ac.add(a, ev(2)) // past its cap, latest handout: in place
	if &a[0] != &ac.a[0] {
		t.Error("the latest handout moved to grow")
	}
	b := ac.take(1)
	b = ac.add(b, ev(10))
	a = ac.add(a, ev(3), ev(4)) // no longer the latest: moves
	b = ac.add(b, ev(11))       // a moved after b: b moves too
	b = ac.add(b, ev(12))       // now the latest again
	for i, x := range a {
		if x.Path != strconv.Itoa(i) {
			t.Errorf("a[%d] = %q, want %d", i, x.Path, i)
		}
	}
	for i, x := range b {
		if x.Path != strconv.Itoa(10+i) {
			t.Errorf("b[%d] = %q, want %d", i, x.Path, 10+i)
		}
	}
	if len(a) != 5 || len(b) != 3 {
		t.Fatalf("len(a), len(b) = %d, %d, want 5, 3", len(a), len(b))
	}
	// Appending to either with plain append must not reach the other.
	_ = append(a[:len(a):len(a)], ev(99))
	if cap(a) != len(a) || cap(b) != len(b) {
		t.Errorf("cap(a), cap(b) = %d, %d: a handout must be capped at its length", cap(a), cap(b))
	}
	// A slice the chunk never handed out moves into it.
	var c []ArgEvidence
	c = ac.add(c, ev(20))
	c = ac.add(append([]ArgEvidence(nil), c...), ev(21))
	if len(c) != 2 || c[0].Path != "20" || c[1].Path != "21" {
		t.Errorf("c = %v", c)
	}
}
