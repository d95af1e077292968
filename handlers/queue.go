package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"groundwork/grounding"
	"groundwork/views"
)

// queueStore is what the queue pages need from storage.
type queueStore interface {
	Runs(ctx context.Context) ([]grounding.Run, error)
	Run(ctx context.Context, id int64) (grounding.Run, error)
	RunFacets(ctx context.Context, runID int64) (domains, tools []string, err error)
	// Queue returns grounding.ErrInvalid for a malformed cursor.
	Queue(ctx context.Context, f grounding.QueueFilter) (grounding.QueuePage, error)
	Conflicts(ctx context.Context, f grounding.QueueFilter) ([]grounding.ConflictItem, error)
	Finalize(ctx context.Context, leadID, itemID int64, v grounding.Verdict, reason string) (grounding.SubmitResult, error)
	Enqueue(ctx context.Context, leadID, trajectoryID int64, ordinal int, note string) (grounding.QueueItem, bool, error)
	History(ctx context.Context, trajectoryID int64, ordinal int) (grounding.DecisionHistory, error)
	SetOverlap(ctx context.Context, runID int64, k int) error
	Overlap(ctx context.Context, runID int64) (int, error)
	Progress(ctx context.Context, userID int64, f grounding.QueueFilter) (grounding.Progress, error)
	Agreement(ctx context.Context, runID int64) (grounding.AgreementReport, map[int64]string, error)
	AnnotatorWork(ctx context.Context, runID int64) ([]grounding.AnnotatorWork, error)
	CoverageScales(ctx context.Context) ([]grounding.Scale, error)
	PrioritizeByDeficit(ctx context.Context, runID int64, depth int) (int, error)
}

// Queue serves the queue list, the conflict review, decision histories,
// sending a decision to the queue, the overlap setting and agreement.
type Queue struct {
	log   *slog.Logger
	store queueStore
}

// NewQueue returns the queue handlers.
func NewQueue(log *slog.Logger, store queueStore) *Queue { return &Queue{log: log, store: store} }

func (h *Queue) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// decisionURLs are the history URL of a decision card and, for a lead, its
// "send to queue" URL.
func decisionURLs(ctx context.Context, trajectoryID int64, ordinal int) (history, enqueue string) {
	base := trajectoryURL(trajectoryID) + "/decisions/" + strconv.Itoa(ordinal)
	if u, ok := CurrentUser(ctx); ok && grounding.CanLead(u.Role) {
		enqueue = base + "/enqueue"
	}
	return base + "/history", enqueue
}

func isLead(r *http.Request) bool {
	u, ok := CurrentUser(r.Context())
	return ok && grounding.CanLead(u.Role)
}

