package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
	"groundwork/views"
)

// sweStore is what the SWE diagnostics pages need from storage.
type sweStore interface {
	// SWERuns lists the runs holding SWE trajectories.
	SWERuns(ctx context.Context) ([]grounding.Run, error)
	// Run returns grounding.ErrNotFound for an unknown id.
	Run(ctx context.Context, id int64) (grounding.Run, error)
	// RefreshSWEDiagnostics computes what is missing for a run.
	RefreshSWEDiagnostics(ctx context.Context, runID int64) (int, error)
	SWEOutcomes(ctx context.Context, runID int64, after string, limit int) ([]grounding.SWEOutcome, string, error)
	// SWEStamp changes whenever a run's outcomes may have.
	SWEStamp(ctx context.Context, runID int64) (string, error)
	// SWESubject returns grounding.ErrNotFound for an unknown trajectory.
	SWESubject(ctx context.Context, trajectoryID int64) (grounding.SWESubject, error)
	// SWEInstance returns grounding.ErrNotFound for an unknown instance.
	SWEInstance(ctx context.Context, id string) (*grounding.SWEInstance, error)
	SWEInstances(ctx context.Context, after string, limit int) ([]grounding.SWEInstanceSummary, string, error)
}

// SWE serves the SWE diagnostics pages: the run comparison, each run's
// stage timelines, one trajectory's diagnostics and the instances' evidence
// slices.
type SWE struct {
	log   *slog.Logger
	store sweStore
	// fresh maps a run id to its trajectory count when its diagnostics
	// were last brought up to date: while the count is unchanged (runs only
	// grow, by imports) the pages skip the check for pending diagnostics.
	fresh sync.Map

	// cache keeps the outcomes of recently compared runs under their
	// store stamp, so a comparison over runs of 10,000 trajectories each
	// answers without reading them again.
	mu    sync.Mutex
	cache map[int64]sweCached
}

type sweCached struct {
	stamp string
	outs  []grounding.SWEOutcome
}

// sweCachedRuns bounds the outcome cache (a run of 10,000 trajectories
// takes about 2 MB).
const sweCachedRuns = 16

// NewSWE returns the SWE handlers.
func NewSWE(log *slog.Logger, store sweStore) *SWE { return &SWE{log: log, store: store} }

// Page sizes of the SWE pages.
const (
	sweTimelinePage  = 100
	sweInstancesPage = 200
	// sweMaxCompared bounds the runs one comparison reads.
	sweMaxCompared = 12
	// sweShownChars is how much of an action or observation a step shows.
	sweShownChars = 4000
)

