package grounding

import (
	"strings"
	"testing"
)

// longObservation is a JSON observation of more than maxIndexedMessage
// bytes whose last rows are rows, so that they fall past what is indexed.
func longObservation(rows ...string) string {
	var b strings.Builder
	b.WriteString(`{"rows": [`)
	for b.Len() < maxIndexedMessage+1000 {
		b.WriteString(`{"note": "filler row"}, `)
	}
	b.WriteString(strings.Join(rows, ", "))
	b.WriteString(`]}`)
	return b.String()
}

// TestLongMessageTail: a message too long to index is cut; a value found
// only past the cut is still literal, by a plain search of the rest, with
// its place; a value that is only part of a longer one there is not; a
// value in the hidden context and nowhere visible is still a leak; once
// the search budget is spent, what nothing indexed supports is ambiguous,
// not failed.
func TestLongMessageTail(t *testing.T) {
	obs := longObservation(`{"reservation_id": "ZQ9X7K"}`, `{"reservation_id": "LONGER8A7K"}`)
	build := func() *Trajectory {
		return traj("airline").
			user("Hi, I am mia_li_3668 and I want to see my reservations.").
			call("get_user_details", `{"user_id": "mia_li_3668"}`, obs).
			call("get_reservation_details", `{"reservation_id": "ZQ9X7K"}`, `{"reservation_id": "ZQ9X7K", "status": "ok"}`).
			call("get_reservation_details", `{"reservation_id": "ER8A7K"}`, `{"reservation_id": "ER8A7K", "status": "ok"}`).
			call("get_reservation_details", `{"reservation_id": "HIDD3N"}`, `{"reservation_id": "HIDD3N", "status": "ok"}`).
			hidden(HiddenUserInstruction, "Your other reservation is HIDD3N.").
			build()
	}
	r := Check(build(), nil)
	arg := func(r Result, msg int) ArgEvidence {
		t.Helper()
		d := decisionAt(t, r, msg, 0)
		if len(d.Args) != 1 {
			t.Fatalf("message %d: args %+v", msg, d.Args)
		}
		return d.Args[0]
	}
	tr := build()
	at := strings.Index(tr.Messages[2].Content, `"ZQ9X7K"`) + 1
	if a := arg(r, 3); a.Status != StatusLiteral || a.Where.Message != 2 || a.Where.Start != at || a.Where.End != at+6 || !strings.Contains(a.Where.Note, "plain search") {
		t.Errorf("a value past the cut: %s %+v; want literal at message 2 [%d:%d]", a.Status, a.Where, at, at+6)
	}
	if d := decisionAt(t, r, 3, 0); d.Verdict != VerdictPass {
		t.Errorf("the call on a value past the cut: %s %v, want pass", d.Verdict, d.Reasons)
	}
	if a, d := arg(r, 5), decisionAt(t, r, 5, 0); a.Status != StatusUnsupported || d.Verdict != VerdictFail {
		t.Errorf("a part of a longer id past the cut: %s, %s; want unsupported, fail", a.Status, d.Verdict)
	}
	if a, d := arg(r, 7), decisionAt(t, r, 7, 0); a.Status != StatusHiddenOnly || d.Verdict != VerdictFail {
		t.Errorf("a hidden value: %s, %s; want hidden_only, fail", a.Status, d.Verdict)
	}

	defer func(n int) { maxTailSearch = n }(maxTailSearch)
	maxTailSearch = 1000
	r = Check(build(), nil)
	if a, d := arg(r, 3), decisionAt(t, r, 3, 0); a.Status != StatusUnsupported || d.Verdict != VerdictAmbiguous || a.Where.Note != tailUnsearchedNote {
		t.Errorf("past the search budget: %s %q, %s; want unsupported, ambiguous", a.Status, a.Where.Note, d.Verdict)
	}
	if a, d := arg(r, 7), decisionAt(t, r, 7, 0); a.Status != StatusHiddenOnly || d.Verdict != VerdictAmbiguous {
		t.Errorf("a hidden value past the search budget: %s, %s; want hidden_only, ambiguous", a.Status, d.Verdict)
	}
}

// TestLongTrajectoryBound: many messages under the per-message bound are
// indexed up to the per-trajectory bound, and the rest searched.
func TestLongTrajectoryBound(t *testing.T) {
	b := traj("airline").user("Hi, I am mia_li_3668.")
	filler := strings.Repeat("nothing to see here, ", maxIndexedMessage/22)
	for range maxIndexedTrajectory/len(filler) + 1 {
		b.user(filler)
	}
	b.user(filler + " my reservation is ZQ9X7K")
	tr := b.call("get_reservation_details", `{"reservation_id": "ZQ9X7K"}`, `{"status": "ok"}`).build()
	r := Check(tr, nil)
	d := decisionAt(t, r, len(tr.Messages)-2, 0)
	if a := d.Args[0]; a.Status != StatusLiteral || a.Where.Message != len(tr.Messages)-3 || !strings.Contains(a.Where.Note, "plain search") {
		t.Errorf("a value past the trajectory's bound: %s %+v", a.Status, a.Where)
	}
	if len(tr.Messages[len(tr.Messages)-3].Content) <= maxIndexedMessage/2 {
		t.Fatal("Check changed the caller's trajectory")
	}
}

func TestCutAtBoundary(t *testing.T) {
	for _, tt := range []struct {
		s     string
		limit int
		want  int
	}{
		{"abc def", 10, 7},                      // short enough: whole
		{"abc defgh", 6, 4},                     // not inside defgh
		{"ab ZQ9X7K", 6, 3},                     // a value is never cut short
		{"a 12.50 b", 5, 2},                     // nor a number
		{"x\"é\"y", 3, 2},                       // after the quote
		{strings.Repeat("é", 3000), 5001, 5000}, // no separator: a rune boundary
	} {
		if got := cutAtBoundary(tt.s, tt.limit); got != tt.want {
			t.Errorf("cutAtBoundary(%.20q, %d) = %d, want %d", tt.s, tt.limit, got, tt.want)
		}
	}
}
