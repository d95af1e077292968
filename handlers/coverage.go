package handlers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/a-h/templ"

	"groundwork/grounding"
	"groundwork/views"
)

// coverageStore is what the coverage pages need from storage.
type coverageStore interface {
	poolSource
	Runs(ctx context.Context) ([]grounding.Run, error)
	CoverageScales(ctx context.Context) ([]grounding.Scale, error)
	// SaveCoverageScale returns grounding.ErrInvalid for a bad scale;
	// DeleteCoverageScale grounding.ErrNotFound for an unknown one.
	SaveCoverageScale(ctx context.Context, s grounding.Scale) error
	DeleteCoverageScale(ctx context.Context, name string) error
	// SaveView is all or nothing: grounding.ErrConflict when a run of the
	// view has one with the name, grounding.ErrInvalid for a bad one.
	SaveView(ctx context.Context, v grounding.CoverageView, members []grounding.ViewMember) (grounding.CoverageView, error)
	Views(ctx context.Context, runIDs []int64) ([]grounding.CoverageView, error)
	// View returns grounding.ErrNotFound for an unknown id.
	View(ctx context.Context, id int64) (grounding.CoverageView, error)
	ViewMembers(ctx context.Context, viewID int64) ([]grounding.ViewMember, error)
}

// Coverage serves the coverage pages (SPEC §4): the pool audit of runs at a
// model scale, the heatmaps, the deficit table, the selection simulator,
// saved views with their parent-normalized weights, and the scales.
type Coverage struct {
	log   *slog.Logger
	store coverageStore
	cache *poolCache
}

// NewCoverage returns the coverage handlers, with an empty pool cache.
func NewCoverage(log *slog.Logger, store coverageStore) *Coverage {
	return &Coverage{log: log, store: store, cache: newPoolCache()}
}

// Page sizes and defaults.
const (
	deficitRows      = 50 // deficit table rows per "show more"
	maxDeficitRows   = 2000
	cellRows         = 100 // trajectories behind a cell per page
	pathExamples     = 3
	viewMemberRows   = 500
	defaultScaleName = "8B"
)

func (h *Coverage) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// covInvalid turns a grounding validation error into a 422 with its
// user-facing text (userMessage).
func covInvalid(err error) error {
	return Error(http.StatusUnprocessableEntity, userMessage(err))
}

// poolRequest is the pool and scale a coverage request is about.
type poolRequest struct {
	runs    []int64
	names   map[int64]string
	all     []grounding.Run
	scale   grounding.Scale
	scales  []grounding.Scale
	pooled  int // trajectories in the pool
	chosen  bool
	scaleIn string
	// skipped is set when no run was asked for and the default passed over
	// newer runs without a certified trajectory: it names the newest.
	skipped string
}

// parsePool reads run (repeated) and scale from q. Without a run, when
// fallback is set, the pool is the newest run with a certified trajectory
// (the run rows' counter, no count over the pool), else the newest run; an
// unknown run is 404, an unknown scale 422 naming the configured ones.
func (h *Coverage) parsePool(ctx context.Context, q url.Values, fallback bool) (poolRequest, error) {
	var pr poolRequest
	all, err := h.store.Runs(ctx)
	if err != nil {
		return pr, err
	}
	pr.all = all
	pr.names = make(map[int64]string, len(all))
	counts := make(map[int64]int, len(all))
	for _, r := range all {
		pr.names[r.ID] = r.Name
		counts[r.ID] = r.Trajectories
	}
	for _, s := range q["run"] {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || id <= 0 {
			return pr, badRequest("run must be a run id, not " + strconv.Quote(s))
		}
		if _, ok := pr.names[id]; !ok {
			return pr, Error(http.StatusNotFound, fmt.Sprintf("There is no run %d.", id))
		}
		pr.runs = append(pr.runs, id)
	}
	slices.Sort(pr.runs)
	pr.runs = slices.Compact(pr.runs)
	pr.chosen = len(pr.runs) > 0
	if len(pr.runs) == 0 && fallback && len(all) > 0 {
		pick := all[0] // newest first
		if i := slices.IndexFunc(all, func(r grounding.Run) bool { return r.Certified > 0 }); i > 0 {
			pick, pr.skipped = all[i], all[0].Name
		}
		pr.runs = []int64{pick.ID}
	}
	if len(pr.runs) == 0 && !fallback {
		return pr, badRequest("choose at least one run")
	}
	for _, id := range pr.runs {
		pr.pooled += counts[id]
	}
	pr.scales, err = h.store.CoverageScales(ctx)
	if err != nil {
		return pr, err
	}
	pr.scaleIn = strings.TrimSpace(q.Get("scale"))
	name := pr.scaleIn
	if name == "" {
		name = defaultScaleName
		if _, err := grounding.FindScale(pr.scales, name); err != nil && len(pr.scales) > 0 {
			name = pr.scales[0].Name
		}
	}
	pr.scale, err = grounding.FindScale(pr.scales, name)
	if err != nil {
		return pr, covInvalid(err)
	}
	return pr, nil
}

// query is the pool's query string values: run ids and scale.
func (pr poolRequest) query() url.Values {
	v := url.Values{}
	for _, id := range pr.runs {
		v.Add("run", strconv.FormatInt(id, 10))
	}
	v.Set("scale", pr.scale.Name)
	return v
}

func (pr poolRequest) hidden() []views.Hidden {
	var out []views.Hidden
	for _, id := range pr.runs {
		out = append(out, views.Hidden{Name: "run", Value: strconv.FormatInt(id, 10)})
	}
	return append(out, views.Hidden{Name: "scale", Value: pr.scale.Name})
}

// poolName is "airline-gpt4o + retail-grok3".
func (pr poolRequest) poolName() string {
	names := make([]string, len(pr.runs))
	for i, id := range pr.runs {
		names[i] = pr.names[id]
	}
	return strings.Join(names, " + ")
}

func coverageURL(q url.Values) string { return withQuery("/coverage", q) }

