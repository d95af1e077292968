package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"groundwork/grounding"
	"groundwork/views"
)

// runReader is what the run pages need from storage.
type runReader interface {
	Runs(ctx context.Context) ([]grounding.Run, error)
	// Run returns grounding.ErrNotFound for an unknown id.
	Run(ctx context.Context, id int64) (grounding.Run, error)
	RunFacets(ctx context.Context, runID int64) (domains, tools []string, err error)
	Trajectories(ctx context.Context, f grounding.TrajectoryFilter) (grounding.TrajectoryPage, error)
}

// Runs serves the runs list and each run's trajectory list.
type Runs struct {
	log   *slog.Logger
	store runReader
}

// NewRuns returns the run handlers.
func NewRuns(log *slog.Logger, store runReader) *Runs { return &Runs{log: log, store: store} }

// pageSize is how many trajectories one page of a run lists.
const pageSize = 50

// List renders every run with its import-time counters.
func (h *Runs) List(w http.ResponseWriter, r *http.Request) {
	runs, err := h.store.Runs(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.RunsPage{CanImport: canImport(r)}
	for _, run := range runs {
		p.Rows = append(p.Rows, views.RunRow{
			URL:          runURL(run.ID),
			Name:         run.Name,
			Trajectories: count(run.Trajectories),
			Successes:    count(run.Successes),
			SuccessPct:   percent(run.Successes, run.Trajectories),
			Decisions:    count(run.Decisions),
			ToolCalls:    count(run.ToolCalls),
			Imports:      count(run.Imports),
			Created:      dateTime(run.CreatedAt),
			Pass:         count(run.Pass),
			Fail:         count(run.Fail),
			Ambiguous:    count(run.Ambiguous),
			Queued:       count(run.Queued),
			Supervised:   count(run.Supervised),
			Certified:    count(run.Certified),
		})
	}
	render(w, r, http.StatusOK, page{title: "Runs", section: "runs", body: views.Runs(p)})
}

// Show renders one run: its filters and a page of trajectories. The filter
// form's htmx requests get only the results region.
func (h *Runs) Show(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "runID")
	if !ok {
		h.fail(w, r, badRequest("run id must be a number"))
		return
	}
	f := parseFilter(r, id)
	run, err := h.store.Run(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	tp, err := h.store.Trajectories(r.Context(), f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	results := trajectoryResults(f, tp)
	if isPartial(r) {
		// The facets only feed the form, which a partial answer leaves alone.
		// The pushed URL drops the form's empty fields.
		q := filterQuery(f)
		if f.After != "" {
			q.Set("after", f.After)
		}
		w.Header().Set(HXPushURL, withQuery(runURL(id), q))
		render(w, r, http.StatusOK, page{fragment: views.Results(results)})
		return
	}
	domains, tools, err := h.store.RunFacets(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.RunPage{
		Name:    run.Name,
		RunsURL: "/runs",
		Summary: runSummary(run),
		Filter:  filterForm(f, domains, tools),
		Results: results,
	}
	render(w, r, http.StatusOK, page{title: run.Name, section: "runs", body: views.Run(p), fragment: views.Results(results)})
}

// Rows is the "load more" fragment: the next page of rows, appended to the
// table, and a new pager swapped out of band.
func (h *Runs) Rows(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "runID")
	if !ok {
		h.fail(w, r, badRequest("run id must be a number"))
		return
	}
	f := parseFilter(r, id)
	tp, err := h.store.Trajectories(r.Context(), f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	res := trajectoryResults(f, tp)
	renderFragment(w, r, http.StatusOK, views.TrajectoryRows(res.Rows, res.Pager))
}

func (h *Runs) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// parseFilter reads the run page's query. Unknown success values mean any,
// so a hand-edited URL still shows something.
func parseFilter(r *http.Request, runID int64) grounding.TrajectoryFilter {
	q := r.URL.Query()
	f := grounding.TrajectoryFilter{
		RunID:  runID,
		Domain: q.Get("domain"),
		Tool:   q.Get("tool"),
		Search: strings.TrimSpace(q.Get("q")),
		After:  q.Get("after"),
		Limit:  pageSize,
	}
	switch v := grounding.Verdict(q.Get("verdict")); v {
	case grounding.VerdictPass, grounding.VerdictFail, grounding.VerdictAmbiguous:
		f.Verdict = string(v)
	}
	if slices.Contains(grounding.ReasonCodes, q.Get("reason")) {
		f.Reason = q.Get("reason")
	}
	switch q.Get("success") {
	case "yes":
		t := true
		f.Success = &t
	case "no":
		b := false
		f.Success = &b
	}
	return f
}

// filterQuery encodes f's filters (not its cursor) for links.
func filterQuery(f grounding.TrajectoryFilter) url.Values {
	v := url.Values{}
	if f.Success != nil {
		v.Set("success", yesNo(*f.Success))
	}
	if f.Domain != "" {
		v.Set("domain", f.Domain)
	}
	if f.Tool != "" {
		v.Set("tool", f.Tool)
	}
	if f.Verdict != "" {
		v.Set("verdict", f.Verdict)
	}
	if f.Reason != "" {
		v.Set("reason", f.Reason)
	}
	if f.Search != "" {
		v.Set("q", f.Search)
	}
	return v
}

func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

func runURL(id int64) string { return "/runs/" + strconv.FormatInt(id, 10) }

func trajectoryURL(id int64) string { return "/trajectories/" + strconv.FormatInt(id, 10) }

// decisionURL links to one decision card of a trajectory page. The page
// shows decisionsPerPage cards and loads the rest as they scroll into view,
// so a later decision's link opens the page that holds it (?from=) or its
// anchor would have nothing to land on.
func decisionURL(id int64, ordinal int) string {
	u := trajectoryURL(id)
	if from := ordinal - ordinal%decisionsPerPage; from > 0 {
		u += "?from=" + strconv.Itoa(from)
	}
	return u + "#d" + strconv.Itoa(ordinal)
}

func trajectoryResults(f grounding.TrajectoryFilter, tp grounding.TrajectoryPage) views.TrajectoryResults {
	base := runURL(f.RunID)
	q := filterQuery(f)
	res := views.TrajectoryResults{
		Filtered:  len(q) > 0,
		Paged:     f.After != "",
		FirstURL:  withQuery(base, q),
		ImportURL: "/import",
	}
	for _, t := range tp.Rows {
		res.Rows = append(res.Rows, trajectoryRow(t, f.Verdict))
	}
	if tp.Next != "" {
		next := filterQuery(f)
		next.Set("after", tp.Next)
		res.Pager = views.Pager{
			NextURL: withQuery(base, next),
			MoreURL: withQuery(base+"/trajectories", next),
		}
	}
	return res
}

func trajectoryRow(t grounding.TrajectorySummary, verdict string) views.TrajectoryRow {
	var matchURL, match string
	if t.Match != nil {
		// The first decision meeting the list's decision filters; with a
		// verdict among them, on that verdict's tab, from that decision.
		matchURL, match = decisionURL(t.ID, *t.Match), "decision "+strconv.Itoa(*t.Match+1)
		if verdict != "" {
			matchURL = trajectoryURL(t.ID) + "?verdict=" + verdict + "&from=" + strconv.Itoa(*t.Match) + "#d" + strconv.Itoa(*t.Match)
		}
	}
	return views.TrajectoryRow{
		MatchURL:  matchURL,
		Match:     match,
		URL:       trajectoryURL(t.ID),
		ExtID:     t.ExtID,
		Parent:    t.ParentID,
		Domain:    orDash(t.Domain),
		Reward:    reward(t.Reward),
		Success:   yesNo(t.Success),
		Succeeded: t.Success,
		Messages:  count(t.Messages),
		Decisions: count(t.Decisions),
		ToolCalls: count(t.ToolCalls),
		Errors:    count(t.Errors),
		HasErrors: t.Errors > 0,
		Source:    path.Base(strings.ReplaceAll(t.SourceFile, `\`, "/")) + "#" + strconv.Itoa(t.SourceIndex),
		SourceAll: t.SourceFile + " · record " + strconv.Itoa(t.SourceIndex),
		Pass:      count(t.Pass),
		Fail:      count(t.Fail),
		Ambiguous: count(t.Ambiguous),
		Queued:    count(t.Queued),
		Masked:    count(t.Supervised),
		Workflow:  t.WorkflowOK,
	}
}

func filterForm(f grounding.TrajectoryFilter, domains, tools []string) views.FilterForm {
	succ := "any"
	if f.Success != nil {
		succ = yesNo(*f.Success)
	}
	form := views.FilterForm{
		Action: runURL(f.RunID),
		Success: []views.Option{
			{Value: "", Label: "any", Selected: succ == "any"},
			{Value: "yes", Label: "yes", Selected: succ == "yes"},
			{Value: "no", Label: "no", Selected: succ == "no"},
		},
		Domains:  options(domains, f.Domain),
		Tools:    options(tools, f.Tool),
		Verdicts: options([]string{string(grounding.VerdictPass), string(grounding.VerdictFail), string(grounding.VerdictAmbiguous)}, f.Verdict),
		Reasons:  options(grounding.ReasonCodes, f.Reason),
		Search:   f.Search,
	}
	return form
}

// options is an "any" choice followed by values, with selected marked. A
// selected value missing from values (an old link) is kept so the form
// shows what filters the list.
func options(values []string, selected string) []views.Option {
	out := []views.Option{{Value: "", Label: "any", Selected: selected == ""}}
	found := selected == ""
	for _, v := range values {
		out = append(out, views.Option{Value: v, Label: v, Selected: v == selected})
		found = found || v == selected
	}
	if !found {
		out = append(out, views.Option{Value: selected, Label: selected, Selected: true})
	}
	return out
}

func replies(n int) string {
	if n == 1 {
		return "1 text reply"
	}
	return count(n) + " text replies"
}

func runSummary(run grounding.Run) string {
	return trajectories(run.Trajectories) + " · " +
		count(run.Successes) + " successful (" + percent(run.Successes, run.Trajectories) + ") · " +
		plural(run.Decisions, "decision") + " (" + plural(run.ToolCalls, "tool call") + ", " +
		replies(run.Decisions-run.ToolCalls) + ") · " +
		plural(run.Imports, "import") + " · created " + dateTime(run.CreatedAt)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func canImport(r *http.Request) bool {
	u, ok := CurrentUser(r.Context())
	return ok && CanImport(u.Role)
}