func (h *SWE) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// Compare renders the run comparison. The query chooses runs (run=ID,
// repeated) and the baseline (baseline=ID); without runs it compares the
// newest SWE runs, up to sweMaxCompared, against the oldest of them. The
// form's htmx requests get only the table.
func (h *SWE) Compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var chosen []int64
	for _, s := range q["run"] {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 0 {
			h.fail(w, r, badRequest("run must be a number"))
			return
		}
		if !slices.Contains(chosen, id) {
			chosen = append(chosen, id)
		}
	}
	if len(chosen) > sweMaxCompared {
		h.fail(w, r, badRequest(fmt.Sprintf("compare at most %d runs at once", sweMaxCompared)))
		return
	}
	baseline := int64(-1)
	if s := q.Get("baseline"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			h.fail(w, r, badRequest("baseline must be a number"))
			return
		}
		baseline = id
	}
	all, err := h.store.SWERuns(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// Oldest first, so a default comparison reads base → later runs.
	slices.Reverse(all)
	byID := map[int64]grounding.Run{}
	for _, run := range all {
		byID[run.ID] = run
	}
	var runs []grounding.Run
	if len(chosen) == 0 {
		runs = all[max(0, len(all)-sweMaxCompared):]
	} else {
		for _, id := range chosen {
			run, ok := byID[id]
			if !ok {
				h.fail(w, r, Error(http.StatusNotFound, fmt.Sprintf("There is no SWE run %d.", id)))
				return
			}
			runs = append(runs, run)
		}
	}
	base := slices.IndexFunc(runs, func(run grounding.Run) bool { return run.ID == baseline })
	if base < 0 && len(runs) > 0 {
		base = 0
	}

	outcomes := make([][]grounding.SWEOutcome, len(runs))
	for i, run := range runs {
		if outcomes[i], err = h.outcomes(r.Context(), run); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	table := compareTable(runs, grounding.CompareSWE(outcomes, base), base, len(all))
	sweCounts := map[int64]int{}
	for i, run := range runs {
		sweCounts[run.ID] = len(outcomes[i])
	}
	if isPartial(r) {
		w.Header().Set(HXPushURL, compareURL(runs, base))
		render(w, r, http.StatusOK, page{fragment: views.SWECompareTableView(table)})
		return
	}
	p := views.SWEComparePage{Form: compareForm(all, runs, base, sweCounts), Table: table, InstancesURL: "/swe/instances"}
	render(w, r, http.StatusOK, page{title: "SWE diagnostics", section: "swe", body: views.SWECompare(p), fragment: views.SWECompareTableView(table)})
}

// outcomes computes what is missing of a run's diagnostics and returns all
// of them.
func (h *SWE) outcomes(ctx context.Context, run grounding.Run) ([]grounding.SWEOutcome, error) {
	stamp, err := h.store.SWEStamp(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	c, ok := h.cache[run.ID]
	h.mu.Unlock()
	if ok && c.stamp == stamp {
		return c.outs, nil
	}
	if err := h.refresh(ctx, run); err != nil {
		return nil, err
	}
	outs, _, err := h.store.SWEOutcomes(ctx, run.ID, "", 0)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cache == nil {
		h.cache = map[int64]sweCached{}
	}
	if len(h.cache) >= sweCachedRuns {
		for id := range h.cache { // evict any one
			delete(h.cache, id)
			break
		}
	}
	// The stamp read before the load: an import landing in between makes
	// the next request load again, never the reverse.
	h.cache[run.ID] = sweCached{stamp: stamp, outs: outs}
	return outs, nil
}

// refresh computes the run's missing diagnostics unless nothing was
// imported into it since the last time.
func (h *SWE) refresh(ctx context.Context, run grounding.Run) error {
	if n, ok := h.fresh.Load(run.ID); ok && n.(int) == run.Trajectories {
		return nil
	}
	if _, err := h.store.RefreshSWEDiagnostics(ctx, run.ID); err != nil {
		return err
	}
	h.fresh.Store(run.ID, run.Trajectories)
	return nil
}

func compareURL(runs []grounding.Run, base int) string {
	v := url.Values{}
	for _, run := range runs {
		v.Add("run", strconv.FormatInt(run.ID, 10))
	}
	if base >= 0 && base < len(runs) {
		v.Set("baseline", strconv.FormatInt(runs[base].ID, 10))
	}
	return withQuery("/swe", v)
}

// compareForm lists the SWE runs to choose from. sweCounts holds the SWE
// trajectories of the compared runs: a mixed run says how many of its
// trajectories are SWE ones, as the table does, rather than its whole count.
func compareForm(all, chosen []grounding.Run, base int, sweCounts map[int64]int) views.SWECompareForm {
	f := views.SWECompareForm{Action: "/swe"}
	for _, run := range all {
		sel := slices.ContainsFunc(chosen, func(c grounding.Run) bool { return c.ID == run.ID })
		n, known := sweCounts[run.ID]
		f.Runs = append(f.Runs, views.SWERunChoice{
			ID: strconv.FormatInt(run.ID, 10), Name: run.Name, Trajectories: sweOfRun(n, known, run.Trajectories),
			Selected: sel, Baseline: base >= 0 && base < len(chosen) && chosen[base].ID == run.ID,
		})
	}
	return f
}

// metricOrder is the comparison's column order.
var metricOrder = []grounding.SWEMetric{
	grounding.SWELocalizationMetric, grounding.SWEReproductionMetric, grounding.SWEVerificationMetric,
	grounding.SWECompletionMetric, grounding.SWEResolvedMetric, grounding.SWEStepsMetric,
}

// missingWhy says why a mean has nothing to average.
var missingWhy = map[grounding.SWEMetric]string{
	grounding.SWELocalizationMetric: "no reference",
	grounding.SWEReproductionMetric: "no steps",
	grounding.SWEVerificationMetric: "no source edits",
	grounding.SWECompletionMetric:   "no trajectories",
	grounding.SWEResolvedMetric:     "no evaluation results",
	grounding.SWEStepsMetric:        "no trajectories",
}

func compareTable(runs []grounding.Run, cols []grounding.SWEColumn, base, available int) views.SWECompareTable {
	switch {
	case available == 0:
		return views.SWECompareTable{Empty: "No SWE trajectories yet. Import SWE-agent, mini-swe-agent or OpenHands logs on the import page."}
	case len(runs) == 0:
		return views.SWECompareTable{Empty: "Choose at least one run."}
	}
	t := views.SWECompareTable{BaselineName: runs[base].Name}
	for i, run := range runs {
		c := cols[i]
		row := views.SWECompareRow{
			RunName: run.Name, TimelineURL: sweRunURL(run.ID), Baseline: i == base,
			Trajectories: count(c.Summary.Trajectories), Instances: count(c.Summary.Instances),
			Paired:    count(c.Paired),
			Share:     shareText(c.Summary.Share),
			ShareOver: "over " + plural(c.Summary.StepsTotal, "step"),
		}
		for _, m := range metricOrder {
			row.Cells = append(row.Cells, metricCell(m, c.Summary.Mean(m), c.Deltas[m], i == base))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func metricCell(m grounding.SWEMetric, mean grounding.SWEMean, d grounding.SWEDelta, baseline bool) views.SWEMetricCell {
	c := views.SWEMetricCell{Metric: grounding.SWEMetricNames[m], Value: "—", Over: missingWhy[m]}
	if mean.N > 0 {
		c.Value = fmtMetric(m, mean.Value)
		c.Over = "over " + plural(mean.N, "instance")
	}
	if baseline {
		return c
	}
	if d.N == 0 {
		c.DeltaOver = "nothing paired"
		return c
	}
	c.Delta, c.Sign = signed(m, d.Delta)
	c.DeltaOver = "paired on " + plural(d.N, "instance")
	return c
}

func fmtMetric(m grounding.SWEMetric, v float64) string {
	if m == grounding.SWEStepsMetric {
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// signed renders a difference with its sign: +0.04, −0.10 (a minus sign),
// ±0.
func signed(m grounding.SWEMetric, d float64) (text, sign string) {
	s := fmtMetric(m, d)
	switch {
	case strings.Trim(s, "-0.") == "":
		return "±0", "zero"
	case d > 0:
		return "+" + s, "up"
	}
	return "−" + strings.TrimPrefix(s, "-"), "down"
}

func shareText(share [3]float64) string {
	pct := func(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }
	return "LOC " + pct(share[0]) + " · REP " + pct(share[1]) + " · PATCH " + pct(share[2])
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return count(n) + " " + what + "s"
}

// sweOfRun says how many of a run's trajectories are SWE ones: "6
// trajectories" when all are, "5,939 SWE of 30,000 trajectories" in a mixed
// run, "30,000 trajectories in the run" when the SWE count is not known.
func sweOfRun(swe int, known bool, total int) string {
	switch {
	case !known:
		return trajectories(total) + " in the run"
	case swe == total:
		return trajectories(total)
	}
	return count(swe) + " SWE of " + trajectories(total)
}

func trajectories(n int) string {
	if n == 1 {
		return "1 trajectory"
	}
	return count(n) + " trajectories"
}

func sweRunURL(id int64) string { return "/swe/runs/" + strconv.FormatInt(id, 10) }

func sweTrajectoryURL(id int64) string { return "/swe/trajectories/" + strconv.FormatInt(id, 10) }

func sweInstanceURL(id string) string { return "/swe/instances/" + url.PathEscape(id) }

// Run renders one run's stage timelines, a page of trajectories at a time
// (keyset on the ext id: after=ID).
func (h *SWE) Run(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "runID")
	if !ok {
		h.fail(w, r, badRequest("run id must be a number"))
		return
	}
	after := r.URL.Query().Get("after")
	run, err := h.store.Run(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// All the run's outcomes (cached, and shared with the comparison) give
	// its count of SWE trajectories: a mixed run holds others too.
	all, err := h.outcomes(r.Context(), run)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	outs, next, err := h.store.SWEOutcomes(r.Context(), id, after, sweTimelinePage)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.SWERunPage{
		RunName: run.Name, RunURL: runURL(id) + "?domain=" + url.QueryEscape(grounding.DomainSWE), CompareURL: "/swe", Paged: after != "", FirstURL: sweRunURL(id),
		Summary: sweOfRun(len(all), true, run.Trajectories) + "; timelines " + strconv.Itoa(sweTimelinePage) + " at a time, by id",
	}
	if next != "" {
		p.NextURL = sweRunURL(id) + "?after=" + url.QueryEscape(next)
	}
	for _, o := range outs {
		row := views.SWETimelineRow{
			ExtID: o.ExtID, URL: sweTrajectoryURL(o.TrajectoryID), Instance: orDash(o.InstanceID),
			Steps: count(o.Steps), Localization: fmtLocalization(o.Localization),
			Reproduction: yesNoNone(o.Reproduction), Verification: yesNoNone(o.Verification),
			Completed: yesNo(o.Completed), Resolved: yesNoNone(o.Resolved),
			Bar: sweBar(o.TrajectoryID, o.ExtID, o.Stages, nil),
		}
		if o.Localization != nil {
			row.InstanceURL = sweInstanceURL(o.InstanceID)
		}
		p.Rows = append(p.Rows, row)
	}
	render(w, r, http.StatusOK, page{title: run.Name + " · SWE", section: "swe", body: views.SWERun(p)})
}

func fmtLocalization(v *float64) string {
	if v == nil {
		return "no reference"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func yesNoNone(b *bool) string {
	if b == nil {
		return "—"
	}
	return yesNo(*b)
}

// sweBar builds a stage timeline from a stage string (L/R/P, lower case
// for fall-backs); routes, when given, add the router's reason to titles.
func sweBar(trajectoryID int64, extID, stages string, routes []grounding.SWERoute) views.SWEBar {
	b := views.SWEBar{
		Label:    "stage timeline of " + extID + ", " + plural(len(stages), "step"),
		DetailID: "swe-detail-" + strconv.FormatInt(trajectoryID, 10),
	}
	base := sweTrajectoryURL(trajectoryID)
	for i := 0; i < len(stages); i++ {
		c := stages[i]
		fallback := c >= 'a' && c <= 'z'
		st := grounding.SWEStage(c &^ 0x20)
		cell := views.SWECell{
			Stage: strings.ToLower(st.String()), Letter: string(rune(st)), Fallback: fallback,
			URL:         base + "?step=" + strconv.Itoa(i) + "#step-" + strconv.Itoa(i),
			FragmentURL: base + "/steps/" + strconv.Itoa(i),
		}
		cell.Title = "step " + strconv.Itoa(i+1) + ": " + st.String()
		if fallback {
			cell.Title += " (fall-back)"
		}
		if i < len(routes) {
			cell.Title += " — " + routes[i].Why
		}
		b.Cells = append(b.Cells, cell)
	}
	return b
}

// Trajectory renders one trajectory's diagnostics: each figure with the
// steps that justify it, the stage timeline and every step. step=N opens
// that step.
func (h *SWE) Trajectory(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	open, ok := intQuery(r, "step", -1, 1<<30)
	if !ok {
		h.fail(w, r, badRequest("step must be a number"))
		return
	}
	s, err := h.store.SWESubject(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := grounding.DiagnoseSWE(s.Trajectory, s.Instance)
	p := trajectoryDiagnostics(s, d, open)
	render(w, r, http.StatusOK, page{title: s.Trajectory.ID + " · SWE", section: "swe", body: views.SWETrajectory(p)})
}

// Step is the fragment of one step's detail, shown under a bar.
func (h *SWE) Step(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	k, ok := intParam(r, "step")
	if !ok {
		h.fail(w, r, badRequest("step must be a number"))
		return
	}
	s, err := h.store.SWESubject(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	d := grounding.DiagnoseSWE(s.Trajectory, s.Instance)
	if k >= int64(len(d.Steps)) {
		h.fail(w, r, Error(http.StatusNotFound, fmt.Sprintf("This trajectory has %d steps.", len(d.Steps))))
		return
	}
	v := stepView(s.Trajectory, d, int(k), true)
	renderFragment(w, r, http.StatusOK, views.SWEStep(v))
}

func stepAnchor(i int) string { return "#step-" + strconv.Itoa(i) }

func stepLinks(steps []int) []views.SWELink {
	var out []views.SWELink
	for _, i := range steps {
		out = append(out, views.SWELink{Label: "step " + strconv.Itoa(i+1), URL: stepAnchor(i)})
	}
	return out
}

func trajectoryDiagnostics(s grounding.SWESubject, d grounding.SWEDiagnosis, open int) views.SWETrajectoryPage {
	t := s.Trajectory
	p := views.SWETrajectoryPage{
		ExtID: t.ID, RunName: s.RunName, TimelineURL: sweRunURL(s.RunID), CompareURL: "/swe",
		Source:   t.Source.Format + " · " + t.Source.File,
		Instance: orDash(d.InstanceID),
		Bar:      sweBar(s.ID, t.ID, d.StageString(), d.Routes),
	}
	if s.Instance != nil {
		p.InstanceURL = sweInstanceURL(s.Instance.InstanceID)
	}
	// Links inside the page jump to the step and need no request.
	for i := range p.Bar.Cells {
		p.Bar.Cells[i].URL = stepAnchor(i)
	}

	loc := views.SWEFigure{Name: "localization", Kind: "none", Value: "no reference",
		Detail: "no reference patch is stored for this instance; import its SWE-bench metadata"}
	if d.Localization != nil {
		loc.Kind, loc.Value = "num", strconv.FormatFloat(*d.Localization, 'f', 2, 64)
		loc.Detail = fmt.Sprintf("%d of %d reference files edited (reference: %s; edited: %s)",
			len(d.LocalizedFiles), len(d.ReferenceFiles), strings.Join(d.ReferenceFiles, ", "), orNone(d.EditedFiles))
		loc.Links = stepLinks(d.LocalizationSteps)
	}
	rep := views.SWEFigure{Name: "reproduction", Kind: "none", Value: "—", Detail: "no steps"}
	if d.Reproduction != nil {
		rep.Kind, rep.Value = kindOf(*d.Reproduction), yesNo(*d.Reproduction)
		switch {
		case *d.Reproduction:
			rep.Detail = "the agent created and ran " + strings.Join(d.ReproScripts, ", ") + " and saw a failure signal"
			if n := len(d.ReproductionSteps); n > 0 {
				if sig := d.Steps[d.ReproductionSteps[n-1]].Signal; sig != "" {
					rep.Detail += ": " + sig
				}
			}
		case len(d.RegressionSteps) > 0:
			rep.Detail = "ran " + strings.Join(d.ReproScripts, ", ") + " but its failures came from the agent's own edits (a regression, not the issue)"
		case failedAfterLastEdit(d):
			rep.Detail = "ran " + strings.Join(d.ReproScripts, ", ") + " but saw a failure signal only after its last source edit (a failed verification, not a reproduction)"
		case len(d.ReproScripts) > 0:
			rep.Detail = "ran " + strings.Join(d.ReproScripts, ", ") + " but never saw a failure signal"
		default:
			rep.Detail = "never ran a reproduction script of its own"
		}
		rep.Links = stepLinks(d.ReproductionSteps)
		if !*d.Reproduction {
			rep.Links = append(rep.Links, stepLinks(d.RegressionSteps)...)
		}
	}
	ver := views.SWEFigure{Name: "verification", Kind: "none", Value: "—", Detail: "the agent never edited a source file: there is no last edit to verify"}
	if d.Verification != nil {
		ver.Kind, ver.Value = kindOf(*d.Verification), yesNo(*d.Verification)
		last := "after its last source edit (step " + strconv.Itoa(d.LastEdit+1) + ")"
		switch {
		case *d.Verification:
			ver.Detail = last + " the agent re-ran its script and it passed"
		case len(d.VerificationSteps) > 0:
			ver.Detail = last + " the agent re-ran its script but it still failed"
		default:
			ver.Detail = last + " the agent did not re-run a script it had run before"
		}
		ver.Links = append(stepLinks([]int{d.LastEdit}), stepLinks(d.VerificationSteps)...)
		ver.Links[0].Label = "last edit: step " + strconv.Itoa(d.LastEdit+1)
	}
	done := views.SWEFigure{Name: "completion", Kind: kindOf(d.Completed), Value: yesNo(d.Completed), Detail: d.CompletionWhy,
		Links: stepLinks(d.CompletionSteps)}
	res := views.SWEFigure{Name: "resolved", Kind: "none", Value: "—", Detail: "no evaluation result imported for this run and instance"}
	if s.Resolved != nil {
		res.Kind, res.Value, res.Detail = kindOf(*s.Resolved), yesNo(*s.Resolved), "SWE-bench evaluation of the submitted patch"
	}
	lc, rc, pc := d.StageCounts()
	steps := views.SWEFigure{Name: "steps", Kind: "num", Value: count(len(d.Steps)),
		Detail: fmt.Sprintf("LOC %d · REP %d · PATCH %d", lc, rc, pc)}
	p.Figures = []views.SWEFigure{loc, rep, ver, done, res, steps}
	if n := len(d.Steps); n > 0 {
		p.Share = shareText([3]float64{float64(lc) / float64(n), float64(rc) / float64(n), float64(pc) / float64(n)}) + " over " + plural(n, "step")
	} else {
		p.Share = "no steps"
	}
	for i := range d.Steps {
		p.Steps = append(p.Steps, stepView(t, d, i, i == open))
	}
	return p
}

func failedAfterLastEdit(d grounding.SWEDiagnosis) bool {
	for _, s := range d.Steps {
		if s.Script != "" && s.Failure {
			return true
		}
	}
	return false
}

func kindOf(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orNone(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	return strings.Join(ss, ", ")
}

// stepView is the detail of step i.
func stepView(t *grounding.Trajectory, d grounding.SWEDiagnosis, i int, open bool) views.SWEStepView {
	s, rt := d.Steps[i], d.Routes[i]
	v := views.SWEStepView{
		Anchor: "step-" + strconv.Itoa(i), Number: strconv.Itoa(i + 1), Stage: rt.Stage.String(),
		StageClass: strings.ToLower(rt.Stage.String()), Fallback: rt.Fallback, Class: string(s.Class),
		Tool: s.Tool, Why: s.Why, RouteWhy: rt.Why, Open: open, Failure: s.Signal,
	}
	v.Action, _ = shorten(s.Action)
	if v.Action == "" {
		v.Action = "(no action)"
		if s.Message >= 0 && s.Message < len(t.Messages) {
			v.Action, _ = shorten(t.Messages[s.Message].Content)
		}
	}
	if s.Observation >= 0 && s.Observation < len(t.Messages) {
		v.Observation, v.Cut = shorten(t.Messages[s.Observation].Content)
	}
	v.Short, _, _ = strings.Cut(strings.TrimSpace(v.Action), "\n")
	if utf8.RuneCountInString(v.Short) > 90 {
		v.Short = string([]rune(v.Short)[:90]) + "…"
	}
	return v
}

// shorten cuts s to sweShownChars characters.
func shorten(s string) (string, bool) {
	if utf8.RuneCountInString(s) <= sweShownChars {
		return s, false
	}
	n := 0
	for i := range s {
		if n == sweShownChars {
			return s[:i] + "…", true
		}
		n++
	}
	return s, false
}

// Instances lists the stored instances with their evidence sizes and the
// medians over the page.
func (h *SWE) Instances(w http.ResponseWriter, r *http.Request) {
	after := r.URL.Query().Get("after")
	rows, next, err := h.store.SWEInstances(r.Context(), after, sweInstancesPage)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.SWEInstancesPage{Tokenizer: tokenizerNote}
	if next != "" {
		p.NextURL = "/swe/instances?after=" + url.QueryEscape(next)
	}
	var loc, rep, pat, tot []int
	for _, in := range rows {
		p.Rows = append(p.Rows, views.SWEInstanceRow{
			URL: sweInstanceURL(in.InstanceID), ID: in.InstanceID, Repo: in.Repo, Files: count(len(in.Files)),
			LOC: count(in.LOCTokens), REP: count(in.REPTokens), PATCH: count(in.PATCHTokens), Total: count(in.TotalTokens()),
		})
		loc, rep, pat, tot = append(loc, in.LOCTokens), append(rep, in.REPTokens), append(pat, in.PATCHTokens), append(tot, in.TotalTokens())
	}
	p.Medians = views.SWEInstanceRow{Files: "over " + plural(len(rows), "instance") + " on this page",
		LOC: median(loc), REP: median(rep), PATCH: median(pat), Total: median(tot)}
	render(w, r, http.StatusOK, page{title: "SWE instances", section: "swe", body: views.SWEInstances(p)})
}

const tokenizerNote = grounding.ApproxTokenizer + ": cl100k_base's pre-tokenizer with a length rule per piece, within a few percent of tiktoken on SWE-bench patches"

func median(xs []int) string {
	if len(xs) == 0 {
		return "—"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return count(s[len(s)/2])
	}
	return count((s[len(s)/2-1] + s[len(s)/2]) / 2)
}

// Instance renders one instance's evidence slices with their sizes.
func (h *SWE) Instance(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "instanceID")
	if u, err := url.PathUnescape(id); err == nil {
		id = u
	}
	in, err := h.store.SWEInstance(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	ev := grounding.SWEEvidenceOf(in)
	var spans []string
	for _, s := range ev.Spans {
		spans = append(spans, fmt.Sprintf("%s:%d-%d", s.File, s.Start, s.End))
	}
	locText, _ := shorten(ev.LOCText)
	testPatch, _ := shorten(in.TestPatch)
	patch, _ := shorten(ev.PATCHText)
	p := views.SWEInstancePage{
		ID: in.InstanceID, Repo: orDash(in.Repo), ListURL: "/swe/instances", Tokenizer: tokenizerNote, Total: count(ev.TotalTokens),
		Slices: []views.SWESlice{
			{Name: "LOC evidence", What: "the files and line ranges the reference fix touches, with the code there", Tokens: count(ev.LOCTokens),
				Items: spans, Text: locText, TestID: "swe-loc"},
			{Name: "REP evidence", What: "the fail-to-pass tests (" + count(len(in.FailToPass)) + ") and the test patch", Tokens: count(ev.REPTokens),
				Items: in.FailToPass, Text: testPatch, TestID: "swe-rep"},
			{Name: "PATCH evidence", What: "the reference diff", Tokens: count(ev.PATCHTokens), Text: patch, TestID: "swe-patch"},
		},
	}
	render(w, r, http.StatusOK, page{title: in.InstanceID + " · SWE", section: "swe", body: views.SWEInstance(p)})
}

// sweImportNote describes an import of SWE-bench metadata or evaluation
// results (whose Format names the kind and count, "swe-instances (78
// instances)"), which add no trajectories; "" for anything else.
func sweImportNote(res grounding.ImportResult) string {
	kind, n, ok := strings.Cut(res.Format, " (")
	if !ok {
		return ""
	}
	n = strings.TrimSuffix(n, ")")
	switch grounding.Format(kind) {
	case grounding.FormatSWEInstances:
		return n + " of SWE-bench metadata (no trajectories); the SWE pages use them as the reference"
	case grounding.FormatSWEResults:
		return n + " of SWE-bench evaluation for run " + res.RunName
	}
	return ""
}
