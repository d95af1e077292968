package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"

	"groundwork/grounding"
	"groundwork/views"
)

// trajectoryReader is what the decision view needs from storage. Every
// method reads a bounded slice, so a trajectory of thousands of messages
// opens as fast as a short one.
type trajectoryReader interface {
	// Trajectory returns grounding.ErrNotFound for an unknown id.
	Trajectory(ctx context.Context, id int64) (grounding.TrajectoryHeader, error)
	// Messages returns the messages with from <= index < to, whole: only
	// the downloads of one message read it this way.
	Messages(ctx context.Context, trajectoryID int64, from, to int) ([]grounding.Message, error)
	// MessagesHead is Messages with each content read as far as its first
	// chars characters (Message.ContentBytes holds a longer one's length).
	MessagesHead(ctx context.Context, trajectoryID int64, from, to, chars int) ([]grounding.Message, error)
	// VisibleBefore returns the last limit visible messages before index
	// before, ascending, and how many visible messages precede them;
	// contents are read as far as pageChars.
	VisibleBefore(ctx context.Context, trajectoryID int64, before, limit int) ([]grounding.Message, int, error)
	// HiddenBefore returns the hidden messages before index before, read
	// as VisibleBefore reads them.
	HiddenBefore(ctx context.Context, trajectoryID int64, before int) ([]grounding.Message, error)
	// MessageWindow reads what a page of decisions shows in one go: the
	// messages from the last shown visible ones before index first (or from
	// reach, when reach >= 0 is earlier) to index hi, the visible count
	// before those, and the hidden messages before index hiddenTo; the
	// range only when hi - Lo < span.
	MessageWindow(ctx context.Context, trajectoryID int64, shown, first, reach, hi, hiddenTo, span int) (grounding.MessageWindow, error)
	// DecisionsByVerdict returns up to limit decisions with ordinal >=
	// from whose verdict is verdict ("": any).
	DecisionsByVerdict(ctx context.Context, trajectoryID int64, verdict grounding.Verdict, from, limit int) ([]grounding.StoredDecision, error)
}

// Trajectories serves the decision view and the fragments it loads lazily.
type Trajectories struct {
	log   *slog.Logger
	store trajectoryReader
}

// NewTrajectories returns the trajectory handlers.
func NewTrajectories(log *slog.Logger, store trajectoryReader) *Trajectories {
	return &Trajectories{log: log, store: store}
}

const (
	decisionsPerPage = 20  // decision cards per page
	visibleShown     = 4   // visible messages shown before each decision
	earlierBatch     = 50  // visible messages loaded per "show" click
	maxBatch         = 200 // largest limit a client may ask for
	maxSpan          = 400 // widest message range fetched in one query
)