// List renders the queue with its filters (?run, domain, tool, reason,
// state, after). The filter form's htmx requests get the results only.
// Items in conflict are for leads: an annotator asking for them is
// refused, and their lists and counts leave them out.
func (h *Queue) List(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := parseQueueFilter(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	lead := isLead(r)
	if !lead {
		if f.State == grounding.QueueConflict {
			h.fail(w, r, Error(http.StatusForbidden, "Conflicts are for leads (researchers and admins). You see an item's outcome once it is settled."))
			return
		}
		f.NoConflicts = true
	}
	qp, err := h.store.Queue(ctx, f)
	if errors.Is(err, grounding.ErrInvalid) {
		h.fail(w, r, badRequest("after is not a queue position"))
		return
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.QueueListPage{ReviewURL: reviewURL(f), Rows: make([]views.QueueRow, 0, len(qp.Items))}
	for _, it := range qp.Items {
		p.Rows = append(p.Rows, queueRow(it))
	}
	if qp.Next != "" {
		q := queueQuery(f)
		if f.State != "" {
			q.Set("state", f.State)
		}
		q.Set("after", qp.Next)
		p.NextURL = withQuery("/queue", q)
	}
	state := f.State
	if state == "" {
		state = grounding.QueueOpen
	}
	pr, err := h.store.Progress(ctx, 0, f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !lead {
		pr = withoutConflicts(pr)
	}
	p.Summary = queueSummary(state, f, pr, lead)
	p.Empty = "No " + state + " items match these filters."
	if state == "all" {
		p.Empty = "No items match these filters."
	}
	if lead {
		p.ConflictsURL = withQuery("/queue/conflicts", queueQuery(f))
		p.Conflicts = count(pr.Conflicts)
	}
	if isPartial(r) {
		w.Header().Set(HXPushURL, withQuery("/queue", r.URL.Query()))
		render(w, r, http.StatusOK, page{fragment: views.QueueResults(p)})
		return
	}
	if p.Filter, err = h.filterForm(ctx, f, "/queue", true); err != nil {
		h.fail(w, r, err)
		return
	}
	if !lead {
		p.Filter.States = slices.DeleteFunc(p.Filter.States, func(o views.Option) bool { return o.Value == grounding.QueueConflict })
	}
	if f.RunID != 0 && lead {
		if p.Overlap, err = h.overlapForm(ctx, f.RunID, false); err != nil {
			h.fail(w, r, err)
			return
		}
		scales, err := h.store.CoverageScales(ctx)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		pf := &views.PrioritizeForm{Action: "/queue/prioritize", Run: strconv.FormatInt(f.RunID, 10)}
		for i, s := range scales {
			pf.Scales = append(pf.Scales, views.Option{Value: s.Name, Label: s.Name + " (depth " + strconv.Itoa(s.Depth) + ")",
				Selected: s.Name == r.URL.Query().Get("scale") || (r.URL.Query().Get("scale") == "" && i == len(scales)/2)})
		}
		p.Prioritize = pf
	}
	if n := r.URL.Query().Get("ranked"); n != "" {
		p.Notice = views.Notice{Tone: "ok", Text: "Ranked " + n + " open items by coverage deficit at " + r.URL.Query().Get("scale") + "."}
	}
	render(w, r, http.StatusOK, page{title: "Queue", section: "queue", body: views.QueueList(p), fragment: views.QueueResults(p)})
}

func queueRow(it grounding.QueueItem) views.QueueRow {
	row := views.QueueRow{
		ID:       strconv.FormatInt(it.ID, 10),
		URL:      decisionURL(it.TrajectoryID, it.Ordinal),
		ExtID:    it.ExtID,
		RunName:  it.RunName,
		Decision: "decision " + strconv.Itoa(it.Ordinal+1),
		Tool:     it.Tool,
		Question: questionText(it.Args),
		LeadNote: it.Note,
		Source:   it.Source,
		State:    it.State,
		Verdicts: strconv.Itoa(it.Verdicts) + " / " + strconv.Itoa(it.Required),
		Priority: strconv.Itoa(it.Priority),
		Created:  dateTime(it.CreatedAt),
	}
	row.Why, row.Evidence = splitWhy(it.Why)
	if row.Tool == "" {
		row.Tool = "text reply"
	}
	if it.State == grounding.QueueDone {
		row.Human = string(it.Human)
	}
	if it.Holders > 0 {
		row.Held = "held by " + plural(it.Holders, "annotator")
	}
	return row
}

// questionText is the arguments in question on one line.
func questionText(args []grounding.ArgEvidence) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += "; "
		}
		s += a.Path + " = " + valueText(a.Value) + " (" + a.Status + ")"
	}
	return s
}

// filterForm builds the queue filter form: runs, and the domains and tools
// of the chosen run (of every run when none is chosen).
func (h *Queue) filterForm(ctx context.Context, f grounding.QueueFilter, action string, withState bool) (views.QueueFilterForm, error) {
	runs, err := h.store.Runs(ctx)
	if err != nil {
		return views.QueueFilterForm{}, err
	}
	form := views.QueueFilterForm{Action: action, Runs: []views.Option{{Value: "", Label: "all runs", Selected: f.RunID == 0}}}
	for _, run := range runs {
		form.Runs = append(form.Runs, views.Option{Value: strconv.FormatInt(run.ID, 10), Label: run.Name, Selected: run.ID == f.RunID})
	}
	// One read whatever the number of runs: run 0 is every run's facets.
	domains, tools, err := h.store.RunFacets(ctx, f.RunID)
	if err != nil {
		return form, err
	}
	form.Domains = options(domains, f.Domain)
	form.Tools = options(tools, f.Tool)
	form.Reasons = options(grounding.ReasonCodes, f.Reason)
	if withState {
		state := f.State
		form.States = []views.Option{
			{Value: "", Label: "open", Selected: state == "" || state == grounding.QueueOpen},
			{Value: grounding.QueueConflict, Label: "conflict", Selected: state == grounding.QueueConflict},
			{Value: grounding.QueueDone, Label: "done", Selected: state == grounding.QueueDone},
			{Value: "all", Label: "all", Selected: state == "all"},
		}
	}
	return form, nil
}

