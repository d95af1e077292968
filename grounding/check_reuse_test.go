package grounding

import (
	"encoding/json"
	"strconv"
	"testing"
)

// TestChunkAdd: a decision's evidence grows in place while it is the
// chunk's latest handout, moves when another was cut after it, and never
// writes over another decision's evidence.
func TestChunkAdd(t *testing.T) {
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

// TestCheckScratchReuse checks generated trajectories of both domains, then
// the same again in reverse order on the same goroutine (so on the same
// pooled checker, its scratch maps, lists and chunks reused across
// different trajectories), and compares the results: nothing a check
// leaves behind may change the next one, and a result must not share
// memory a later check writes.
func TestCheckScratchReuse(t *testing.T) {
	var pool []*Trajectory
	for tr := range Generate(GenOptions{Trajectories: 60, Seed: 7, Kind: "tau"}) {
		pool = append(pool, tr)
	}
	pool = append(pool, benchPool(20)...)
	first := make([]Result, len(pool))
	want := make([]string, len(pool))
	for i, tr := range pool {
		first[i] = Check(tr, nil)
		want[i] = resultJSON(t, first[i])
	}
	for i := len(pool) - 1; i >= 0; i-- {
		if got := resultJSON(t, Check(pool[i], nil)); got != want[i] {
			t.Errorf("trajectory %d (%s): result differs when checked in reverse order", i, pool[i].ID)
		}
	}
	for i := range pool {
		if got := resultJSON(t, first[i]); got != want[i] {
			t.Errorf("trajectory %d (%s): result changed after later checks", i, pool[i].ID)
		}
	}
}

func resultJSON(t *testing.T, r Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
