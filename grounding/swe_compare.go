package grounding

import (
	"cmp"
	"slices"
)

// SWEOutcome is what comparisons need of one diagnosed trajectory: the
// figures of SWEDiagnosis without its steps. Localization is nil without a
// reference; Resolved is nil without an evaluation result.
type SWEOutcome struct {
	TrajectoryID int64 // the store's id, 0 outside the store
	ExtID        string
	InstanceID   string
	Steps        int
	// Stages is SWEDiagnosis.StageString: one byte per step, L/R/P, lower
	// case for fall-backs.
	Stages       string
	EditedFiles  []string
	Localization *float64
	Reproduction *bool
	Verification *bool
	Completed    bool
	Resolved     *bool
}

// Outcome returns the comparison figures of d.
func (d SWEDiagnosis) Outcome() SWEOutcome {
	return SWEOutcome{
		ExtID:        d.Trajectory,
		InstanceID:   d.InstanceID,
		Steps:        len(d.Steps),
		Stages:       d.StageString(),
		EditedFiles:  d.EditedFiles,
		Localization: d.Localization,
		Reproduction: d.Reproduction,
		Verification: d.Verification,
		Completed:    d.Completed,
	}
}

// SWELocalization is the recall of the reference files among the edited
// files; nil when there is no reference.
func SWELocalization(edited, reference []string) *float64 {
	if len(reference) == 0 {
		return nil
	}
	hit := 0
	for _, r := range reference {
		for _, e := range edited {
			if sweSamePath(r, e) {
				hit++
				break
			}
		}
	}
	v := float64(hit) / float64(len(reference))
	return &v
}

// SWEMean is a mean and how many instances it is over; N == 0 means there
// is nothing to average (no reference, no result, …).
type SWEMean struct {
	Value float64
	N     int
}

// SWEMetric names a comparable figure.
type SWEMetric int

// The figures of the run comparison, in table order.
const (
	SWELocalizationMetric SWEMetric = iota
	SWEReproductionMetric
	SWEVerificationMetric
	SWECompletionMetric
	SWEStepsMetric
	SWEResolvedMetric
	sweMetrics
)

// SWEMetricNames are the metrics' names, indexed by SWEMetric.
var SWEMetricNames = [...]string{"localization", "reproduction", "verification", "completion", "steps", "resolved"}

// SWESummary is the run-level figures of a set of outcomes. Outcomes are
// first collapsed per instance (a mean over the instance's trajectories;
// trajectories without an instance id count alone), so each mean is over
// instances.
type SWESummary struct {
	Trajectories int
	Instances    int
	Means        [sweMetrics]SWEMean
	// Share is the fraction of all steps the router put in LOC, REP and
	// PATCH; StepsTotal is what it is over.
	Share      [3]float64
	StepsTotal int
}

// Mean returns the summary's mean for m.
func (s SWESummary) Mean(m SWEMetric) SWEMean { return s.Means[m] }

// sweInstanceValues is one instance's metric values (NaN-free: has marks
// which exist).
type sweInstanceValues struct {
	key string
	val [sweMetrics]float64
	has [sweMetrics]bool
}

func sweKey(o SWEOutcome) string {
	if o.InstanceID != "" {
		return o.InstanceID
	}
	return "\x00" + o.ExtID // never pairs with another run
}