func (h *Queue) overlapForm(ctx context.Context, runID int64, saved bool) (*views.OverlapForm, error) {
	run, err := h.store.Run(ctx, runID)
	if err != nil {
		return nil, err
	}
	k, err := h.store.Overlap(ctx, runID)
	if err != nil {
		return nil, err
	}
	return &views.OverlapForm{Action: runURL(runID) + "/overlap", RunName: run.Name, K: strconv.Itoa(k),
		Max: strconv.Itoa(grounding.MaxOverlap), Saved: saved}, nil
}

// Overlap sets the run's k (form field k). htmx gets the form back with
// "saved"; a plain form is sent back where it came from.
func (h *Queue) Overlap(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	runID, ok := intParam(r, "runID")
	if !ok {
		h.fail(w, r, badRequest("run id must be a number"))
		return
	}
	k, err := strconv.Atoi(r.PostForm.Get("k"))
	if err != nil || !grounding.ValidOverlap(k) {
		h.fail(w, r, Error(http.StatusUnprocessableEntity, "Overlap is a number of verdicts per item, from 1 to "+strconv.Itoa(grounding.MaxOverlap)+"."))
		return
	}
	if err := h.store.SetOverlap(r.Context(), runID, k); err != nil {
		h.fail(w, r, err)
		return
	}
	if !isPartial(r) {
		http.Redirect(w, r, withQuery("/queue", url.Values{"run": {strconv.FormatInt(runID, 10)}}), http.StatusSeeOther)
		return
	}
	form, err := h.overlapForm(r.Context(), runID, true)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	renderFragment(w, r, http.StatusOK, views.OverlapSetting(*form))
}

