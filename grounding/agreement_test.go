package grounding

import (
	"math"
	"strings"
	"testing"
)

func agLabels(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, " ")
}

func agNear(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

func TestCohensKappa(t *testing.T) {
	tests := []struct {
		name   string
		a, b   []string
		want   float64
		wantOK bool
	}{
		// p_o = 0.8; both raters say p 6 times in 10: p_e = .36 + .16 = .52;
		// (0.8 − 0.52) / 0.48 = 0.58333.
		{"ten items", agLabels("p p f f p f p p f p"), agLabels("p f f f p f p p p p"), 0.58333, true},
		// The textbook 2×2 table: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
		// p_o = 0.7, p_e = 0.5·0.6 + 0.5·0.4 = 0.5, kappa = 0.4.
		{"textbook 50", append(append(append(agRep("y", 20), agRep("y", 5)...), agRep("n", 10)...), agRep("n", 15)...),
			append(append(append(agRep("y", 20), agRep("n", 5)...), agRep("y", 10)...), agRep("n", 15)...), 0.4, true},
		{"perfect", agLabels("p f p"), agLabels("p f p"), 1, true},
		// Agreement at exactly chance level: p_o = 0.5, p_e = 0.5.
		{"chance", agLabels("p p f f"), agLabels("p f p f"), 0, true},
		// Systematic disagreement: p_o = 0, p_e = 0.5, kappa = −1.
		{"opposite", agLabels("p f"), agLabels("f p"), -1, true},
		// One label throughout: p_e = 1, kappa undefined.
		{"one label", agLabels("p p p"), agLabels("p p p"), 0, false},
		{"no items", nil, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := CohensKappa(tt.a, tt.b)
			if ok != tt.wantOK || (ok && !agNear(got, tt.want)) {
				t.Errorf("CohensKappa(%v, %v) = %.5f, %v; want %.5f, %v", tt.a, tt.b, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func agRep(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestKrippendorffAlpha(t *testing.T) {
	tests := []struct {
		name   string
		units  [][]string
		want   float64
		wantN  int
		wantOK bool
	}{
		// By hand: units (p,p) (p,f) (f,f). o_pp = 2, o_pf = o_fp = 1,
		// o_ff = 2; n_p = n_f = 3, n = 6. alpha = 1 − 5·2 / (3·3·2) = 0.44444.
		{"three pairs", [][]string{agLabels("p p"), agLabels("p f"), agLabels("f f")}, 0.44444, 6, true},
		// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability",
		// nominal example: 4 coders, 12 units, 3 of them with a missing or
		// a single value. alpha = 0.743.
		{"krippendorff 2011", [][]string{
			agLabels("1 1 1"), agLabels("2 2 3 2"), agLabels("3 3 3 3"), agLabels("3 3 3 3"),
			agLabels("2 2 2 2"), agLabels("1 2 3 4"), agLabels("4 4 4 4"), agLabels("1 1 2 1"),
			agLabels("2 2 2 2"), agLabels("5 5 5"), agLabels("1 1"), agLabels("3"),
		}, 0.743, 40, true},
		// A unit with a single value is not pairable. Left: (p,p) (p,f):
		// o_pp = 2, o_pf = o_fp = 1; n_p = 3, n_f = 1, n = 4;
		// alpha = 1 − 3·2 / (3·1·2) = 0.
		{"singletons ignored", [][]string{agLabels("p p"), agLabels("f"), agLabels("p f")}, 0, 4, true},
		{"perfect", [][]string{agLabels("p p p"), agLabels("f f")}, 1, 5, true},
		{"one label throughout", [][]string{agLabels("p p"), agLabels("p p p")}, 0, 5, false},
		{"nothing pairable", [][]string{agLabels("p"), nil}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, ok := KrippendorffAlpha(tt.units)
			if ok != tt.wantOK || n != tt.wantN || (ok && !agNear(got, tt.want)) {
				t.Errorf("KrippendorffAlpha(%v) = %.5f, n %d, %v; want %.5f, n %d, %v", tt.units, got, n, ok, tt.want, tt.wantN, tt.wantOK)
			}
		})
	}
}

func TestRawAgreement(t *testing.T) {
	tests := []struct {
		a, b []string
		want float64
	}{
		{agLabels("p f p f"), agLabels("p f f f"), 0.75},
		{nil, nil, 0},
		{agLabels("p"), agLabels("p"), 1},
	}
	for _, tt := range tests {
		if got := RawAgreement(tt.a, tt.b); !agNear(got, tt.want) {
			t.Errorf("RawAgreement(%v, %v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestAgreement(t *testing.T) {
	// Three raters (1, 2, 3) on four items:
	//   item 10: 1 p, 2 p, 3 f
	//   item 11: 1 f, 2 f
	//   item 12: 1 p, 3 p
	//   item 13: 2 p          (single label: not pairable)
	r := func(item, rater int64, l string) Rating { return Rating{Item: item, Rater: rater, Label: l} }
	got := Agreement([]Rating{
		r(10, 1, "p"), r(10, 2, "p"), r(10, 3, "f"),
		r(11, 1, "p"), r(11, 1, "f"), r(11, 2, "f"), // rater 1's later label wins
		r(12, 1, "p"), r(12, 3, "p"),
		r(13, 2, "p"),
	})
	// Pairs: item 10: (1,2) agree, (1,3) no, (2,3) no; item 11: (1,2) agree;
	// item 12: (1,3) agree. 5 pairs, 3 agree.
	if got.Items != 3 || got.Ratings != 7 || got.Pairs != 5 || !agNear(got.Raw, 0.6) {
		t.Errorf("Agreement = items %d ratings %d pairs %d raw %.3f; want 3, 7, 5, 0.6", got.Items, got.Ratings, got.Pairs, got.Raw)
	}
	// Alpha by hand: item 10 (m=3, w=1/2): o_pp = 1, o_pf = o_fp = 1;
	// item 11: o_ff += 2; item 12: o_pp += 2. o_pp = 3, o_pf = o_fp = 1,
	// o_ff = 2; n_p = 4, n_f = 3, n = 7. alpha = 1 − 6·2 / (4·3·2) = 0.5.
	if !got.AlphaOK || !agNear(got.Alpha, 0.5) {
		t.Errorf("Agreement alpha = %.4f, %v; want 0.5", got.Alpha, got.AlphaOK)
	}
	want := []PairAgreement{
		// (1,2) on items 10, 11: p/p, f/f: raw 1, kappa 1.
		{A: 1, B: 2, Items: 2, Raw: 1, Kappa: 1, KappaOK: true},
		// (1,3) on items 10, 12: p/f, p/p: raw .5; rater 1 always p: p_e = .5,
		// kappa (0.5 − 0.5) / 0.5 = 0.
		{A: 1, B: 3, Items: 2, Raw: 0.5, Kappa: 0, KappaOK: true},
		// (2,3) on item 10: p/f: raw 0; p_e = 0, kappa = 0.
		{A: 2, B: 3, Items: 1, Raw: 0, Kappa: 0, KappaOK: true},
	}
	if len(got.ByPair) != len(want) {
		t.Fatalf("Agreement pairs = %+v, want %+v", got.ByPair, want)
	}
	for i, w := range want {
		g := got.ByPair[i]
		if g.A != w.A || g.B != w.B || g.Items != w.Items || !agNear(g.Raw, w.Raw) || g.KappaOK != w.KappaOK || !agNear(g.Kappa, w.Kappa) {
			t.Errorf("pair %d = %+v, want %+v", i, g, w)
		}
	}
}
