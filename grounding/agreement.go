package grounding

import (
	"cmp"
	"math"
	"slices"
)

// Rating is one annotator's label on one item.
type Rating struct {
	Item  int64
	Rater int64
	Label string
}

// PairAgreement compares two annotators on the items both labelled.
type PairAgreement struct {
	A, B  int64 // rater ids, A < B
	Items int   // items both labelled
	Raw   float64
	// Kappa is Cohen's kappa; KappaOK is false when it is undefined (no
	// items, or both raters used one and the same label throughout).
	Kappa   float64
	KappaOK bool
}

// AgreementReport is the agreement of all annotators of a pool.
type AgreementReport struct {
	Items   int     // items with at least two labels
	Ratings int     // labels on those items (pairable values)
	Pairs   int     // pairs of labels on the same item
	Raw     float64 // share of those pairs that agree
	// Alpha is Krippendorff's alpha for nominal data over every annotator;
	// AlphaOK is false when it is undefined (fewer than two pairable
	// values, or a single label used throughout).
	Alpha   float64
	AlphaOK bool
	ByPair  []PairAgreement // ordered by A, then B
}

// RawAgreement is the share of positions where a and b hold the same label
// (a and b label the same items, in the same order); 0 for none.
func RawAgreement(a, b []string) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	same := 0
	for i := range n {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(n)
}

// CohensKappa is Cohen's kappa of two raters who labelled the same items
// (a[i] and b[i] are their labels of item i): (p_o − p_e) / (1 − p_e), with
// p_e from each rater's own label frequencies. ok is false when it is
// undefined: no items, or p_e = 1.
func CohensKappa(a, b []string) (kappa float64, ok bool) {
	n := min(len(a), len(b))
	if n == 0 {
		return 0, false
	}
	fa, fb := map[string]float64{}, map[string]float64{}
	for i := range n {
		fa[a[i]]++
		fb[b[i]]++
	}
	po := RawAgreement(a[:n], b[:n])
	pe := 0.0
	for label, ca := range fa {
		pe += (ca / float64(n)) * (fb[label] / float64(n))
	}
	if 1-pe < 1e-12 {
		return 0, false
	}
	return (po - pe) / (1 - pe), true
}

// KrippendorffAlpha is Krippendorff's alpha for nominal data. units holds,
// per item, the labels it received (missing ones left out); items with fewer
// than two labels are not pairable and are ignored. With o the coincidence
// matrix (each ordered pair of labels within an item of m labels counts
// 1/(m−1)) and n_c its margins, alpha = 1 − (n−1)·Σ_{c≠k} o_ck / Σ_{c≠k} n_c·n_k.
// n is the number of pairable labels. ok is false when alpha is undefined:
// fewer than two pairable labels, or a single label throughout.
func KrippendorffAlpha(units [][]string) (alpha float64, n int, ok bool) {
	o := map[[2]string]float64{}
	margins := map[string]float64{}
	for _, u := range units {
		m := len(u)
		if m < 2 {
			continue
		}
		n += m
		w := 1 / float64(m-1)
		for i := range u {
			for j := range u {
				if i != j {
					o[[2]string{u[i], u[j]}] += w
				}
			}
		}
	}
	if n < 2 {
		return 0, n, false
	}
	disagree := 0.0
	for k, v := range o {
		margins[k[0]] += v
		if k[0] != k[1] {
			disagree += v
		}
	}
	expected := 0.0
	for c, nc := range margins {
		for k, nk := range margins {
			if c != k {
				expected += nc * nk
			}
		}
	}
	if expected == 0 {
		return 0, n, false
	}
	return 1 - float64(n-1)*disagree/expected, n, true
}

// Agreement computes raw agreement, Krippendorff's alpha over every rater,
// and for each pair of raters their raw agreement and Cohen's kappa, each on
// the items behind it. A rater's repeated rating of an item keeps the last.
func Agreement(ratings []Rating) AgreementReport {
	byItem := map[int64]map[int64]string{}
	for _, r := range ratings {
		if byItem[r.Item] == nil {
			byItem[r.Item] = map[int64]string{}
		}
		byItem[r.Item][r.Rater] = r.Label
	}
	items := make([]int64, 0, len(byItem))
	for id := range byItem {
		items = append(items, id)
	}
	slices.Sort(items)

	var rep AgreementReport
	var units [][]string
	agreePairs := 0
	type pairLabels struct{ a, b []string }
	pairs := map[[2]int64]*pairLabels{}
	for _, id := range items {
		labels := byItem[id]
		if len(labels) < 2 {
			continue
		}
		raters := make([]int64, 0, len(labels))
		for r := range labels {
			raters = append(raters, r)
		}
		slices.Sort(raters)
		unit := make([]string, len(raters))
		for i, r := range raters {
			unit[i] = labels[r]
		}
		units = append(units, unit)
		rep.Items++
		for i := range raters {
			for j := i + 1; j < len(raters); j++ {
				rep.Pairs++
				if unit[i] == unit[j] {
					agreePairs++
				}
				k := [2]int64{raters[i], raters[j]}
				p := pairs[k]
				if p == nil {
					p = &pairLabels{}
					pairs[k] = p
				}
				p.a = append(p.a, unit[i])
				p.b = append(p.b, unit[j])
			}
		}
	}
	if rep.Pairs > 0 {
		rep.Raw = float64(agreePairs) / float64(rep.Pairs)
	}
	rep.Alpha, rep.Ratings, rep.AlphaOK = KrippendorffAlpha(units)
	for k, p := range pairs {
		pa := PairAgreement{A: k[0], B: k[1], Items: len(p.a), Raw: RawAgreement(p.a, p.b)}
		pa.Kappa, pa.KappaOK = CohensKappa(p.a, p.b)
		if math.IsNaN(pa.Kappa) {
			pa.Kappa, pa.KappaOK = 0, false
		}
		rep.ByPair = append(rep.ByPair, pa)
	}
	slices.SortFunc(rep.ByPair, func(x, y PairAgreement) int {
		return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B))
	})
	return rep
}