// Show renders the trajectory's header and the first page of decisions
// (from ?from=N, the no-JavaScript fallback of the lazy pages).
func (h *Trajectories) Show(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	from, ok := intQuery(r, "from", 0, math.MaxInt32)
	if !ok {
		h.fail(w, r, badRequest("from must be a decision number"))
		return
	}
	verdict, ok := verdictQuery(r)
	if !ok {
		h.fail(w, r, badRequest("verdict must be pass, fail or ambiguous"))
		return
	}
	hd, err := h.store.Trajectory(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	chunk, err := h.chunk(r.Context(), hd, from, verdict)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	p := trajectoryPage(hd, chunk)
	p.Tabs = verdictTabs(hd, verdict)
	render(w, r, http.StatusOK, page{title: hd.ExtID, section: "runs", body: views.Trajectory(p)})
}

// Decisions is the fragment with the page of decisions from ?from=N, loaded
// when the previous page's end scrolls into view.
func (h *Trajectories) Decisions(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	from, ok := intQuery(r, "from", 0, math.MaxInt32)
	if !ok {
		h.fail(w, r, badRequest("from must be a decision number"))
		return
	}
	verdict, ok := verdictQuery(r)
	if !ok {
		h.fail(w, r, badRequest("verdict must be pass, fail or ambiguous"))
		return
	}
	hd, err := h.store.Trajectory(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	chunk, err := h.chunk(r.Context(), hd, from, verdict)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	renderFragment(w, r, http.StatusOK, views.Decisions(chunk))
}

// Messages is the fragment of messages before ?before=X (only the visible
// ones with visible=1), at most ?limit=N, preceded by a button for the
// ones before them.
func (h *Trajectories) Messages(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	before, ok := intQuery(r, "before", -1, math.MaxInt32)
	if !ok || before < 0 {
		h.fail(w, r, badRequest("before must be a message index"))
		return
	}
	limit, ok := intQuery(r, "limit", earlierBatch, maxBatch)
	if !ok || limit == 0 {
		h.fail(w, r, badRequest("limit must be a positive number"))
		return
	}
	visible := r.URL.Query().Get("visible") == "1"
	var (
		msgs    []grounding.Message
		earlier int
		err     error
	)
	if visible {
		msgs, earlier, err = h.store.VisibleBefore(r.Context(), id, before, limit)
	} else {
		from := max(0, before-limit)
		msgs, err = h.store.MessagesHead(r.Context(), id, from, before, pageChars)
		earlier = from
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	btn := earlierButton(id, msgs, earlier, limit, visible)
	renderFragment(w, r, http.StatusOK, views.EarlierMessages(btn, messageViews(id, msgs)))
}

// Message is the fragment with one message's content in full (or, with
// ?call=k, the arguments of its k-th tool call): the "show all" answer. A
// content longer than showAllChars shows its start, with a link to
// MessageRaw.
func (h *Trajectories) Message(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	idx, ok := intParam(r, "index")
	if !ok || idx > math.MaxInt32 {
		h.fail(w, r, badRequest("message index must be a number"))
		return
	}
	call, ok := intQuery(r, "call", -1, math.MaxInt32)
	if !ok {
		h.fail(w, r, badRequest("call must be a number"))
		return
	}
	msgs, err := h.store.MessagesHead(r.Context(), id, int(idx), int(idx)+1, showAllChars+1)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(msgs) == 0 {
		h.fail(w, r, grounding.ErrNotFound)
		return
	}
	m := msgs[0]
	raw := messageURL(id, int(idx), -1) + "/raw"
	if call >= 0 {
		raw += "?call=" + strconv.Itoa(call)
	}
	var c views.Content
	if call >= 0 {
		if call >= len(m.ToolCalls) {
			h.fail(w, r, grounding.ErrNotFound)
			return
		}
		tc := m.ToolCalls[call]
		if src := callSource(tc); len(src) > showAllChars {
			c = showAll(src, 0, true, raw)
		} else {
			c, _ = argsContent(tc, "")
		}
	} else {
		c = showAll(m.Content, m.ContentBytes, m.Role == grounding.RoleTool, raw)
	}
	renderFragment(w, r, http.StatusOK, views.FullContent(c))
}

// MessageRaw downloads one message's content whole (or, with ?call=k, the
// arguments of its k-th tool call) as plain text: what "show all" leaves
// off a content too long for a page.
func (h *Trajectories) MessageRaw(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	idx, ok := intParam(r, "index")
	if !ok || idx > math.MaxInt32 {
		h.fail(w, r, badRequest("message index must be a number"))
		return
	}
	call, ok := intQuery(r, "call", -1, math.MaxInt32)
	if !ok {
		h.fail(w, r, badRequest("call must be a number"))
		return
	}
	msgs, err := h.store.Messages(r.Context(), id, int(idx), int(idx)+1)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if len(msgs) == 0 || (call >= 0 && call >= len(msgs[0].ToolCalls)) {
		h.fail(w, r, grounding.ErrNotFound)
		return
	}
	body, name := msgs[0].Content, fmt.Sprintf("trajectory-%d-message-%d.txt", id, idx)
	if call >= 0 {
		body, name = callSource(msgs[0].ToolCalls[call]), fmt.Sprintf("trajectory-%d-message-%d-call-%d.txt", id, idx, call)
	}
	download(w, name, body)
}

// Hidden is the fragment with one hidden collector entry in full.
func (h *Trajectories) Hidden(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	k, ok := intParam(r, "entry")
	if !ok {
		h.fail(w, r, badRequest("hidden entry must be a number"))
		return
	}
	hd, err := h.store.Trajectory(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if k >= int64(len(hd.Hidden)) {
		h.fail(w, r, grounding.ErrNotFound)
		return
	}
	raw := trajectoryURL(id) + "/hidden/" + strconv.FormatInt(k, 10) + "/raw"
	c := rawJSON(hd.Hidden[k].Content, "")
	if s := hiddenText(hd.Hidden[k].Content); len(s) > showAllChars {
		c = showAll(s, 0, hd.Hidden[k].Content[0] != '"', raw)
	}
	renderFragment(w, r, http.StatusOK, views.FullContent(c))
}

// HiddenRaw downloads one hidden collector entry whole, as plain text (a
// JSON string as its text, anything else as JSON).
func (h *Trajectories) HiddenRaw(w http.ResponseWriter, r *http.Request) {
	id, ok := intParam(r, "trajectoryID")
	if !ok {
		h.fail(w, r, badRequest("trajectory id must be a number"))
		return
	}
	k, ok := intParam(r, "entry")
	if !ok {
		h.fail(w, r, badRequest("hidden entry must be a number"))
		return
	}
	hd, err := h.store.Trajectory(r.Context(), id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if k >= int64(len(hd.Hidden)) {
		h.fail(w, r, grounding.ErrNotFound)
		return
	}
	download(w, fmt.Sprintf("trajectory-%d-hidden-%d.txt", id, k), hiddenText(hd.Hidden[k].Content))
}

func (h *Trajectories) fail(w http.ResponseWriter, r *http.Request, err error) {
	fail(h.log, w, r, err)
}

// chunk builds the decision cards of one page starting at ordinal from,
// only those of one verdict when verdict is not "". A page of decisions
// costs a fixed handful of queries, not two per decision: see window.
func (h *Trajectories) chunk(ctx context.Context, hd grounding.TrajectoryHeader, from int, verdict grounding.Verdict) (views.DecisionChunk, error) {
	ds, err := h.store.DecisionsByVerdict(ctx, hd.ID, verdict, from, decisionsPerPage+1)
	if err != nil {
		return views.DecisionChunk{}, err
	}
	var c views.DecisionChunk
	more := len(ds) > decisionsPerPage
	next := 0 // the first decision of the next page
	if more {
		next = ds[decisionsPerPage].Ordinal
		ds = ds[:decisionsPerPage]
	}
	if len(ds) == 0 {
		switch {
		case verdict != "" && from == 0:
			c.Empty = "No " + string(verdict) + " decision in this trajectory."
		case verdict != "":
			c.Empty = "No " + string(verdict) + " decision after decision " + strconv.Itoa(from) + "."
		case from == 0:
			c.Empty = "This trajectory has no decisions: no visible assistant message."
		default:
			c.Empty = "No decisions after decision " + strconv.Itoa(from) + "."
		}
		return c, nil
	}
	entries := hiddenEntries(hd)
	win, err := h.window(ctx, hd.ID, ds)
	if err != nil {
		return views.DecisionChunk{}, err
	}
	for _, d := range ds {
		vis, earlier, hid, err := win.before(ctx, h.store, hd.ID, d.Message)
		if err != nil {
			return views.DecisionChunk{}, err
		}
		card := decisionCard(hd, d, win.msgs, vis, earlier, hid, entries)
		card.HistoryURL, card.EnqueueURL = decisionURLs(ctx, hd.ID, d.Ordinal)
		if d.Queued && d.Verdict == grounding.VerdictAmbiguous {
			// Waiting in the queue: judge it there; sending it again
			// would change nothing.
			card.JudgeURL, card.EnqueueURL = judgeURL(hd.RunID, hd.ID, d.Ordinal), ""
		}
		c.Cards = append(c.Cards, card)
	}
	if more {
		// The next page starts at the card read one too many: with a
		// verdict, the next decision of it, which may be further on.
		base := trajectoryURL(hd.ID)
		q := "?from=" + strconv.Itoa(next)
		if verdict != "" {
			q = "?verdict=" + string(verdict) + "&from=" + strconv.Itoa(next)
		}
		c.MoreURL = base + "/decisions" + q
		c.NextURL = base + q + "#d" + strconv.Itoa(next)
	}
	return c, nil
}

// decisionWindow holds what a page of decisions needs to render: every
// message from the first shown visible message to the last decision's
// observation (one range read), the visible count before that range, and the
// hidden messages up to the last decision (one read). Each decision's
// projection is then cut from it in memory. When the page spans more than
// maxSpan messages, each decision falls back to its own two bounded reads.
type decisionWindow struct {
	msgs          map[int]grounding.Message
	sorted        []grounding.Message // the range, ascending; nil in fallback mode
	visible       []grounding.Message // the visible messages of sorted, ascending
	earlierBefore int                 // visible messages before the range
	hidden        []grounding.Message // ascending
}

func (h *Trajectories) window(ctx context.Context, id int64, ds []grounding.StoredDecision) (*decisionWindow, error) {
	return h.windowFrom(ctx, id, ds, -1)
}

// windowFrom is window reaching back to message reach as well (when reach
// >= 0), so a decision can be shown from there (the review screen shows the
// evidence of the arguments in question).
func (h *Trajectories) windowFrom(ctx context.Context, id int64, ds []grounding.StoredDecision, reach int) (*decisionWindow, error) {
	first, last := ds[0], ds[len(ds)-1]
	hi := last.Message
	var need []int
	for _, d := range ds {
		need = append(need, d.Message)
		if d.Observation >= 0 {
			need = append(need, d.Observation)
			hi = max(hi, d.Observation)
		}
	}
	mw, err := h.store.MessageWindow(ctx, id, visibleShown, first.Message, reach, hi, last.Message, maxSpan)
	if err != nil {
		return nil, err
	}
	if hi-mw.Lo >= maxSpan {
		// Too wide to hold (a page of long SWE decisions): each decision
		// reads its own bounded projection instead.
		msgs, err := h.load(ctx, id, need)
		return &decisionWindow{msgs: msgs}, err
	}
	w := &decisionWindow{msgs: make(map[int]grounding.Message, len(mw.Range)), sorted: mw.Range, earlierBefore: mw.Earlier, hidden: mw.Hidden}
	for _, m := range mw.Range {
		w.msgs[m.Index] = m
		if !m.IsHidden() {
			w.visible = append(w.visible, m)
		}
	}
	return w, nil
}

// since returns the visible messages from index lo up to (not including)
// msg and how many visible messages precede lo. The window must have been
// read reaching back to lo (windowFrom); ok is false when it was not.
func (w *decisionWindow) since(lo, msg int) (vis []grounding.Message, earlier int, ok bool) {
	if len(w.sorted) == 0 || w.sorted[0].Index > lo {
		return nil, 0, false
	}
	from := sort.Search(len(w.visible), func(i int) bool { return w.visible[i].Index >= lo })
	to := sort.Search(len(w.visible), func(i int) bool { return w.visible[i].Index >= msg })
	return w.visible[from:to:to], w.earlierBefore + from, true
}

// before returns the projection of a decision at message index msg: the last
// visibleShown visible messages before it, how many visible ones precede
// those, and the hidden messages before it.
func (w *decisionWindow) before(ctx context.Context, st trajectoryReader, id int64, msg int) ([]grounding.Message, int, []grounding.Message, error) {
	if w.sorted == nil {
		vis, earlier, err := st.VisibleBefore(ctx, id, msg, visibleShown)
		if err != nil {
			return nil, 0, nil, err
		}
		hid, err := st.HiddenBefore(ctx, id, msg)
		return vis, earlier, hid, err
	}
	// Cut from the window's sorted lists, not copied: a page of 20
	// decisions copied every earlier message once per decision.
	before := func(ms []grounding.Message) int {
		return sort.Search(len(ms), func(i int) bool { return ms[i].Index >= msg })
	}
	cut := before(w.visible)
	from := max(0, cut-visibleShown)
	hid := w.hidden[:before(w.hidden)]
	return w.visible[from:cut:cut], w.earlierBefore + from, hid[:len(hid):len(hid)], nil
}

// load reads the messages at the given indexes: one range read when they
// span at most maxSpan messages, else one read each.
func (h *Trajectories) load(ctx context.Context, id int64, idx []int) (map[int]grounding.Message, error) {
	out := make(map[int]grounding.Message, len(idx))
	if len(idx) == 0 {
		return out, nil
	}
	lo, hi := slices.Min(idx), slices.Max(idx)
	if hi-lo < maxSpan {
		ms, err := h.store.MessagesHead(ctx, id, lo, hi+1, pageChars)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out[m.Index] = m
		}
		return out, nil
	}
	for _, i := range idx {
		if _, ok := out[i]; ok {
			continue
		}
		ms, err := h.store.MessagesHead(ctx, id, i, i+1, pageChars)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			out[m.Index] = m
		}
	}
	return out, nil
}

func trajectoryPage(hd grounding.TrajectoryHeader, chunk views.DecisionChunk) views.TrajectoryPage {
	src := hd.SourceFile + " · record " + strconv.Itoa(hd.SourceIndex)
	if hd.Format != "" {
		src += " · " + hd.Format
	}
	p := views.TrajectoryPage{
		RunsURL:   "/runs",
		RunURL:    runURL(hd.RunID),
		RunName:   hd.RunName,
		ExtID:     hd.ExtID,
		Parent:    hd.ParentID,
		Domain:    orDash(hd.Domain),
		Reward:    reward(hd.Reward),
		Success:   yesNo(hd.Success),
		Succeeded: hd.Success,
		Messages:  count(hd.Messages),
		Decisions: count(hd.Decisions),
		ToolCalls: count(hd.ToolCalls),
		Errors:    count(hd.Errors),
		Source:    src,
		// The request is shown once per page, in a scrolling box: no cut.
		Request: text(hd.Request, false, ""),
		Chunk:   chunk,
	}
	if hd.EngineVersion != "" {
		p.Check = trajectoryCheck(hd)
	}
	tools := hd.Tools
	if prof := grounding.ProfileFor(hd.Domain); len(tools) == 0 && prof.ToolsGiven {
		// The log records no tools, and the checks took the profile's
		// schemas as what the agent saw (τ-bench's scaffold hands them
		// over): say so, and show those.
		tools = prof.Schemas
		p.ToolsFrom = "the " + prof.Name + " profile"
	}
	for _, t := range tools {
		tv := views.ToolView{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			tv.Parameters = pretty(t.Parameters)
		}
		p.Tools = append(p.Tools, tv)
	}
	return p
}

// hiddenEntries prepares every hidden collector entry once per page; each
// decision then picks those the collector had by then.
func hiddenEntries(hd grounding.TrajectoryHeader) []views.HiddenItem {
	out := make([]views.HiddenItem, len(hd.Hidden))
	for k, e := range hd.Hidden {
		where := "collector context, from the start"
		if e.At != nil {
			where = "collector context, from message " + strconv.Itoa(*e.At)
		}
		out[k] = views.HiddenItem{
			Kind:    e.Kind,
			Entry:   strconv.Itoa(k),
			Where:   where,
			Summary: jsonSummary(e.Content, 100),
			Content: rawJSON(e.Content, trajectoryURL(hd.ID)+"/hidden/"+strconv.Itoa(k)),
		}
	}
	return out
}

func decisionCard(hd grounding.TrajectoryHeader, d grounding.StoredDecision, msgs map[int]grounding.Message,
	vis []grounding.Message, earlier int, hid []grounding.Message, entries []views.HiddenItem) views.DecisionCard {
	card := views.DecisionCard{
		ID:      "d" + strconv.Itoa(d.Ordinal),
		Title:   "decision " + strconv.Itoa(d.Ordinal+1) + " of " + count(hd.Decisions),
		Message: "message " + strconv.Itoa(d.Message),
		Kind:    d.Tool,
		Error:   d.Error,
		Visible: views.VisiblePane{
			Before:   "before message " + strconv.Itoa(d.Message),
			Earlier:  earlierButton(hd.ID, vis, earlier, earlierBatch, true),
			Messages: messageViews(hd.ID, vis),
		},
	}
	m, haveMsg := msgs[d.Message]
	if d.IsReply() {
		card.Kind = "text reply"
		card.Action.Reply = true
		card.Action.Text = messageText(m, false, messageURL(hd.ID, d.Message, -1))
	} else {
		card.Action.Tool = d.Tool
		if haveMsg && d.Call < len(m.ToolCalls) {
			call := m.ToolCalls[d.Call]
			card.Action.Args, card.Action.ArgsInvalid = argsContent(call, messageURL(hd.ID, d.Message, d.Call))
		} else {
			card.Action.Args = views.Content{Empty: true}
		}
		if o, ok := msgs[d.Observation]; ok && d.Observation >= 0 {
			ov := messageView(hd.ID, o)
			ov.Error = ov.Error || d.Error
			card.Action.Observation = &ov
		}
	}
	if hd.EngineVersion != "" {
		card.Check = checkView(hd, d, msgs)
	}
	for k, e := range hd.Hidden {
		if e.At == nil || *e.At <= d.Message {
			card.Hidden.Items = append(card.Hidden.Items, entries[k])
		}
	}
	for _, hm := range hid {
		kind := hm.HiddenKind
		if kind == "" {
			kind = "hidden " + hm.Role + " message"
		}
		card.Hidden.Items = append(card.Hidden.Items, views.HiddenItem{
			Kind:    kind,
			Message: strconv.Itoa(hm.Index),
			Where:   "message " + strconv.Itoa(hm.Index) + " · " + hm.Role,
			Summary: summary(hm.Content, 100),
			Content: messageText(hm, hm.Role == grounding.RoleTool, messageURL(hd.ID, hm.Index, -1)),
		})
	}
	return card
}

// argsContent shows a call's arguments: pretty JSON, or the undecodable
// source string verbatim (invalid reports that case).
func argsContent(c grounding.ToolCall, fullURL string) (content views.Content, invalid bool) {
	if c.RawArguments != "" {
		return text(c.RawArguments, true, fullURL), true
	}
	if len(c.Arguments) == 0 {
		return views.Content{Empty: true}, false
	}
	return text(string(c.Arguments), true, fullURL), false
}

func messageViews(id int64, ms []grounding.Message) []views.MessageView {
	out := make([]views.MessageView, 0, len(ms))
	for _, m := range ms {
		out = append(out, messageView(id, m))
	}
	return out
}

func messageView(id int64, m grounding.Message) views.MessageView {
	mv := views.MessageView{
		Index:      strconv.Itoa(m.Index),
		Role:       m.Role,
		HiddenKind: m.HiddenKind,
		Error:      m.Error,
		Content:    messageText(m, m.Role == grounding.RoleTool, messageURL(id, m.Index, -1)),
	}
	if m.Role == grounding.RoleTool {
		mv.Name = m.Name
	}
	if m.IsHidden() && mv.HiddenKind == "" {
		mv.HiddenKind = "hidden"
	}
	for k, c := range m.ToolCalls {
		args, invalid := argsContent(c, messageURL(id, m.Index, k))
		mv.Calls = append(mv.Calls, views.CallView{Name: c.Name, Args: args, ArgsInvalid: invalid})
	}
	return mv
}

// earlierButton offers the messages before msgs (earlier of them exist).
func earlierButton(id int64, msgs []grounding.Message, earlier, limit int, visible bool) views.EarlierButton {
	if earlier <= 0 || len(msgs) == 0 {
		return views.EarlierButton{}
	}
	q := url.Values{}
	q.Set("before", strconv.Itoa(msgs[0].Index))
	q.Set("limit", strconv.Itoa(limit))
	if visible {
		q.Set("visible", "1")
	}
	return views.EarlierButton{
		Count: count(earlier),
		URL:   trajectoryURL(id) + "/messages?" + q.Encode(),
	}
}

// messageURL is the "show all" URL of a message's content, or of its
// call-th tool call's arguments when call >= 0.
func messageURL(id int64, idx, call int) string {
	u := trajectoryURL(id) + "/messages/" + strconv.Itoa(idx)
	if call >= 0 {
		u += "?call=" + strconv.Itoa(call)
	}
	return u
}

// verdictQuery reads ?verdict=: "" (all decisions) or one of the three
// verdicts; ok is false for anything else.
func verdictQuery(r *http.Request) (grounding.Verdict, bool) {
	switch v := grounding.Verdict(r.URL.Query().Get("verdict")); v {
	case "", grounding.VerdictPass, grounding.VerdictFail, grounding.VerdictAmbiguous:
		return v, true
	}
	return "", false
}

// verdictTabs are the trajectory page's "all 12 · fail 2 · ambiguous 1 ·
// pass 9" links, from the trajectory's counters; none before it is checked.
func verdictTabs(hd grounding.TrajectoryHeader, active grounding.Verdict) []views.VerdictTab {
	if hd.EngineVersion == "" {
		return nil
	}
	base := trajectoryURL(hd.ID)
	tabs := []views.VerdictTab{{Label: "all", Count: count(hd.Decisions), URL: base, Active: active == ""}}
	for _, v := range []struct {
		v grounding.Verdict
		n int
	}{{grounding.VerdictFail, hd.Fail}, {grounding.VerdictAmbiguous, hd.Ambiguous}, {grounding.VerdictPass, hd.Pass}} {
		tabs = append(tabs, views.VerdictTab{Label: string(v.v), Verdict: string(v.v), Count: count(v.n),
			URL: base + "?verdict=" + string(v.v), Active: active == v.v, Empty: v.n == 0})
	}
	return tabs
}