// Conflicts lists the items whose verdicts disagree, for a lead.
func (h *Queue) Conflicts(w http.ResponseWriter, r *http.Request) {
	f, err := parseQueueFilter(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.conflicts(w, r, f, http.StatusOK, views.Notice{})
}

func (h *Queue) conflicts(w http.ResponseWriter, r *http.Request, f grounding.QueueFilter, status int, notice views.Notice) {
	ctx := r.Context()
	f.State, f.After = "", ""
	cs, err := h.store.Conflicts(ctx, f)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.ConflictsPage{QueueURL: withQuery("/queue", queueQuery(f)), Notice: notice,
		Empty: "No conflicts: every item's verdicts agree so far."}
	if p.Filter, err = h.filterForm(ctx, f, "/queue/conflicts", false); err != nil {
		h.fail(w, r, err)
		return
	}
	for _, c := range cs {
		row := views.ConflictRow{
			ID:       strconv.FormatInt(c.Item.ID, 10),
			URL:      decisionURL(c.Item.TrajectoryID, c.Item.Ordinal),
			ExtID:    c.Item.ExtID,
			RunName:  c.Item.RunName,
			Decision: "decision " + strconv.Itoa(c.Item.Ordinal+1),
			Tool:     c.Item.Tool,
			Question: questionText(c.Item.Args),
			FinalURL: "/queue/" + strconv.FormatInt(c.Item.ID, 10) + "/final",
		}
		row.Why, row.Evidence = splitWhy(c.Item.Why)
		for _, v := range c.Verdicts {
			row.Verdicts = append(row.Verdicts, eventView(v))
		}
		for _, n := range c.Notes {
			row.Notes = append(row.Notes, eventView(n))
		}
		p.Rows = append(p.Rows, row)
	}
	render(w, r, status, page{title: "Conflicts", section: "queue", body: views.Conflicts(p)})
}

// Final records a lead's final verdict (verdict, reason) on an item in
// conflict, then shows the remaining conflicts.
func (h *Queue) Final(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	u, _ := CurrentUser(r.Context())
	itemID, ok := intParam(r, "itemID")
	if !ok {
		h.fail(w, r, badRequest("item id must be a number"))
		return
	}
	v := grounding.Verdict(r.PostForm.Get("verdict"))
	res, err := h.store.Finalize(r.Context(), u.ID, itemID, v, r.PostForm.Get("reason"))
	var notice views.Notice
	status := http.StatusOK
	switch {
	case errors.Is(err, grounding.ErrInvalid):
		status, notice = http.StatusUnprocessableEntity, views.Notice{Tone: "warn", Text: "A final verdict is pass or fail, and needs a reason. Nothing was recorded."}
	case errors.Is(err, grounding.ErrNotConflict):
		status, notice = http.StatusConflict, views.Notice{Tone: "warn", Text: "That item is no longer in conflict (another lead settled it, or an annotator undid a verdict). Nothing was recorded."}
	case errors.Is(err, grounding.ErrNotFound):
		h.fail(w, r, err)
		return
	case err != nil:
		h.fail(w, r, err)
		return
	case res.Repeated:
		notice = views.Notice{Tone: "ok", Text: "Already recorded: your final verdict was recorded once."}
	default:
		notice = views.Notice{Tone: "ok", Text: "Final verdict recorded: " + string(res.Human) + "."}
	}
	if status == http.StatusOK && !IsHTMX(r) {
		http.Redirect(w, r, "/queue/conflicts", http.StatusSeeOther)
		return
	}
	h.conflicts(w, r, grounding.QueueFilter{}, status, notice)
}

// Enqueue sends a decision to the queue by hand, with the lead's note.
func (h *Queue) Enqueue(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	u, _ := CurrentUser(r.Context())
	tid, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	ord, ok := intParam(r, "ordinal")
	if !ok || ord > 1<<30 {
		h.fail(w, r, badRequest("decision must be a number"))
		return
	}
	it, created, err := h.store.Enqueue(r.Context(), u.ID, tid, int(ord), r.PostForm.Get("note"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if !isPartial(r) {
		http.Redirect(w, r, decisionURL(tid, int(ord)), http.StatusSeeOther)
		return
	}
	text := "Sent to the queue (item " + strconv.FormatInt(it.ID, 10) + ", " + it.State + ")."
	if !created {
		text = "Already in the queue (item " + strconv.FormatInt(it.ID, 10) + ", " + it.State + ")."
	}
	renderFragment(w, r, http.StatusOK, views.Enqueued(text, withQuery("/review", url.Values{"run": {strconv.FormatInt(it.RunID, 10)}})))
}

// History is the fragment with a decision's label history. Annotators do
// not see other annotators' verdicts and notes on an item until it is
// settled.
func (h *Queue) History(w http.ResponseWriter, r *http.Request) {
	u, _ := CurrentUser(r.Context())
	tid, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	ord, ok := intParam(r, "ordinal")
	if !ok || ord > 1<<30 {
		h.fail(w, r, badRequest("decision must be a number"))
		return
	}
	hist, err := h.store.History(r.Context(), tid, int(ord))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	renderFragment(w, r, http.StatusOK, views.History(historyView(hist, u)))
}

func historyView(hist grounding.DecisionHistory, u grounding.User) views.HistoryView {
	var hv views.HistoryView
	open := false
	if hist.Item != nil {
		hv.State = hist.Item.State
		open = hist.Item.State != grounding.QueueDone
		if open && !grounding.CanLead(u.Role) {
			// "conflict" would tell an annotator who voted that the others
			// voted otherwise, which the verdict's notice keeps from them
			// too (blind overlap); they learn the outcome once it is settled.
			hv.State = "not settled yet"
		}
	}
	hidden := 0
	for _, e := range hist.Events {
		if open && !grounding.CanLead(u.Role) && e.UserID != u.ID && e.Kind != grounding.EventEnqueue {
			hidden++
			continue
		}
		hv.Events = append(hv.Events, eventView(e))
	}
	if hidden > 0 {
		hv.Hidden = strconv.Itoa(hidden) + " entries by other annotators stay hidden until the item is settled."
	}
	if len(hist.Events) == 0 {
		hv.Empty = "No human verdicts: the automatic check stands."
	}
	return hv
}

// Agreement shows the agreement of a run's annotators (?run; the first run
// with verdicts by default).
func (h *Queue) Agreement(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := parseQueueFilter(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	runs, err := h.store.Runs(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := views.AgreementPage{Action: "/agreement", Runs: []views.Option{{Value: "", Label: "all runs", Selected: f.RunID == 0}}, RunName: "all runs"}
	for _, run := range runs {
		p.Runs = append(p.Runs, views.Option{Value: strconv.FormatInt(run.ID, 10), Label: run.Name, Selected: run.ID == f.RunID})
		if run.ID == f.RunID {
			p.RunName = run.Name
		}
	}
	if f.RunID != 0 {
		if p.Overlap, err = h.overlapForm(ctx, f.RunID, false); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	rep, names, err := h.store.Agreement(ctx, f.RunID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if rep.Items == 0 {
		p.Empty = "No item of " + p.RunName + " has two verdicts yet. Set an overlap of 2 or more so items get independent verdicts."
	}
	p.Items = count(rep.Items) + " items"
	p.Ratings = count(rep.Ratings)
	p.Pairs = count(rep.Pairs) + " pairs of verdicts"
	p.Raw = percent1(rep.Raw)
	p.Alpha = coef(rep.Alpha, rep.AlphaOK)
	for _, pa := range rep.ByPair {
		p.Rows = append(p.Rows, views.PairRow{A: names[pa.A], B: names[pa.B], Items: count(pa.Items),
			Raw: percent1(pa.Raw), Kappa: coef(pa.Kappa, pa.KappaOK)})
	}
	work, err := h.store.AnnotatorWork(ctx, f.RunID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p.Work = workRows(work)
	if len(p.Work) == 0 {
		p.WorkEmpty = "Nobody has judged, skipped or claimed an item of " + p.RunName + " yet."
	}
	render(w, r, http.StatusOK, page{title: "Agreement", section: "agreement", body: views.Agreement(p)})
}

// workRows is the "who did what" table of the agreement page.
func workRows(work []grounding.AnnotatorWork) []views.WorkRow {
	rows := make([]views.WorkRow, len(work))
	for i, w := range work {
		row := views.WorkRow{Name: w.Name, Role: w.Role, Disabled: w.Disabled, Verdicts: count(w.Verdicts),
			Today: count(w.Today), Week: count(w.Week), Skips: count(w.Skips), Holding: count(w.Holding), Last: "—"}
		if w.Verdicts > 0 {
			row.Passed = count(w.Passed) + " (" + percent1(float64(w.Passed)/float64(w.Verdicts)) + ")"
		} else {
			row.Passed = "—"
		}
		if w.Finals > 0 {
			row.Verdicts += " (" + count(w.Finals) + " final)"
		}
		if !w.Last.IsZero() {
			row.Last = dateTime(w.Last)
		}
		rows[i] = row
	}
	return rows
}

func percent1(f float64) string { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }

// coef formats an agreement coefficient, "—" when undefined.
func coef(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Prioritize ranks a run's open items by the coverage deficit of the path
// their trajectory would reach, at the chosen scale (form run, scale).
func (h *Queue) Prioritize(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	runID, err := strconv.ParseInt(r.PostForm.Get("run"), 10, 64)
	if err != nil || runID <= 0 {
		h.fail(w, r, badRequest("run must be a run id"))
		return
	}
	scales, err := h.store.CoverageScales(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := grounding.FindScale(scales, r.PostForm.Get("scale"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	n, err := h.store.PrioritizeByDeficit(r.Context(), runID, s.Depth)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := url.Values{"run": {strconv.FormatInt(runID, 10)}, "scale": {s.Name}, "ranked": {strconv.Itoa(n)}}
	http.Redirect(w, r, withQuery("/queue", q), http.StatusSeeOther)
}

// queueSummary describes what the list shows, in its state. The figures
// are the run's queue counters (all runs without a run): only the open
// count is narrowed by domain, tool and reason, so a narrowed list of
// another state does not borrow the run's count as its own. Conflicts are
// mentioned to leads only.
func queueSummary(state string, f grounding.QueueFilter, pr grounding.Progress, lead bool) string {
	narrowed := f.Domain != "" || f.Tool != "" || f.Reason != ""
	scope := count(pr.Items) + " queued items"
	if f.RunID == 0 {
		scope += " in all runs"
	}
	settled := count(pr.Done) + " of " + scope + " settled (" + percent(pr.Done, pr.Items) + ")"
	conflicts := plural(pr.Conflicts, "conflict") + " waiting for a lead"
	// and is conflicts after a separator, "" for an annotator.
	and := func(sep string) string {
		if !lead {
			return ""
		}
		return sep + conflicts
	}
	switch {
	case state == grounding.QueueDone && narrowed:
		return "Settled items matching these filters · overall, " + settled + " · " + count(pr.Remaining) + " open items match"
	case state == grounding.QueueDone:
		return plural(pr.Done, "settled item") + " (" + percent(pr.Done, pr.Items) + " of " + scope + ") · " + count(pr.Remaining) + " still open"
	case state == grounding.QueueConflict && narrowed:
		return "Conflicts matching these filters · overall, " + conflicts + " · " + count(pr.Remaining) + " open items match"
	case state == grounding.QueueConflict:
		return conflicts + " (of " + scope + ") · " + count(pr.Remaining) + " still open"
	case state == "all" && narrowed:
		return "Items in any state matching these filters · " + count(pr.Remaining) + " of them open · overall, " + settled + and(" · ")
	case state == "all":
		return scope + ": " + count(pr.Remaining) + " open, " + count(pr.Done) + " settled (" + percent(pr.Done, pr.Items) + ")" + and(", ")
	}
	return count(pr.Remaining) + " open items match · " + settled + and(" · ")
}
