package grounding

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestAppendSFTMessagesMarks(t *testing.T) {
	tr := exportFixture()
	prefix := []byte("prefix:")
	out, marks := AppendSFTMessages(slices.Clone(prefix), tr.Messages)
	rendering := string(out[len(prefix):])
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(rendering), &msgs); err != nil {
		t.Fatalf("rendering is not JSON: %v\n%s", err, rendering)
	}
	// Message 8 answers a hidden call: left out.
	if len(msgs) != 8 || strings.Contains(rendering, "answer to a hidden call") {
		t.Errorf("%d messages rendered, want 8 without the answer to a hidden call:\n%s", len(msgs), rendering)
	}
	want := []int{2, 5, 7}
	if len(marks) != len(want) {
		t.Fatalf("marks %v, want one per assistant message %v", marks, want)
	}
	for i, k := range marks {
		m := tr.Messages[want[i]]
		if k.Message != want[i] || k.Tokens != targetTokens(&m) {
			t.Errorf("mark %d = %+v, want message %d with %d tokens", i, k, want[i], targetTokens(&m))
		}
	}
	if err := CheckSFTMarks(rendering, marks); err != nil {
		t.Fatal(err)
	}

	// The stored text reads back to the same marks.
	text := string(AppendSFTMarks(nil, marks))
	back, err := ParseSFTMarks(nil, text)
	if err != nil || !slices.Equal(back, marks) {
		t.Fatalf("ParseSFTMarks(%q) = %v, %v; want %v", text, back, err, marks)
	}

	// Weights set by mark; everything else byte for byte.
	got := string(appendWeighted(nil, rendering, marks, []int{0, 1, 1}))
	var weighted []map[string]any
	if err := json.Unmarshal([]byte(got), &weighted); err != nil {
		t.Fatal(err)
	}
	var ws []any
	for _, m := range weighted {
		if w, ok := m["weight"]; ok {
			ws = append(ws, w)
		}
	}
	if !slices.Equal(ws, []any{0.0, 1.0, 1.0}) || len(got) != len(rendering) {
		t.Errorf("weights %v in %d bytes, want [0 1 1] in %d", ws, len(got), len(rendering))
	}

	// Marks that do not belong to the rendering are refused.
	for _, bad := range [][]SFTMark{
		{{Message: 2, Offset: marks[0].Offset + 1}},
		{marks[1], marks[0]},
		{{Message: 2, Offset: len(rendering)}},
		{{Message: 2, Offset: 0}},
	} {
		if err := CheckSFTMarks(rendering, bad); err == nil {
			t.Errorf("CheckSFTMarks(%v) = nil, want an error", bad)
		}
	}
}

func TestParseSFTMarksMalformed(t *testing.T) {
	for _, s := range []string{"1", "1 2", "1 2 3;", ";1 2 3", "1 2 3 4", "1  2 3", "a 2 3", "1 2 3;4 5", "-1 2 3", "1 2 99999999999999999999"} {
		if got, err := ParseSFTMarks(nil, s); err == nil {
			t.Errorf("ParseSFTMarks(%q) = %v, want an error", s, got)
		}
	}
	got, err := ParseSFTMarks(nil, "2 10 4;5 40 0")
	if err != nil || !slices.Equal(got, []SFTMark{{2, 10, 4}, {5, 40, 0}}) {
		t.Errorf("ParseSFTMarks = %v, %v", got, err)
	}
}
