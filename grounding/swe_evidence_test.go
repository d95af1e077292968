package grounding

import (
	"reflect"
	"strings"
	"testing"
)

func TestApproxTokens(t *testing.T) {
	// cl100k_base counts from tiktoken (js-tiktoken 1.0.21).
	tests := []struct {
		in      string
		cl100k  int
		maxDiff int
	}{
		{"", 0, 0},
		{"hello", 1, 0},
		{"hello world", 2, 0},
		{"    x = 1\n", 6, 0},
		{"def div(a, b):\n    return a / b\n", 12, 1},
		{"It's 2024-12-04.", 10, 1},
		{"tests/test_calc.py::test_div_zero", 8, 2},
		{"if __name__ == '__main__':\n    main()\n", 11, 2},
	}
	for _, tt := range tests {
		got := ApproxTokens(tt.in)
		if d := got - tt.cl100k; d > tt.maxDiff || -d > tt.maxDiff {
			t.Errorf("ApproxTokens(%q) = %d, cl100k_base says %d (allowed ±%d)", tt.in, got, tt.cl100k, tt.maxDiff)
		}
	}
	// Never panics or stalls on odd input.
	for _, s := range []string{"\xff\xfe", "'", "'S", "  \n \n ", "ümlaut façade", "日本語のテキスト", "a'bc", strings.Repeat("=", 100)} {
		if n := ApproxTokens(s); n < 0 || n > len(s) {
			t.Errorf("ApproxTokens(%q) = %d", s, n)
		}
	}
}

func TestSWEEvidence(t *testing.T) {
	in := &SWEInstance{
		InstanceID: "acme__calc-1",
		Patch:      calcPatch + "diff --git a/pkg/util.py b/pkg/util.py\n--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -5,0 +6,2 @@ x\n+y\n+z\n",
		TestPatch:  "diff --git a/tests/t.py b/tests/t.py\n+def test_div_zero(): assert div(1, 0) == 0\n",
		FailToPass: []string{"tests/t.py::test_div_zero"},
	}
	ev := SWEEvidenceOf(in)
	wantSpans := []SWESpan{{File: "pkg/calc.py", Start: 1, End: 2}, {File: "pkg/util.py", Start: 5, End: 5}}
	if !reflect.DeepEqual(ev.Spans, wantSpans) {
		t.Errorf("spans = %+v, want %+v", ev.Spans, wantSpans)
	}
	wantLOC := "pkg/calc.py:1-2\ndef div(a, b):\n    return a / b\npkg/util.py:5-5\n"
	if ev.LOCText != wantLOC {
		t.Errorf("LOC text = %q, want %q", ev.LOCText, wantLOC)
	}
	if !strings.HasPrefix(ev.REPText, "tests/t.py::test_div_zero\n\ndiff --git") || ev.PATCHText != in.Patch {
		t.Errorf("REP/PATCH text = %q / %q", ev.REPText, ev.PATCHText)
	}
	if ev.LOCTokens != ApproxTokens(ev.LOCText) || ev.REPTokens != ApproxTokens(ev.REPText) || ev.PATCHTokens != ApproxTokens(ev.PATCHText) ||
		ev.TotalTokens != ev.LOCTokens+ev.REPTokens+ev.PATCHTokens || ev.LOCTokens == 0 {
		t.Errorf("token counts = %d %d %d total %d", ev.LOCTokens, ev.REPTokens, ev.PATCHTokens, ev.TotalTokens)
	}
	empty := SWEEvidenceOf(&SWEInstance{InstanceID: "x"})
	if empty.TotalTokens != 0 || len(empty.Spans) != 0 {
		t.Errorf("evidence of an empty instance = %+v", empty)
	}
}