// Show renders the coverage page. An htmx request that is not boosted gets
// only the region that depends on the pool and scale.
func (h *Coverage) Show(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pr, err := h.parsePool(r.Context(), q, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.CoveragePage{CanEdit: canImport(r)}
	if pr.skipped != "" {
		p.Note = fmt.Sprintf("No run chosen: showing %s, the newest run with certified trajectories (%s, newer, has none yet).",
			pr.poolName(), pr.skipped)
	}
	if len(pr.runs) == 0 {
		p.NoRuns = true
		render(w, r, http.StatusOK, page{title: "Coverage", section: "coverage", body: views.Coverage(p)})
		return
	}
	e, err := h.cache.get(r.Context(), h.store, pr.runs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	saved, err := h.store.Views(r.Context(), pr.runs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	dq := deficitFilter(q)
	key := regionKey(pr, dq, saved)
	rp := e.region(key, func() views.CoverageRegion { return h.region(e, pr, dq, saved) })
	region := *rp
	html, err := e.regionHTML(r.Context(), key, rp)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if isPartial(r) {
		w.Header().Set(HXPushURL, coverageURL(pageQuery(pr, q)))
		render(w, r, http.StatusOK, page{fragment: html})
		return
	}
	p.Region, p.RegionView = region, html
	for _, run := range pr.all {
		p.Runs = append(p.Runs, views.RunChoice{ID: strconv.FormatInt(run.ID, 10), Name: run.Name,
			Trajectories: count(run.Trajectories) + " · " + count(run.Certified) + " certified", Checked: slices.Contains(pr.runs, run.ID)})
	}
	for _, s := range pr.scales {
		sq := pageQuery(pr, q)
		sq.Set("scale", s.Name)
		p.Scales = append(p.Scales, views.ScaleChoice{Name: s.Name, Depth: strconv.Itoa(s.Depth), URL: coverageURL(sq), Selected: s == pr.scale})
	}
	for _, v := range saved {
		p.Views = append(p.Views, covViewRow(v, pr.names))
	}
	p.Scale = scaleForm(pr.scales, coverageURL(pageQuery(pr, q)))
	render(w, r, http.StatusOK, page{title: "Coverage", section: "coverage", body: views.Coverage(p), fragment: html})
}

// regionKey names what a page region depends on besides the pool: the
// scale, the deficit filter and the saved views (the selection's cores).
func regionKey(pr poolRequest, dq deficitQuery, saved []grounding.CoverageView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s=%d|%t|%d|", pr.scale.Name, pr.scale.Depth, dq.all, dq.rows)
	for _, a := range dq.atoms {
		b.WriteString(a)
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, v := range saved {
		fmt.Fprintf(&b, "%d:%s,", v.ID, v.Name)
	}
	return b.String()
}

// pageQuery keeps the pool, the scale and the deficit filter.
func pageQuery(pr poolRequest, q url.Values) url.Values {
	v := pr.query()
	for _, a := range q["atom"] {
		v.Add("atom", a)
	}
	if q.Get("all") == "1" {
		v.Set("all", "1")
	}
	return v
}

// deficitQuery is the deficit table's filter.
type deficitQuery struct {
	atoms []string
	all   bool
	rows  int
}

func deficitFilter(q url.Values) deficitQuery {
	d := deficitQuery{all: q.Get("all") == "1", rows: deficitRows}
	for _, a := range q["atom"] {
		if a = strings.TrimSpace(a); a != "" && !slices.Contains(d.atoms, a) {
			d.atoms = append(d.atoms, a)
		}
	}
	if n, err := strconv.Atoi(q.Get("n")); err == nil && n > 0 {
		d.rows = min(n, maxDeficitRows)
	}
	return d
}

// Deficits is the deficit table alone, for the atom filter's htmx requests;
// it pushes the page URL with the same filter.
func (h *Coverage) Deficits(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pr, err := h.parsePool(r.Context(), q, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	e, err := h.cache.get(r.Context(), h.store, pr.runs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	t := deficitTable(e.pool, e.report(pr.scale), pr, deficitFilter(q))
	w.Header().Set(HXPushURL, coverageURL(pageQuery(pr, q)))
	renderFragment(w, r, http.StatusOK, views.DeficitTableView(t))
}

// region builds everything of the page that depends on the pool and scale.
func (h *Coverage) region(e *poolEntry, pr poolRequest, dq deficitQuery, saved []grounding.CoverageView) views.CoverageRegion {
	p := e.pool
	rep := e.report(pr.scale)
	a := rep.Audit
	reg := views.CoverageRegion{
		Pool:      fmt.Sprintf("%s · %s trajectories in %s", pr.poolName(), count(a.Trajectories), covPlural(len(pr.runs), "run", "runs")),
		Scale:     fmt.Sprintf("%s → target depth %d", pr.scale.Name, pr.scale.Depth),
		ScaleName: pr.scale.Name,
		Figures: []views.Figure{
			{Label: "trajectories", Value: count(a.Trajectories), Detail: covPlural(a.Parents, "parent interaction", "parent interactions"), TestID: "fig-trajectories"},
			{Label: "certified", Value: count(a.Certified), Detail: percent(a.Certified, a.Trajectories) + " of trajectories · " + covPlural(a.CertifiedParents, "parent", "parents"), TestID: "fig-certified"},
			{Label: "supervised decisions", Value: count(a.Supervised), Detail: "m_t = 1", TestID: "fig-supervised"},
			{Label: "≤ 2 supervised decisions", Value: percent(a.AtMostTwoSupervised, a.Certified), Detail: count(a.AtMostTwoSupervised) + " of " + count(a.Certified) + " certified", TestID: "fig-short"},
			{Label: "certified decision after a real error", Value: percent(a.CertifiedAfterError, a.Certified), Detail: count(a.CertifiedAfterError) + " of " + count(a.Certified) + " certified", TestID: "fig-recovery"},
		},
		Paths: []views.Figure{
			{Label: "canonical paths", Value: count(a.Paths), Detail: count(a.RecoveryPaths) + " with a recovery", TestID: "fig-paths"},
			{Label: "below target", Value: count(a.Below), Detail: "support < " + strconv.Itoa(a.Depth), TestID: "fig-below"},
			{Label: "at target", Value: count(a.At), Detail: "support = " + strconv.Itoa(a.Depth), TestID: "fig-at"},
			{Label: "above target", Value: count(a.Above), Detail: "support > " + strconv.Itoa(a.Depth), TestID: "fig-above"},
			{Label: "total deficit", Value: count(rep.Deficit), Detail: "Σ max(0, d_s − n(p))", TestID: "fig-deficit"},
		},
	}
	for _, id := range pr.runs {
		reg.RunHidden = append(reg.RunHidden, strconv.FormatInt(id, 10))
	}
	if a.Certified == 0 {
		// Nothing to map: say so rather than draw empty heatmaps.
		what := "This pool has no trajectories yet."
		if a.Trajectories > 0 {
			what = fmt.Sprintf("None of the %s in this pool is certified yet.", covPlural(a.Trajectories, "trajectory", "trajectories"))
		}
		reg.Empty = what + " Coverage counts only certified trajectories (reward 1, workflow ok, at least one supervised decision), " +
			"so there are no heatmaps, deficits or selection to show. Choose runs with certified trajectories above."
		return reg
	}
	base := pr.query()
	reg.Heatmaps = []views.Heatmap{transitionsHeatmap(rep, base), horizonHeatmap(rep, base), domainHeatmap(rep, base)}
	reg.Deficits = deficitTable(p, rep, pr, dq)
	reg.Selection = selectionForm(pr, p, saved, "", 0)
	return reg
}

func covPlural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return count(n) + " " + many
}

// heatBin places v on a log scale of 1..max in six bins; 0 is bin 0.
func heatBin(v, maxV int) int {
	if v <= 0 || maxV <= 0 {
		return 0
	}
	if maxV == 1 {
		return 6
	}
	return min(6, 1+int(5*math.Log(float64(v))/math.Log(float64(maxV))))
}

// heatLegend labels the bins heatBin uses for max.
func heatLegend(maxV int) []views.LegendBin {
	out := []views.LegendBin{{Bin: 0, Label: "0"}}
	if maxV <= 0 {
		return out
	}
	lo := 1
	for b := 1; b <= 6; b++ {
		hi := lo
		for hi < maxV && heatBin(hi+1, maxV) == b {
			hi++
		}
		if heatBin(lo, maxV) != b {
			continue
		}
		label := count(lo)
		if hi > lo {
			label += "–" + count(hi)
		}
		out = append(out, views.LegendBin{Bin: b, Label: label})
		lo = hi + 1
		if lo > maxV {
			break
		}
	}
	return out
}

// covShort formats a count to fit a heatmap cell: 999, 1.2k, 12k.
func covShort(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.Itoa(n/1000) + "k"
}

func covCellURL(base url.Values, kv ...string) string {
	q := url.Values{}
	for k, v := range base {
		q[k] = slices.Clone(v)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return withQuery("/coverage/trajectories", q)
}

// transitionsHeatmap: atom → next atom, cell = certified trajectories whose
// path has that step, deficits marked.
func transitionsHeatmap(rep *grounding.CoverageReport, base url.Values) views.Heatmap {
	hm := rep.Transitions
	m := hm.Max()
	v := views.Heatmap{ID: "transitions", Title: "Capability transitions",
		Caption:  "cell: certified trajectories whose canonical path has the step row → column; click for the trajectories",
		RowTitle: "from", ColTitle: "to", Rows: hm.Rows, Cols: hm.Cols, Legend: heatLegend(m), CellWidth: 30,
		DeficitNote: fmt.Sprintf("below the target depth %d (%s): a deficit", hm.Depth, rep.Scale.Name)}
	for r := range hm.Rows {
		row := make([]views.HeatCell, len(hm.Cols))
		for c := range hm.Cols {
			n := hm.At(r, c)
			cell := views.HeatCell{Value: covShort(n), Bin: heatBin(n, m), Deficit: hm.Deficit(r, c)}
			cell.Title = fmt.Sprintf("%s → %s: %s over %s", hm.Rows[r], hm.Cols[c],
				covPlural(n, "certified trajectory", "certified trajectories"), covPlural(hm.Paths[r*len(hm.Cols)+c], "path", "paths"))
			if cell.Deficit {
				cell.Title += fmt.Sprintf("; below the target depth %d (deficit %d)", hm.Depth, hm.Depth-n)
			}
			if n > 0 {
				cell.URL = covCellURL(base, "from", hm.Rows[r], "to", hm.Cols[c])
			}
			row[c] = cell
		}
		v.Cells = append(v.Cells, row)
	}
	return v
}

// horizonHeatmap: supervised decisions per trajectory × recoveries.
func horizonHeatmap(rep *grounding.CoverageReport, base url.Values) views.Heatmap {
	hm := rep.HorizonRecovery
	m := hm.Max()
	v := views.Heatmap{ID: "horizon", Title: "Horizon × recovery",
		Caption:  "cell: certified trajectories by supervised decisions (rows) and recoveries after a real error (columns)",
		RowTitle: "supervised decisions", ColTitle: "recoveries", Rows: hm.Rows, Cols: hm.Cols, Legend: heatLegend(m), CellWidth: 44}
	for r := range hm.Rows {
		row := make([]views.HeatCell, len(hm.Cols))
		for c := range hm.Cols {
			n := hm.At(r, c)
			cell := views.HeatCell{Value: covShort(n), Bin: heatBin(n, m),
				Title: fmt.Sprintf("%s supervised decisions, %s recoveries: %s", hm.Rows[r], hm.Cols[c], covPlural(n, "certified trajectory", "certified trajectories"))}
			if n > 0 {
				cell.URL = covCellURL(base, "horizon", hm.Rows[r], "recoveries", hm.Cols[c])
			}
			row[c] = cell
		}
		v.Cells = append(v.Cells, row)
	}
	return v
}

// domainHeatmap: domain × semantic action.
func domainHeatmap(rep *grounding.CoverageReport, base url.Values) views.Heatmap {
	hm := rep.DomainAction
	m := hm.Max()
	rows := make([]string, len(hm.Rows))
	for i, d := range hm.Rows {
		rows[i] = covOr(d, "(no domain)")
	}
	v := views.Heatmap{ID: "domain-action", Title: "Domain × semantic action",
		Caption:  "cell: certified decisions of that action in certified trajectories of that domain; click for the trajectories that hold them",
		RowTitle: "domain", ColTitle: "action", Rows: rows, Cols: hm.Cols, Legend: heatLegend(m), CellWidth: 44}
	for r := range hm.Rows {
		row := make([]views.HeatCell, len(hm.Cols))
		for c := range hm.Cols {
			n := hm.At(r, c)
			t := hm.Trajectories[r*len(hm.Cols)+c]
			cell := views.HeatCell{Value: covShort(n), Bin: heatBin(n, m),
				Title: fmt.Sprintf("%s · %s: %s in %s", rows[r], hm.Cols[c], covPlural(n, "certified decision", "certified decisions"), covPlural(t, "trajectory", "trajectories"))}
			if n > 0 {
				cell.Title += " (a click lists the trajectories)"
			}
			if n > 0 {
				cell.URL = covCellURL(base, "domain", hm.Rows[r], "action", hm.Cols[c])
			}
			row[c] = cell
		}
		v.Cells = append(v.Cells, row)
	}
	return v
}

func covOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// covPathSteps renders a path key as tokens classed by kind.
func covPathSteps(key string) []views.PathStepView {
	toks := grounding.PathTokens(key)
	out := make([]views.PathStepView, len(toks))
	for i, t := range toks {
		class := "step-call"
		switch {
		case t == grounding.TokenError:
			class = "step-error"
		case t == grounding.TokenEndOK:
			class = "step-end"
		case i+1 < len(toks) && toks[i+1] == grounding.TokenError:
			class = "step-failed"
		case strings.HasPrefix(t, "recover:"):
			class = "step-recover"
		case strings.HasPrefix(t, grounding.ActionRespond), strings.HasPrefix(t, grounding.ActionThink):
			class = "step-reply"
		}
		out[i] = views.PathStepView{Text: t, Class: class}
	}
	return out
}

// deficitTable lists the report's paths, filtered, first dq.rows of them.
func deficitTable(p *grounding.Pool, rep *grounding.CoverageReport, pr poolRequest, dq deficitQuery) views.DeficitTable {
	base := pr.query()
	rows := p.FilterPaths(rep.Paths, dq.atoms, !dq.all)
	t := views.DeficitTable{All: dq.all, Filtered: len(dq.atoms) > 0, Action: "/coverage", FragmentURL: "/coverage/deficits", Hidden: pr.hidden()}
	under := 0
	for _, ps := range rep.Paths {
		if ps.Deficit > 0 {
			under++
		}
	}
	switch {
	case len(dq.atoms) > 0:
		what, verb := covPlural(len(rows), "path below the target", "paths below the target"), "have"
		if dq.all {
			what = covPlural(len(rows), "path", "paths")
		}
		if len(rows) == 1 {
			verb = "has"
		}
		t.Summary = fmt.Sprintf("%s %s %s.", what, verb, strings.Join(dq.atoms, " and "))
	default:
		t.Summary = fmt.Sprintf("%s of %s canonical paths are below the target depth %d (total deficit %s).",
			count(under), count(len(rep.Paths)), rep.Scale.Depth, count(rep.Deficit))
	}
	for _, a := range rep.Atoms {
		t.Atoms = append(t.Atoms, views.AtomChoice{Value: a.Atom, Label: a.Atom + " · " + count(a.Paths), Checked: slices.Contains(dq.atoms, a.Atom)})
	}
	shown := rows[:min(len(rows), dq.rows)]
	for _, ps := range shown {
		pp := &p.Paths[ps.Path]
		row := views.DeficitRow{ID: pp.ID, Key: pp.Key, Steps: covPathSteps(pp.Key), Support: count(ps.Support),
			Target: strconv.Itoa(ps.Target), Deficit: strconv.Itoa(ps.Deficit), Under: ps.Deficit > 0, Atoms: pp.Atoms}
		for _, ti := range pp.Trajectories[:min(len(pp.Trajectories), pathExamples)] {
			tr := &p.Trajectories[ti]
			row.Examples = append(row.Examples, views.Link{Label: tr.ExtID, URL: trajectoryURL(tr.ID)})
		}
		if len(pp.Trajectories) > pathExamples {
			row.MoreURL = covCellURL(base, "path", pp.ID)
		}
		t.Rows = append(t.Rows, row)
	}
	t.Shown = count(len(shown)) + " of " + count(len(rows))
	if len(rows) > len(shown) {
		q := base
		for _, a := range dq.atoms {
			q.Add("atom", a)
		}
		if dq.all {
			q.Set("all", "1")
		}
		q.Set("n", strconv.Itoa(min(dq.rows+deficitRows, maxDeficitRows)))
		t.MoreURL = withQuery("/coverage/deficits", q)
	}
	return t
}

// selectionForm is the simulator's form for the pool; budget "" proposes
// half the certified parents.
func selectionForm(pr poolRequest, p *grounding.Pool, saved []grounding.CoverageView, budget string, core int64) views.SelectionForm {
	n := p.CertifiedParents()
	if budget == "" {
		budget = strconv.Itoa(max(1, n/2))
	}
	f := views.SelectionForm{Action: "/coverage/selection", Hidden: pr.hidden(), Budget: budget, MaxBudget: strconv.Itoa(n), MaxBudgetText: count(n)}
	f.Cores = []views.Option{{Value: "", Label: "none", Selected: core == 0}}
	for _, v := range saved {
		f.Cores = append(f.Cores, views.Option{Value: strconv.FormatInt(v.ID, 10), Label: "view " + v.Name, Selected: v.ID == core})
	}
	return f
}

// selectionInput is a parsed selection request.
type selectionInput struct {
	pr     poolRequest
	e      *poolEntry
	budget int
	raw    string
	coreID int64
	core   []int
	saved  []grounding.CoverageView
}

// parseSelection reads pool, scale, budget and core from q. Errors are
// ready for the user: 404 unknown run or view, 422 unknown scale or bad
// budget.
func (h *Coverage) parseSelection(ctx context.Context, q url.Values) (selectionInput, error) {
	var in selectionInput
	pr, err := h.parsePool(ctx, q, false)
	if err != nil {
		return in, err
	}
	in.pr = pr
	in.e, err = h.cache.get(ctx, h.store, pr.runs)
	if err != nil {
		return in, err
	}
	if in.saved, err = h.store.Views(ctx, pr.runs); err != nil {
		return in, err
	}
	in.raw = strings.TrimSpace(q.Get("budget"))
	in.budget, err = strconv.Atoi(in.raw)
	if err != nil {
		return in, Error(http.StatusUnprocessableEntity, fmt.Sprintf("The budget must be a whole number of parent interactions, not %q.", in.raw))
	}
	if err := in.e.pool.CheckBudget(in.budget); err != nil {
		return in, covInvalid(err)
	}
	if c := strings.TrimSpace(q.Get("core")); c != "" {
		id, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			return in, badRequest("core must be a view id")
		}
		v, err := h.store.View(ctx, id)
		if err != nil {
			return in, err
		}
		members, err := h.store.ViewMembers(ctx, v.ID)
		if err != nil {
			return in, err
		}
		in.coreID = v.ID
		for _, m := range members {
			if pi := in.e.pool.ParentIndex(grounding.ParentKey(m.RunID, m.Parent)); pi >= 0 && !slices.Contains(in.core, pi) {
				in.core = append(in.core, pi)
			}
		}
	}
	return in, nil
}

// Selection runs structured and random selection for a budget and shows
// them side by side, with the form to save the structured one as a view.
// A partial htmx request gets the simulator panel alone.
func (h *Coverage) Selection(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	in, err := h.parseSelection(r.Context(), q)
	if err != nil {
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusUnprocessableEntity && in.e != nil {
			f := selectionForm(in.pr, in.e.pool, in.saved, in.raw, in.coreID)
			f.Error = he.message
			h.log.LogAttrs(r.Context(), slog.LevelWarn, "request failed", slog.String("request_id", requestID(r)),
				slog.String("path", r.URL.Path), slog.Int("status", he.status), slog.Any("err", err))
			render(w, r, he.status, page{title: "Selection", section: "coverage", body: selectionPage(in.pr, f), fragment: views.SelectionPanel(f)})
			return
		}
		h.fail(w, r, err)
		return
	}
	res, err := in.e.selection(in.pr.scale.Depth, in.budget, in.coreID, in.core)
	if err != nil {
		h.fail(w, r, covInvalid(err))
		return
	}
	f := selectionForm(in.pr, in.e.pool, in.saved, in.raw, in.coreID)
	sr := selectionResult(in, res, canImport(r))
	f.Result = &sr
	render(w, r, http.StatusOK, page{title: "Selection · " + in.pr.poolName(), section: "coverage", body: selectionPage(in.pr, f), fragment: views.SelectionPanel(f)})
}

// selectionPage is the simulator as a page of its own (a reload, a new tab,
// no JavaScript): it names the pool and leads back to its coverage page.
func selectionPage(pr poolRequest, f views.SelectionForm) templ.Component {
	return views.SelectionPage(views.SelectionPageView{
		Pool:    pr.poolName(),
		Scale:   fmt.Sprintf("%s (target depth %d)", pr.scale.Name, pr.scale.Depth),
		BackURL: coverageURL(pr.query()),
		Form:    f,
	})
}

func selectionResult(in selectionInput, res *selResult, canSave bool) views.SelectionResult {
	p := in.e.pool
	d := in.pr.scale.Depth
	s, rnd := res.structured.Metrics, res.random
	whole := make([]int, len(p.Parents))
	for i := range whole {
		whole[i] = i
	}
	all := p.Metrics(whole, d)
	spread := func(x grounding.Spread) string {
		return covDecimal(x.Mean) + " ± " + covDecimal(x.SD) + " (" + count(x.Min) + "–" + count(x.Max) + ")"
	}
	out := views.SelectionResult{
		Budget: count(in.budget),
		Pool:   in.pr.poolName(),
		Scale:  fmt.Sprintf("%s (target depth %d)", in.pr.scale.Name, d),
		Seeds:  fmt.Sprintf("%d seeds (%d–%d)", len(rnd.Seeds), rnd.Seeds[0], rnd.Seeds[len(rnd.Seeds)-1]),
		Rows: []views.SelectionRow{
			{Metric: "canonical paths covered", Structured: count(s.Paths), Random: spread(rnd.Paths), Pool: count(all.Paths), Better: float64(s.Paths) > rnd.Paths.Mean, TestID: "sel-paths"},
			{Metric: "capped support Σ min(n(p), d_s)", Structured: count(s.Capped), Random: spread(rnd.Capped), Pool: count(all.Capped), Better: float64(s.Capped) > rnd.Capped.Mean, TestID: "sel-capped"},
			{Metric: "atoms covered", Structured: count(s.Atoms), Random: spread(rnd.Atoms), Pool: count(all.Atoms), Better: float64(s.Atoms) > rnd.Atoms.Mean, TestID: "sel-atoms"},
			{Metric: "recovery paths covered", Structured: count(s.RecoveryPaths), Random: spread(rnd.RecoveryPaths), Pool: count(all.RecoveryPaths), Better: float64(s.RecoveryPaths) > rnd.RecoveryPaths.Mean, TestID: "sel-recovery"},
			{Metric: "certified trajectories", Structured: count(s.Trajectories), Random: spread(rnd.Trajectories), Pool: count(all.Trajectories), TestID: "sel-trajectories"},
		},
		MissNote: fmt.Sprintf("A path seen once in the pool is missed by random selection with probability 1 − B/N = 1 − %s/%s = %.2f.",
			count(in.budget), count(p.CertifiedParents()), grounding.SingletonMissProbability(in.budget, p.CertifiedParents())),
		ShowSave: canSave,
	}
	for _, st := range grounding.SelectionStages {
		if n := res.structured.StageCount(st); n > 0 {
			out.Stages = append(out.Stages, views.Figure{Label: st, Value: count(n)})
		}
	}
	hidden := in.pr.hidden()
	hidden = append(hidden, views.Hidden{Name: "budget", Value: strconv.Itoa(in.budget)})
	if in.coreID != 0 {
		hidden = append(hidden, views.Hidden{Name: "core", Value: strconv.FormatInt(in.coreID, 10)})
	}
	out.Save = views.SaveViewForm{Action: "/coverage/views", Hidden: hidden}
	return out
}

// SaveView saves the structured selection of the posted pool, scale, budget
// and core as a named view, all or nothing, then goes to the view's page.
// An unknown scale, a bad budget or a bad name re-render the form with 422;
// a name one of the runs already has, with 409.
func (h *Coverage) SaveView(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("the form could not be read"))
		return
	}
	form := r.PostForm
	name := strings.TrimSpace(form.Get("name"))
	hidden := []views.Hidden{}
	for _, k := range []string{"run", "scale", "budget", "core"} {
		for _, v := range form[k] {
			hidden = append(hidden, views.Hidden{Name: k, Value: v})
		}
	}
	refuse := func(status int, code, msg string) {
		f := views.SaveViewForm{Action: "/coverage/views", Hidden: hidden, Name: name, Error: msg, Status: code}
		h.log.LogAttrs(r.Context(), slog.LevelWarn, "request failed", slog.String("request_id", requestID(r)),
			slog.String("path", r.URL.Path), slog.Int("status", status), slog.String("err", msg))
		render(w, r, status, page{title: "Save view", section: "coverage", body: views.SaveViewFormView(f), fragment: views.SaveViewFormView(f)})
	}
	in, err := h.parseSelection(r.Context(), form)
	var he *httpError
	switch {
	case errors.As(err, &he) && he.status == http.StatusUnprocessableEntity:
		refuse(he.status, "invalid", he.message)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	if err := grounding.ValidateViewName(name); err != nil {
		refuse(http.StatusUnprocessableEntity, "invalid", covInvalid(err).(*httpError).message)
		return
	}
	res, err := in.e.selection(in.pr.scale.Depth, in.budget, in.coreID, in.core)
	if err != nil {
		refuse(http.StatusUnprocessableEntity, "invalid", covInvalid(err).(*httpError).message)
		return
	}
	v := grounding.CoverageView{Name: name, Scale: in.pr.scale, Budget: in.budget, Method: grounding.MethodStructured, Runs: in.pr.runs}
	if u, ok := CurrentUser(r.Context()); ok {
		v.CreatedBy = u.ID
	}
	saved, err := h.store.SaveView(r.Context(), v, grounding.ViewMembers(in.e.pool, res.structured))
	switch {
	case errors.Is(err, grounding.ErrConflict):
		refuse(http.StatusConflict, "conflict", h.conflictMessage(r.Context(), name, in.pr))
		return
	case errors.Is(err, grounding.ErrInvalid):
		refuse(http.StatusUnprocessableEntity, "invalid", covInvalid(err).(*httpError).message)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	redirect(w, r, covViewURL(saved.ID))
}

// conflictMessage names the runs that already have a view called name.
func (h *Coverage) conflictMessage(ctx context.Context, name string, pr poolRequest) string {
	var runs []string
	if vs, err := h.store.Views(ctx, pr.runs); err == nil {
		for _, v := range vs {
			if v.Name != name {
				continue
			}
			for _, id := range v.Runs {
				if slices.Contains(pr.runs, id) && !slices.Contains(runs, pr.names[id]) {
					runs = append(runs, pr.names[id])
				}
			}
		}
	}
	where := "one of these runs"
	if len(runs) > 0 {
		where = "run " + strings.Join(runs, ", ")
	}
	return fmt.Sprintf("A view named %q already exists in %s; nothing was saved. Choose another name.", name, where)
}

func covViewURL(id int64) string { return "/coverage/views/" + strconv.FormatInt(id, 10) }

func covViewRow(v grounding.CoverageView, names map[int64]string) views.ViewRow {
	runs := make([]string, len(v.Runs))
	for i, id := range v.Runs {
		runs[i] = covOr(names[id], "run "+strconv.FormatInt(id, 10))
	}
	method := v.Method
	if v.Method == grounding.MethodRandom {
		method += fmt.Sprintf(" (seed %d)", v.Seed)
	}
	return views.ViewRow{Name: v.Name, URL: covViewURL(v.ID), Scale: fmt.Sprintf("%s (d=%d)", v.Scale.Name, v.Scale.Depth), Method: method,
		Budget: count(v.Budget), Parents: count(v.Parents), Rows: count(v.Trajectories), Runs: strings.Join(runs, " + "), Created: dateTime(v.CreatedAt)}
}

// Trajectories lists the certified trajectories behind a heatmap cell, a
// path or a set of atoms, each linking to its decision view.
func (h *Coverage) Trajectories(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	pr, err := h.parsePool(r.Context(), q, false)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	e, err := h.cache.get(r.Context(), h.store, pr.runs)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cell := grounding.Cell{Path: q.Get("path"), From: q.Get("from"), To: q.Get("to"), Horizon: q.Get("horizon"),
		Recoveries: q.Get("recoveries"), Domain: q.Get("domain"), HasDomain: q.Has("domain"), Action: q.Get("action"), Atoms: q["atom"]}
	idx := e.pool.Matching(cell)
	at, ok := intQuery(r, "at", 0, len(idx))
	if !ok {
		h.fail(w, r, badRequest("at must be a row number"))
		return
	}
	p := views.CoverageTrajectoriesPage{Title: cellTitle(cell, e.pool), BackURL: coverageURL(pr.query()),
		Count: fmt.Sprintf("%s in %s", covPlural(len(idx), "certified trajectory", "certified trajectories"), pr.poolName()),
		Unit:  domainActionUnit(cell, &e.pool.DomainAction, len(idx))}
	end := min(len(idx), at+cellRows)
	for _, i := range idx[at:end] {
		t := &e.pool.Trajectories[i]
		p.Rows = append(p.Rows, views.CoverageTrajectoryRow{URL: trajectoryURL(t.ID), ExtID: t.ExtID, Run: pr.names[t.Run],
			Parent: t.Parent, Domain: orDash(t.Domain), Supervised: count(t.Supervised), Tokens: count(t.Tokens), Path: covPathSteps(t.Path)})
	}
	if end < len(idx) {
		next := r.URL.Query()
		next.Set("at", strconv.Itoa(end))
		p.MoreURL = withQuery("/coverage/trajectories", next)
	}
	render(w, r, http.StatusOK, page{title: p.Title, section: "coverage", body: views.CoverageTrajectories(p)})
}

// cellTitle says what a cell stands for.
func cellTitle(c grounding.Cell, p *grounding.Pool) string {
	var parts []string
	if c.Path != "" {
		parts = append(parts, "path "+c.Path)
	}
	if c.From != "" || c.To != "" {
		parts = append(parts, covOr(c.From, "any")+" → "+covOr(c.To, "any"))
	}
	if c.Horizon != "" {
		parts = append(parts, c.Horizon+" supervised decisions")
	}
	if c.Recoveries != "" {
		parts = append(parts, c.Recoveries+" recoveries")
	}
	if c.HasDomain {
		parts = append(parts, "domain "+covOr(c.Domain, "(none)"))
	}
	if c.Action != "" {
		parts = append(parts, "action "+c.Action)
	}
	if len(c.Atoms) > 0 {
		parts = append(parts, "atoms "+strings.Join(c.Atoms, " and "))
	}
	if len(parts) == 0 {
		return "Certified trajectories"
	}
	return "Certified trajectories: " + strings.Join(parts, ", ")
}

// View shows a saved view: what it holds and its parent-normalized weights
// next to per-row and per-token averaging.
func (h *Coverage) View(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "viewID")
	if !ok {
		h.fail(w, r, badRequest("view id must be a number"))
		return
	}
	v, err := h.store.View(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	members, err := h.store.ViewMembers(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	runs, err := h.store.Runs(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	names := map[int64]string{}
	for _, run := range runs {
		names[run.ID] = run.Name
	}
	rep := grounding.CompareWeights(grounding.MemberWeights(members))
	row := covViewRow(v, names)
	back := url.Values{}
	for _, id := range v.Runs {
		back.Add("run", strconv.FormatInt(id, 10))
	}
	back.Set("scale", v.Scale.Name)
	p := views.ViewPage{Name: v.Name, BackURL: coverageURL(back),
		Facts: []views.Figure{
			{Label: "runs", Value: row.Runs, TestID: "view-runs"},
			{Label: "scale", Value: row.Scale, TestID: "view-scale"},
			{Label: "selection", Value: row.Method, Detail: "budget " + row.Budget + " parents", TestID: "view-method"},
			{Label: "parents", Value: row.Parents, Detail: count(rep.Parents) + " with certified target tokens now (P)", TestID: "view-parents"},
			{Label: "trajectories", Value: row.Rows, Detail: count(rep.Tokens) + " certified target tokens", TestID: "view-trajectories"},
			{Label: "saved", Value: row.Created, Detail: covOr(v.CreatedByName, ""), TestID: "view-saved"},
		},
		Export: fmt.Sprintf("Exports of a run can be restricted to this view by its name, %q.", v.Name),
		TokenDoc: "Certified target tokens: for each assistant message whose decisions all have m_t = 1, ceil(b/4) where b is the UTF-8 length " +
			"of its content plus its tool names and argument strings — the count the export uses; only ratios within one parent matter.",
	}
	p.Weights = weightChart(rep)
	p.Schemes = []views.SchemeRow{
		schemeRow("parent-normalized", rep.ParentNormScheme),
		schemeRow("per-row averaging", rep.PerRowScheme),
		schemeRow("per-token averaging", rep.PerTokenScheme),
	}
	parentTotal := map[string]float64{}
	for i, m := range members {
		parentTotal[grounding.ParentKey(m.RunID, m.Parent)] += rep.Weight[i]
	}
	prev := ""
	for i, m := range members[:min(len(members), viewMemberRows)] {
		key := grounding.ParentKey(m.RunID, m.Parent)
		p.Members = append(p.Members, views.MemberRow{URL: trajectoryURL(m.TrajectoryID), ExtID: m.ExtID, Parent: m.Parent, Stage: m.Stage,
			Tokens: count(m.Tokens), Weight: covWeight(rep.Weight[i]), RowWeight: covWeight(rep.RowWeight[i]), TokenWeight: covWeight(rep.TokenWeight[i]),
			ParentStart: key != prev, ParentWeight: covWeight(parentTotal[key])})
		prev = key
	}
	if len(members) > viewMemberRows {
		p.MoreNote = fmt.Sprintf("The first %s of %s trajectories.", count(viewMemberRows), count(len(members)))
	}
	render(w, r, http.StatusOK, page{title: "View " + v.Name, section: "coverage", body: views.CoverageView(p)})
}

// covWeight formats a weight with four significant digits: 0.01234.
func covWeight(x float64) string {
	if x == 0 {
		return "0"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

func schemeRow(name string, s grounding.WeightScheme) views.SchemeRow {
	return views.SchemeRow{Scheme: name, Min: fmt.Sprintf("%.2f × 1/P", s.Min), Max: fmt.Sprintf("%.2f × 1/P", s.Max),
		TopDecile: fmt.Sprintf("%.1f%%", 100*s.TopDecile)}
}

func weightChart(rep grounding.WeightReport) views.WeightChart {
	c := views.WeightChart{
		Series: []views.LegendBin{{Bin: 1, Label: "parent-normalized"}, {Bin: 2, Label: "per-row averaging"}, {Bin: 3, Label: "per-token averaging"}},
		Note: fmt.Sprintf("How many of the %s parents get each total weight, relative to the equal share 1/P, over %s trajectories.",
			count(rep.Parents), count(rep.Rows)),
	}
	for _, b := range rep.Bins {
		c.Max = max(c.Max, b.ParentNormalized, b.PerRow, b.PerToken)
		c.Bins = append(c.Bins, views.WeightBar{Label: b.Label, Bars: []views.Bar{
			{Series: 1, Value: b.ParentNormalized, Title: fmt.Sprintf("parent-normalized: %s at %s", covPlural(b.ParentNormalized, "parent", "parents"), b.Label)},
			{Series: 2, Value: b.PerRow, Title: fmt.Sprintf("per-row averaging: %s at %s", covPlural(b.PerRow, "parent", "parents"), b.Label)},
			{Series: 3, Value: b.PerToken, Title: fmt.Sprintf("per-token averaging: %s at %s", covPlural(b.PerToken, "parent", "parents"), b.Label)},
		}})
	}
	return c
}

// scaleForm is the scales panel with the project's scales; back is where a
// change returns to.
func scaleForm(scales []grounding.Scale, back string) views.ScaleForm {
	f := views.ScaleForm{Action: "/coverage/scales", DeleteAction: "/coverage/scales/delete", Back: back}
	for _, s := range scales {
		f.Scales = append(f.Scales, views.ScaleChoice{Name: s.Name, Depth: strconv.Itoa(s.Depth)})
	}
	return f
}

// coverageBack is the local coverage URL a form asked to return to.
func coverageBack(s string) string {
	if s = SafeNext(s); !strings.HasPrefix(s, "/coverage") {
		return "/coverage"
	}
	return s
}

// SaveScale adds a scale or changes a scale's depth, then returns to the
// coverage page. A bad name or depth re-renders the panel with 422.
func (h *Coverage) SaveScale(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("the form could not be read"))
		return
	}
	back := coverageBack(r.PostForm.Get("back"))
	name := strings.TrimSpace(r.PostForm.Get("name"))
	depthText := strings.TrimSpace(r.PostForm.Get("depth"))
	depth, err := strconv.Atoi(depthText)
	if err != nil {
		h.scaleRefused(w, r, back, name, depthText, fmt.Sprintf("The target depth must be a whole number, not %q.", depthText))
		return
	}
	err = h.store.SaveCoverageScale(r.Context(), grounding.Scale{Name: name, Depth: depth})
	switch {
	case errors.Is(err, grounding.ErrInvalid):
		h.scaleRefused(w, r, back, name, depthText, covInvalid(err).(*httpError).message)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	}
	redirect(w, r, back)
}

// DeleteScale removes a scale (never the last one).
func (h *Coverage) DeleteScale(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("the form could not be read"))
		return
	}
	back := coverageBack(r.PostForm.Get("back"))
	name := strings.TrimSpace(r.PostForm.Get("name"))
	scales, err := h.store.CoverageScales(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if _, err := grounding.FindScale(scales, name); err != nil {
		h.fail(w, r, Error(http.StatusNotFound, fmt.Sprintf("There is no scale %q.", name)))
		return
	}
	if len(scales) == 1 {
		h.scaleRefused(w, r, back, "", "", "Keep at least one scale: coverage needs a target depth.")
		return
	}
	if err := h.store.DeleteCoverageScale(r.Context(), name); err != nil {
		h.fail(w, r, err)
		return
	}
	redirect(w, r, back)
}

// scaleRefused re-renders the scales panel with a message and 422.
func (h *Coverage) scaleRefused(w http.ResponseWriter, r *http.Request, back, name, depth, msg string) {
	scales, err := h.store.CoverageScales(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	f := scaleForm(scales, back)
	f.Name, f.Depth, f.Error = name, depth, msg
	h.log.LogAttrs(r.Context(), slog.LevelWarn, "request failed", slog.String("request_id", requestID(r)),
		slog.String("path", r.URL.Path), slog.Int("status", http.StatusUnprocessableEntity), slog.String("err", msg))
	render(w, r, http.StatusUnprocessableEntity, page{title: "Scales", section: "coverage", body: views.ScalesPanel(f), fragment: views.ScalesPanel(f)})
}

// domainActionUnit says, for a domain × action cell, that the heatmap
// counted decisions while this list counts the trajectories holding them:
// the cell's 29k is not the list's 8,697. "" for any other cell.
func domainActionUnit(c grounding.Cell, hm *grounding.Heatmap, listed int) string {
	if !c.HasDomain || c.Action == "" || c.Path != "" || c.From != "" || c.To != "" || c.Horizon != "" || c.Recoveries != "" || len(c.Atoms) > 0 {
		return ""
	}
	r, ci := slices.Index(hm.Rows, c.Domain), slices.Index(hm.Cols, c.Action)
	if r < 0 || ci < 0 {
		return ""
	}
	return fmt.Sprintf("The domain × action heatmap counts decisions: its cell is %s of action %s in domain %s. "+
		"This list counts trajectories: the %s that hold them.",
		covPlural(hm.At(r, ci), "certified decision", "certified decisions"), c.Action, covOr(c.Domain, "(none)"),
		covPlural(listed, "certified trajectory", "certified trajectories"))
}

// covDecimal is x with one decimal and thousands separators: 6,594.2.
func covDecimal(x float64) string {
	s := strconv.FormatFloat(x, 'f', 1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	n, err := strconv.Atoi(strings.TrimPrefix(whole, "-"))
	if err != nil {
		return s
	}
	out := count(n) + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}
