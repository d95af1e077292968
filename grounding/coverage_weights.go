package grounding

import (
	"cmp"
	"slices"
)

// WeightRow is one rendered sample of a selection (a trajectory): its parent
// interaction and its certified target tokens (CertifiedTokens).
type WeightRow struct {
	Parent string `json:"parent"`
	Tokens int    `json:"tokens"`
}

// ParentNormalized returns the parent-normalized weight of each row (SPEC
// §4) and P, the number of parents with at least one certified target token:
// each such parent has total weight 1/P, split among its rows in proportion
// to their tokens. Rows without tokens, and every row of a parent without
// any, weigh 0. The weights sum to 1 when P > 0.
func ParentNormalized(rows []WeightRow) ([]float64, int) {
	total := map[string]int{}
	for _, r := range rows {
		if r.Tokens > 0 {
			total[r.Parent] += r.Tokens
		}
	}
	p := len(total)
	w := make([]float64, len(rows))
	if p == 0 {
		return w, 0
	}
	for i, r := range rows {
		if r.Tokens > 0 {
			w[i] = float64(r.Tokens) / float64(total[r.Parent]) / float64(p)
		}
	}
	return w, p
}

// PerRow returns the weights per-row averaging gives: 1/R for each of the R
// rows with certified tokens, 0 for the others.
func PerRow(rows []WeightRow) []float64 {
	n := 0
	for _, r := range rows {
		if r.Tokens > 0 {
			n++
		}
	}
	w := make([]float64, len(rows))
	for i, r := range rows {
		if r.Tokens > 0 {
			w[i] = 1 / float64(n)
		}
	}
	return w
}

// PerToken returns the weights token-level averaging gives: each row in
// proportion to its certified tokens over all rows.
func PerToken(rows []WeightRow) []float64 {
	total := 0
	for _, r := range rows {
		total += r.Tokens
	}
	w := make([]float64, len(rows))
	for i, r := range rows {
		if total > 0 && r.Tokens > 0 {
			w[i] = float64(r.Tokens) / float64(total)
		}
	}
	return w
}

// WeightBin is one bar group of the weight histogram: how many parents get a
// total weight in [Lo, Hi) times the equal share 1/P under each scheme.
type WeightBin struct {
	Label            string  `json:"label"`
	Lo               float64 `json:"lo"`
	Hi               float64 `json:"hi"` // 0: no upper bound
	ParentNormalized int     `json:"parent_normalized"`
	PerRow           int     `json:"per_row"`
	PerToken         int     `json:"per_token"`
}

// WeightScheme summarizes how one scheme spreads weight over parents.
type WeightScheme struct {
	// Min and Max are the smallest and largest parent total, times P.
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	// TopDecile is the share of all weight the heaviest tenth of the
	// parents (at least one) carry; 0.10 when every parent weighs the same.
	TopDecile float64 `json:"top_decile"`
}

// WeightReport compares parent normalization with per-row and per-token
// averaging over the same rows.
type WeightReport struct {
	Rows    int `json:"rows"`    // rows with certified tokens
	Parents int `json:"parents"` // P
	Tokens  int `json:"tokens"`
	// Weight, RowWeight and TokenWeight are each row's weight under parent
	// normalization, per-row and per-token averaging.
	Weight      []float64 `json:"weight"`
	RowWeight   []float64 `json:"row_weight"`
	TokenWeight []float64 `json:"token_weight"`
	// Bins is the histogram of parent totals, relative to 1/P.
	Bins             []WeightBin  `json:"bins"`
	ParentNormScheme WeightScheme `json:"parent_normalized"`
	PerRowScheme     WeightScheme `json:"per_row"`
	PerTokenScheme   WeightScheme `json:"per_token"`
}

// weightBins are the histogram's bin edges, relative to the equal share.
var weightBins = []WeightBin{
	{Label: "< 0.5×", Lo: 0, Hi: 0.5},
	{Label: "0.5–0.8×", Lo: 0.5, Hi: 0.8},
	{Label: "0.8–1.25×", Lo: 0.8, Hi: 1.25},
	{Label: "1.25–2×", Lo: 1.25, Hi: 2},
	{Label: "2–4×", Lo: 2, Hi: 4},
	{Label: "≥ 4×", Lo: 4},
}

// CompareWeights computes the three schemes over rows and the histogram of
// what each gives every parent (with certified tokens), relative to 1/P.
func CompareWeights(rows []WeightRow) WeightReport {
	r := WeightReport{}
	r.Weight, r.Parents = ParentNormalized(rows)
	r.RowWeight = PerRow(rows)
	r.TokenWeight = PerToken(rows)
	for _, row := range rows {
		if row.Tokens > 0 {
			r.Rows++
			r.Tokens += row.Tokens
		}
	}
	r.Bins = slices.Clone(weightBins)
	if r.Parents == 0 {
		return r
	}
	// Parent totals under each scheme, in parent order.
	idx := map[string]int{}
	var norm, perRow, perTok []float64
	for i, row := range rows {
		if row.Tokens <= 0 {
			continue
		}
		k, ok := idx[row.Parent]
		if !ok {
			k = len(norm)
			idx[row.Parent] = k
			norm, perRow, perTok = append(norm, 0), append(perRow, 0), append(perTok, 0)
		}
		norm[k] += r.Weight[i]
		perRow[k] += r.RowWeight[i]
		perTok[k] += r.TokenWeight[i]
	}
	scale := float64(r.Parents)
	for k := range norm {
		r.Bins[binOf(norm[k]*scale)].ParentNormalized++
		r.Bins[binOf(perRow[k]*scale)].PerRow++
		r.Bins[binOf(perTok[k]*scale)].PerToken++
	}
	r.ParentNormScheme = scheme(norm, scale)
	r.PerRowScheme = scheme(perRow, scale)
	r.PerTokenScheme = scheme(perTok, scale)
	return r
}

// binOf returns the histogram bin of a relative weight. Values within 1e-9
// of an edge count as on it, so an exact 1/P never falls below 0.8.
func binOf(x float64) int {
	for i := len(weightBins) - 1; i > 0; i-- {
		if x >= weightBins[i].Lo-1e-9 {
			return i
		}
	}
	return 0
}

func scheme(totals []float64, scale float64) WeightScheme {
	s := slices.Clone(totals)
	slices.SortFunc(s, func(a, b float64) int { return cmp.Compare(b, a) })
	out := WeightScheme{Min: s[len(s)-1] * scale, Max: s[0] * scale}
	top := max(1, len(s)/10)
	sum, all := 0.0, 0.0
	for i, v := range s {
		all += v
		if i < top {
			sum += v
		}
	}
	if all > 0 {
		out.TopDecile = sum / all
	}
	return out
}