// sweCollapse averages each instance's trajectories, metric by metric.
func sweCollapse(outs []SWEOutcome) map[string]*sweInstanceValues {
	type acc struct {
		sum [sweMetrics]float64
		n   [sweMetrics]int
	}
	accs := map[string]*acc{}
	for _, o := range outs {
		a := accs[sweKey(o)]
		if a == nil {
			a = &acc{}
			accs[sweKey(o)] = a
		}
		add := func(m SWEMetric, v float64) { a.sum[m] += v; a.n[m]++ }
		if o.Localization != nil {
			add(SWELocalizationMetric, *o.Localization)
		}
		if o.Reproduction != nil {
			add(SWEReproductionMetric, b2f(*o.Reproduction))
		}
		if o.Verification != nil {
			add(SWEVerificationMetric, b2f(*o.Verification))
		}
		add(SWECompletionMetric, b2f(o.Completed))
		add(SWEStepsMetric, float64(o.Steps))
		if o.Resolved != nil {
			add(SWEResolvedMetric, b2f(*o.Resolved))
		}
	}
	out := make(map[string]*sweInstanceValues, len(accs))
	for k, a := range accs {
		iv := &sweInstanceValues{key: k}
		for m := range sweMetrics {
			if a.n[m] > 0 {
				iv.val[m], iv.has[m] = a.sum[m]/float64(a.n[m]), true
			}
		}
		out[k] = iv
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// SummarizeSWE computes the run-level figures of outs.
func SummarizeSWE(outs []SWEOutcome) SWESummary {
	s := SWESummary{Trajectories: len(outs)}
	inst := sweCollapse(outs)
	s.Instances = len(inst)
	var sum [sweMetrics]float64
	for _, iv := range inst {
		for m := range sweMetrics {
			if iv.has[m] {
				sum[m] += iv.val[m]
				s.Means[m].N++
			}
		}
	}
	for m := range sweMetrics {
		if s.Means[m].N > 0 {
			s.Means[m].Value = sum[m] / float64(s.Means[m].N)
		}
	}
	var counts [3]int
	for _, o := range outs {
		for i := 0; i < len(o.Stages); i++ {
			switch o.Stages[i] | 0x20 { // lower-case either way
			case 'l':
				counts[0]++
			case 'r':
				counts[1]++
			case 'p':
				counts[2]++
			}
		}
	}
	s.StepsTotal = counts[0] + counts[1] + counts[2]
	if s.StepsTotal > 0 {
		for i := range counts {
			s.Share[i] = float64(counts[i]) / float64(s.StepsTotal)
		}
	}
	return s
}

// SWEDelta is a run's difference to the baseline on one metric, over the
// instances both runs attempted and both have a value for.
type SWEDelta struct {
	Delta float64 // run mean − baseline mean over the paired instances
	N     int     // paired instances; 0: nothing to compare
}

// SWEColumn is one run of a comparison.
type SWEColumn struct {
	Summary SWESummary
	// Paired is how many instances this run shares with the baseline.
	Paired int
	Deltas [sweMetrics]SWEDelta
}

// CompareSWE compares runs (each a list of outcomes) to runs[baseline]:
// every run's summary, and per metric the paired difference to the
// baseline over the instances both attempted. Trajectories without an
// instance id never pair. The baseline's own deltas are zero over its
// instances.
func CompareSWE(runs [][]SWEOutcome, baseline int) []SWEColumn {
	cols := make([]SWEColumn, len(runs))
	collapsed := make([]map[string]*sweInstanceValues, len(runs))
	for i, outs := range runs {
		cols[i].Summary = SummarizeSWE(outs)
		collapsed[i] = sweCollapse(outs)
	}
	if baseline < 0 || baseline >= len(runs) {
		return cols
	}
	base := collapsed[baseline]
	for i := range runs {
		keys := make([]string, 0, len(collapsed[i]))
		for k := range collapsed[i] {
			if k[0] != 0 && base[k] != nil {
				keys = append(keys, k)
			}
		}
		slices.SortFunc(keys, cmp.Compare[string])
		cols[i].Paired = len(keys)
		var sum [sweMetrics]float64
		for _, k := range keys {
			a, b := collapsed[i][k], base[k]
			for m := range sweMetrics {
				if a.has[m] && b.has[m] {
					sum[m] += a.val[m] - b.val[m]
					cols[i].Deltas[m].N++
				}
			}
		}
		for m := range sweMetrics {
			if cols[i].Deltas[m].N > 0 {
				cols[i].Deltas[m].Delta = sum[m] / float64(cols[i].Deltas[m].N)
			}
		}
	}
	return cols
}
