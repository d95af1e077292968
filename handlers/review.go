package handlers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"groundwork/grounding"
	"groundwork/views"
)

// reviewStore is what the review screen needs from storage: the decision
// view's reads and the adjudication calls.
type reviewStore interface {
	trajectoryReader
	// Next claims (or returns the user's live claim on) the best item
	// matching f; grounding.ErrNotFound when none is left.
	Next(ctx context.Context, userID int64, f grounding.QueueFilter, lease time.Duration) (grounding.Claim, error)
	Renew(ctx context.Context, userID, itemID int64, lease time.Duration) (time.Time, error)
	// SubmitNext records the verdict and claims the next item of f in one
	// transaction; found is false when nothing is left.
	SubmitNext(ctx context.Context, userID, itemID int64, v grounding.Verdict, note string, f grounding.QueueFilter, lease time.Duration) (grounding.SubmitResult, grounding.Claim, bool, error)
	Skip(ctx context.Context, userID, itemID int64) error
	Undo(ctx context.Context, userID, eventID int64, lease time.Duration) (grounding.VerdictEvent, error)
	// Standing returns the user's progress in f and the verdict an undo
	// would cancel (nil when none: ID, Ordinal, Kind and Verdict set).
	Standing(ctx context.Context, userID int64, f grounding.QueueFilter) (grounding.Progress, *grounding.VerdictEvent, error)
	AddNote(ctx context.Context, userID, itemID int64, note string) (grounding.VerdictEvent, bool, error)
	// AddDecisionNote notes a decision whose item may be gone.
	AddDecisionNote(ctx context.Context, userID, trajectoryID int64, ordinal int, note string) (grounding.VerdictEvent, bool, error)
	// DecisionAt returns a trajectory's header and its decision at ordinal
	// (grounding.ErrNotFound when either is missing).
	DecisionAt(ctx context.Context, trajectoryID int64, ordinal int) (grounding.TrajectoryHeader, grounding.StoredDecision, error)
	// NotesBy returns the user's notes on a decision, oldest first.
	NotesBy(ctx context.Context, userID, trajectoryID int64, ordinal int) ([]grounding.VerdictEvent, error)
	Run(ctx context.Context, id int64) (grounding.Run, error)
}

// Review serves the review screen: one claimed decision at a time, the
// verdict keys, skip, undo and notes.
type Review struct {
	log   *slog.Logger
	store reviewStore
	lease time.Duration
}

// NewReview returns the review handlers; lease is how long a claim lasts
// without activity (0: the store's default, 15 minutes).
func NewReview(log *slog.Logger, store reviewStore, lease time.Duration) *Review {
	return &Review{log: log, store: store, lease: lease}
}

func (h *Review) fail(w http.ResponseWriter, r *http.Request, err error) { fail(h.log, w, r, err) }

// Show claims the next item of the queue chosen by ?run, domain, tool and
// reason (or returns the one the annotator already holds) and renders it.
func (h *Review) Show(w http.ResponseWriter, r *http.Request) {
	u, ok := CurrentUser(r.Context())
	if !ok {
		h.fail(w, r, Error(http.StatusUnauthorized, "Log in first."))
		return
	}
	f, err := parseQueueFilter(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	at, err := decisionRef(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if at == nil {
		h.screen(w, r, u, f, http.StatusOK, views.Notice{}, nil)
		return
	}
	// One decision's item (the trajectory page's "judge it"): claim it,
	// then go on with the queue as filtered. An item that is not open to
	// this user says so and the queue's next item is shown instead.
	one := f
	one.Decision = at
	c, err := h.store.Next(r.Context(), u.ID, one, h.lease)
	switch {
	case errors.Is(err, grounding.ErrNotFound):
		h.screen(w, r, u, f, http.StatusOK, views.Notice{Tone: "warn", Text: "Decision " + strconv.Itoa(at.Ordinal+1) +
			" is not open to you: it is settled, waits for a lead, is held by as many annotators as it needs, or you judged or skipped it already. Here is the queue's next item."}, nil)
	case err != nil:
		h.fail(w, r, err)
	default:
		h.screen(w, r, u, f, http.StatusOK, views.Notice{}, &prefetch{claim: c, found: true})
	}
}

// decisionRef reads ?trajectory=ID&ordinal=N, the decision whose queue
// item the review screen should claim; nil when absent.
func decisionRef(q url.Values) (*grounding.DecisionRef, error) {
	if q.Get("trajectory") == "" && q.Get("ordinal") == "" {
		return nil, nil
	}
	tid, err := strconv.ParseInt(q.Get("trajectory"), 10, 64)
	ord, err2 := strconv.Atoi(q.Get("ordinal"))
	if err != nil || err2 != nil || tid <= 0 || ord < 0 {
		return nil, badRequest("trajectory and ordinal must name a decision: a trajectory id and a decision number from 0")
	}
	return &grounding.DecisionRef{TrajectoryID: tid, Ordinal: ord}, nil
}

// judgeURL is the review screen claiming one decision's queue item, then
// going on with the queue of the decision's run.
func judgeURL(runID, trajectoryID int64, ordinal int) string {
	return "/review?run=" + strconv.FormatInt(runID, 10) + "&trajectory=" + strconv.FormatInt(trajectoryID, 10) + "&ordinal=" + strconv.Itoa(ordinal)
}

// Verdict records the annotator's verdict on the item and answers with the
// next item (htmx) or a redirect to it. Refusals (not claimed, expired,
// already settled, gone) answer 409 with the fresh screen; a note sent with
// a refused verdict is saved on the decision all the same, and the message
// says which was kept. A repeated submission says it was recorded once,
// and saves a new note that came with it.
func (h *Review) Verdict(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, func(u grounding.User, itemID int64) (views.Notice, *prefetch, error) {
		v := grounding.Verdict(r.PostForm.Get("verdict"))
		if v != grounding.VerdictPass && v != grounding.VerdictFail {
			return views.Notice{}, nil, Error(http.StatusUnprocessableEntity, "A verdict is pass (a) or fail (r).")
		}
		f, err := parseQueueFilter(r.Form)
		if err != nil {
			return views.Notice{}, nil, err
		}
		note := r.PostForm.Get("note")
		// The next item is claimed in the verdict's transaction: one commit
		// per key press. screen then shows that claim.
		res, next, found, err := h.store.SubmitNext(r.Context(), u.ID, itemID, v, note, f, h.lease)
		if err != nil {
			if refusal(err) == "" {
				return views.Notice{}, nil, err
			}
			// Refused: the verdict is not recorded, the note still is.
			kept, nerr := h.saveNote(w, r, u, itemID)
			if nerr != nil {
				h.log.ErrorContext(r.Context(), "review: keep the note of a refused verdict", "item", itemID, "err", nerr)
				return views.Notice{}, nil, err
			}
			if kept {
				return views.Notice{}, nil, noteKept{err}
			}
			return views.Notice{}, nil, err
		}
		pre := &prefetch{claim: next, found: found}
		if res.Repeated {
			// Another tab's verdict stands; a note this one carried is
			// not the one recorded with it, so it is saved on its own.
			kept := false
			if strings.TrimSpace(note) != "" && strings.TrimSpace(note) != res.Event.Note {
				if kept, err = h.saveNote(w, r, u, itemID); err != nil {
					return views.Notice{}, nil, err
				}
			}
			switch {
			case kept && res.Event.Verdict == v:
				return views.Notice{Tone: "ok", Text: "Your note was saved; the verdict was not recorded again because you had already recorded “" + verdictLabel(v) + "” on that decision (double click or another tab)."}, pre, nil
			case kept:
				return views.Notice{Tone: "warn", Text: "Your note was saved; the verdict was not recorded because you had already recorded “" + verdictLabel(res.Event.Verdict) + "” on that decision (another tab?). Press u to undo it if you meant “" + verdictLabel(v) + "”."}, pre, nil
			case res.Event.Verdict == v:
				return views.Notice{Tone: "ok", Text: "Already recorded: your “" + verdictLabel(v) + "” on that decision was recorded once (double click or another tab)."}, pre, nil
			}
			return views.Notice{Tone: "warn", Text: "You had already recorded “" + verdictLabel(res.Event.Verdict) + "” on that decision (another tab?); nothing changed. Press u to undo it if you meant “" + verdictLabel(v) + "”."}, pre, nil
		}
		text := "Recorded “" + verdictLabel(v) + "”."
		if strings.TrimSpace(note) != "" {
			text = "Recorded “" + verdictLabel(v) + "” with your note."
			w.Header().Set(NoteSaved, strconv.FormatInt(itemID, 10))
		}
		// Whether the others agreed is not said: verdicts stay independent
		// until a lead looks, and a closed round can no longer be undone.
		switch {
		case res.Closed:
			return views.Notice{Tone: "ok", Text: text + " It was the last verdict the item waited for, so it can no longer be undone; a lead can still change the outcome."}, pre, nil
		case res.State == grounding.QueueOpen:
			text += " The item waits for more independent verdicts."
		}
		return views.Notice{Tone: "ok", Text: text + " Press u to undo."}, pre, nil
	})
}

// noteKept is a refusal after which the note sent with the action was
// saved all the same.
type noteKept struct{ error }

func (e noteKept) Unwrap() error { return e.error }

// Skip passes the item on to someone else.
func (h *Review) Skip(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, func(u grounding.User, itemID int64) (views.Notice, *prefetch, error) {
		// A note typed but not saved goes with the item, not with the screen.
		saved, err := h.keepNote(w, r, u, itemID)
		if err != nil {
			return views.Notice{}, nil, err
		}
		if err := h.store.Skip(r.Context(), u.ID, itemID); err != nil {
			return views.Notice{}, nil, err
		}
		return views.Notice{Tone: "ok", Text: "Skipped: someone else will judge it. Press u to take it back." + saved}, nil, nil
	})
}

// Note records a note on the item and shows the same item again.
func (h *Review) Note(w http.ResponseWriter, r *http.Request) {
	h.act(w, r, func(u grounding.User, itemID int64) (views.Notice, *prefetch, error) {
		_, repeated, err := h.addNote(r, u, itemID)
		if errors.Is(err, grounding.ErrInvalid) {
			return views.Notice{}, nil, Error(http.StatusUnprocessableEntity, "A note needs some text (at most 4,000 characters).")
		}
		if err != nil {
			return views.Notice{}, nil, err
		}
		w.Header().Set(NoteSaved, strconv.FormatInt(itemID, 10))
		if repeated {
			return views.Notice{Tone: "ok", Text: "That note is already saved."}, nil, nil
		}
		return views.Notice{Tone: "ok", Text: "Note saved."}, nil, nil
	})
}

// NoteSaved is the response header naming the item whose note the request
// saved: the page script then forgets the copy it kept of the unsent text.
const NoteSaved = "Groundwork-Note-Saved"

// addNote saves the request's note field on the item; when the item has
// left the queue (a recheck), on the decision the form names (field
// decision, "trajectory:ordinal"), so the text is not lost with the item.
func (h *Review) addNote(r *http.Request, u grounding.User, itemID int64) (grounding.VerdictEvent, bool, error) {
	note := r.PostForm.Get("note")
	e, repeated, err := h.store.AddNote(r.Context(), u.ID, itemID, note)
	if !errors.Is(err, grounding.ErrNotFound) {
		return e, repeated, err
	}
	tid, ord, ok := strings.Cut(r.PostForm.Get("decision"), ":")
	trajectoryID, err1 := strconv.ParseInt(tid, 10, 64)
	ordinal, err2 := strconv.Atoi(ord)
	if !ok || err1 != nil || err2 != nil {
		return e, repeated, err
	}
	return h.store.AddDecisionNote(r.Context(), u.ID, trajectoryID, ordinal, note)
}

// saveNote saves a non-blank note field (addNote) and says whether there
// was one; the response then carries NoteSaved.
func (h *Review) saveNote(w http.ResponseWriter, r *http.Request, u grounding.User, itemID int64) (bool, error) {
	if strings.TrimSpace(r.PostForm.Get("note")) == "" {
		return false, nil
	}
	if _, _, err := h.addNote(r, u, itemID); err != nil {
		return false, err
	}
	w.Header().Set(NoteSaved, strconv.FormatInt(itemID, 10))
	return true, nil
}

// keepNote saves the note field of a request that leaves the item (skip,
// undo) as the user's note on it, so text typed and not yet saved is not
// lost with the screen. It returns what to add to the notice.
func (h *Review) keepNote(w http.ResponseWriter, r *http.Request, u grounding.User, itemID int64) (string, error) {
	if strings.TrimSpace(r.PostForm.Get("note")) == "" {
		return "", nil
	}
	e, _, err := h.addNote(r, u, itemID)
	if err != nil {
		if errors.Is(err, grounding.ErrInvalid) {
			return "", Error(http.StatusUnprocessableEntity, "A note has at most 4,000 characters; nothing was recorded.")
		}
		return "", err
	}
	w.Header().Set(NoteSaved, strconv.FormatInt(itemID, 10))
	return " Your note on decision " + strconv.Itoa(e.Ordinal+1) + ", the one you left, is saved there.", nil
}

// Undo undoes the verdict the page offered (form field event) and shows
// that item again for a new verdict.
func (h *Review) Undo(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	u, ok := CurrentUser(r.Context())
	if !ok {
		h.fail(w, r, Error(http.StatusUnauthorized, "Log in first."))
		return
	}
	f, err := parseQueueFilter(r.Form)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var eventID int64
	if s := r.PostForm.Get("event"); s != "" {
		if eventID, err = strconv.ParseInt(s, 10, 64); err != nil || eventID <= 0 {
			h.fail(w, r, badRequest("event must be a number"))
			return
		}
	}
	// The item on screen when undo was pressed keeps a note typed on it.
	saved := ""
	if s := r.PostForm.Get("item"); s != "" {
		itemID, err := strconv.ParseInt(s, 10, 64)
		if err != nil || itemID <= 0 {
			h.fail(w, r, badRequest("item must be a number"))
			return
		}
		if saved, err = h.keepNote(w, r, u, itemID); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	e, err := h.store.Undo(r.Context(), u.ID, eventID, h.lease)
	notice := views.Notice{Tone: "ok"}
	status := http.StatusOK
	switch {
	case err == nil && e.UndoneKind == grounding.EventSkip:
		notice.Text = "Skip taken back: the item is yours to judge." + saved
	case err == nil:
		if e.PrevVerdict != "" && e.Verdict == "" {
			notice.Text = "Undone: the decision's “" + verdictLabel(e.PrevVerdict) + "” is withdrawn"
		} else {
			notice.Text = "Undone"
		}
		notice.Text += "; the item is yours to judge again." + saved
	case refusal(err) != "":
		status, notice = http.StatusConflict, views.Notice{Tone: "warn", Text: refusal(err)}
	default:
		h.fail(w, r, err)
		return
	}
	h.after(w, r, u, f, status, notice, nil)
}

// Renew extends the annotator's lease while they are active (the page
// script calls it); 204 on success.
func (h *Review) Renew(w http.ResponseWriter, r *http.Request) {
	u, ok := CurrentUser(r.Context())
	if !ok {
		h.fail(w, r, Error(http.StatusUnauthorized, "Log in first."))
		return
	}
	itemID, ok := intParam(r, "itemID")
	if !ok {
		h.fail(w, r, badRequest("item id must be a number"))
		return
	}
	if _, err := h.store.Renew(r.Context(), u.ID, itemID, h.lease); err != nil {
		if msg := refusal(err); msg != "" {
			h.fail(w, r, Error(http.StatusConflict, msg))
			return
		}
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// act parses an item action, runs do and answers with the next screen.
func (h *Review) act(w http.ResponseWriter, r *http.Request, do func(u grounding.User, itemID int64) (views.Notice, *prefetch, error)) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, badRequest("could not read the form"))
		return
	}
	u, ok := CurrentUser(r.Context())
	if !ok {
		h.fail(w, r, Error(http.StatusUnauthorized, "Log in first."))
		return
	}
	itemID, ok := intParam(r, "itemID")
	if !ok {
		h.fail(w, r, badRequest("item id must be a number"))
		return
	}
	f, err := parseQueueFilter(r.Form)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	notice, pre, err := do(u, itemID)
	status := http.StatusOK
	if err != nil {
		msg := refusal(err)
		switch {
		case errors.Is(err, grounding.ErrBusy):
			// The same item again (the claim stands), so a press later
			// records it; the page keeps the note typed for it.
			w.Header().Set("Retry-After", "5")
			status, notice, pre = http.StatusServiceUnavailable, views.Notice{Tone: "warn",
				Text: "The database is busy with an import and could not take that in time: nothing was recorded. Press the key again in a moment; your note is kept."}, nil
		case msg == "":
			h.fail(w, r, err)
			return
		case errors.As(err, new(noteKept)):
			status, notice, pre = http.StatusConflict, views.Notice{Tone: "warn",
				Text: "Your note was saved; the verdict was not recorded because " + refusalCause(err) + "."}, nil
		default:
			status, notice, pre = http.StatusConflict, views.Notice{Tone: "warn", Text: msg}, nil
		}
	}
	h.after(w, r, u, f, status, notice, pre)
}

// after answers a review action: the next screen for htmx (or a refusal
// shown as a full page), a See Other to the review URL for a plain form.
func (h *Review) after(w http.ResponseWriter, r *http.Request, u grounding.User, f grounding.QueueFilter, status int, notice views.Notice, pre *prefetch) {
	if !isPartial(r) && status < 400 {
		http.Redirect(w, r, reviewURL(f), http.StatusSeeOther)
		return
	}
	h.screen(w, r, u, f, status, notice, pre)
}

// prefetch is the next item an action already claimed (found false: none
// was left), so the screen need not ask again.
type prefetch struct {
	claim grounding.Claim
	found bool
}

// refusal is the user-facing message of an adjudication refusal, "" for
// any other error. Each says that nothing was recorded.
func refusal(err error) string {
	switch {
	case errors.Is(err, grounding.ErrClaimExpired):
		return "Your claim on that item expired after a while without activity, and another annotator holds it now. Nothing was recorded; here is your next item."
	case errors.Is(err, grounding.ErrNotClaimed):
		return "That item is not yours to judge: it was handed to someone else, you skipped it, or you moved on to another item (another tab?). Nothing was recorded; here is your current item."
	case errors.Is(err, grounding.ErrItemClosed):
		return "That item was settled meanwhile (by other verdicts, or it went to a lead). Nothing was recorded."
	case errors.Is(err, grounding.ErrNothingToUndo):
		return "Nothing to undo: that verdict was already undone (double press or another tab), or you have none left."
	case errors.Is(err, grounding.ErrSkipTaken):
		return "That skip can no longer be taken back: the item went to another annotator, or it was settled. Nothing was changed."
	case errors.Is(err, grounding.ErrRoundClosed):
		return "That verdict was the last one its item waited for, with other annotators' verdicts, so it can no longer be undone; a lead can still change the outcome. Nothing was changed."
	case errors.Is(err, grounding.ErrFinalized):
		return "A lead has set the final verdict on that item, so your verdict there can no longer be undone."
	case errors.Is(err, grounding.ErrNotFound):
		return "That item is no longer in the queue (a recheck settled it automatically). Nothing was recorded."
	}
	return ""
}

// refusalCause is why a verdict was refused, as the end of a sentence.
func refusalCause(err error) string {
	switch {
	case errors.Is(err, grounding.ErrClaimExpired):
		return "your claim on that item expired after a while without activity, and another annotator holds it now"
	case errors.Is(err, grounding.ErrNotClaimed):
		return "that item is not yours to judge: it was handed to someone else, you skipped it, or you moved on to another item (another tab?)"
	case errors.Is(err, grounding.ErrItemClosed):
		return "that item was settled meanwhile (by other verdicts, or it went to a lead)"
	case errors.Is(err, grounding.ErrNotFound):
		return "that item is no longer in the queue (a recheck settled it automatically)"
	}
	return "it was refused"
}

func verdictLabel(v grounding.Verdict) string {
	switch v {
	case grounding.VerdictPass:
		return "grounded — supervise"
	case grounding.VerdictFail:
		return "not inferable"
	}
	return string(v)
}

// screen renders the review screen for u: their current item (claimed now
// if needed), progress and the undo offer.
func (h *Review) screen(w http.ResponseWriter, r *http.Request, u grounding.User, f grounding.QueueFilter, status int, notice views.Notice, pre *prefetch) {
	ctx := r.Context()
	p := views.ReviewPage{Filter: reviewFilter(f), Notice: notice, QueueURL: withQuery("/queue", queueQuery(f))}
	var c grounding.Claim
	var err error
	switch {
	case pre == nil:
		c, err = h.store.Next(ctx, u.ID, f, h.lease)
	case pre.found:
		c = pre.claim
	default:
		err = grounding.ErrNotFound
	}
	switch {
	case errors.Is(err, grounding.ErrNotFound):
		// progress says why, from the figures
	case err != nil:
		h.fail(w, r, err)
		return
	default:
		item, err := h.item(ctx, u, f, c)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		p.Item = item
	}
	runName := "" // the filter's run, named by the claimed item when there is one
	if p.Item != nil {
		runName = c.Item.RunName
	}
	if err := h.progress(ctx, u, f, runName, &p); err != nil {
		h.fail(w, r, err)
		return
	}
	if status >= 400 && notice.Text != "" {
		// The refusal is shown in the screen; keep htmx swapping it there.
		w.Header().Set(HXRetarget, "#review")
		w.Header().Set(HXReswap, "outerHTML")
	}
	w.Header().Set(HXPushURL, reviewURL(f))
	render(w, r, status, page{title: "Review", section: "review", body: views.Review(p), fragment: views.Review(p)})
}

// progress fills in the progress figures and the undo offer (one read).
// runName names f's run when the caller knows it; else it is read.
func (h *Review) progress(ctx context.Context, u grounding.User, f grounding.QueueFilter, runName string, p *views.ReviewPage) error {
	pr, last, err := h.store.Standing(ctx, u.ID, f)
	if err != nil {
		return err
	}
	lead := grounding.CanLead(u.Role)
	if !lead {
		pr = withoutConflicts(pr)
	}
	if last != nil {
		what := string(last.Verdict)
		if last.Kind == grounding.EventSkip {
			what = "skip"
		}
		label := what + " on decision " + strconv.Itoa(last.Ordinal+1)
		if last.ExtID != "" {
			label += " of " + last.ExtID
		}
		if last.Kind == grounding.EventFinal {
			label = "final " + label
		}
		p.Undo = &views.UndoForm{URL: "/review/undo", Event: strconv.FormatInt(last.ID, 10), Label: label}
	}
	over := "of " + count(pr.Items) + " queued items in all runs"
	if f.RunID != 0 {
		if runName == "" {
			run, err := h.store.Run(ctx, f.RunID)
			if err != nil {
				return err
			}
			runName = run.Name
		}
		p.Filter.Label = strings.Replace(p.Filter.Label, "run "+strconv.FormatInt(f.RunID, 10), runName, 1)
		over = "of " + count(pr.Items) + " queued items in " + runName
	}
	p.Progress = views.ReviewProgress{
		Remaining: count(pr.Yours) + " left",
		MineToday: count(pr.MineToday) + " today",
		RunShare:  percent(pr.Done, pr.Items) + " adjudicated",
		RunOver:   over,
	}
	if n := pr.Remaining - pr.Yours; n > 0 {
		p.Progress.Passed = "of " + count(pr.Remaining) + " open: " + count(n) + " judged or skipped by you"
	}
	if pr.Conflicts > 0 {
		p.Progress.Conflicts = plural(pr.Conflicts, "conflict") + " waiting for a lead"
	}
	if p.Item == nil {
		// Next had nothing for this user: the open items still counted
		// are not theirs to take, and the screen says which they are.
		p.Progress.Remaining = "0 left"
		p.Empty = nothingLeft(pr, lead)
	}
	return nil
}

// withoutConflicts is an annotator's view of the queue's figures: items in
// conflict are for leads, and counting them would tell an annotator who
// voted that the other verdict differed (blind overlap).
func withoutConflicts(pr grounding.Progress) grounding.Progress {
	pr.Items -= pr.Conflicts
	pr.Conflicts = 0
	return pr
}

// nothingLeft explains an empty review screen from the user's figures:
// the open items held by other annotators (Next gives none of them), the
// ones the user already judged or skipped, and for a lead the conflicts.
func nothingLeft(pr grounding.Progress, lead bool) string {
	held, passed := pr.Yours, pr.Remaining-pr.Yours
	var why []string
	switch {
	case held == 1:
		why = append(why, "1 item is claimed by someone else")
	case held > 1:
		why = append(why, count(held)+" items are claimed by other annotators")
	}
	switch {
	case passed > 0 && held > 0:
		why = append(why, "and you judged or skipped the other "+count(passed))
	case passed == 1:
		why = append(why, "you judged or skipped the open item; it waits for other annotators")
	case passed > 1:
		why = append(why, "you judged or skipped the "+count(passed)+" open items; they wait for other annotators")
	}
	text := strings.Join(why, ", ")
	if lead && pr.Conflicts > 0 {
		c := "1 conflict waits for a lead"
		if pr.Conflicts > 1 {
			c = count(pr.Conflicts) + " conflicts wait for a lead"
		}
		if text != "" {
			text += "; "
		}
		text += c + ": see the conflicts list"
	}
	if text == "" {
		return "Nothing left in this queue: no item is open any more."
	}
	return "Nothing left for you — " + text + "."
}

// item builds the claimed decision's screen: the decision card with its
// three panes (as on the trajectory page), the arguments in question
// marked for the page script to highlight, and why it was queued.
func (h *Review) item(ctx context.Context, u grounding.User, f grounding.QueueFilter, c grounding.Claim) (*views.ReviewItem, error) {
	it := c.Item
	hd, d, err := h.store.DecisionAt(ctx, it.TrajectoryID, it.Ordinal)
	if err != nil {
		return nil, err
	}
	ds := []grounding.StoredDecision{d}
	// The visible pane reaches back to the evidence of the arguments in
	// question, so the page can highlight it instead of a "show" button:
	// the window is read from there at once.
	reach := evidenceStart(it.Args)
	if reach >= 0 && ds[0].Message-reach > maxSpan {
		reach = -1
	}
	tr := &Trajectories{log: h.log, store: h.store}
	win, err := tr.windowFrom(ctx, hd.ID, ds, reach)
	if err != nil {
		return nil, err
	}
	vis, earlier, hid, err := win.before(ctx, h.store, hd.ID, ds[0].Message)
	if err != nil {
		return nil, err
	}
	if reach >= 0 && (len(vis) == 0 || reach < vis[0].Index) {
		if v, e, ok := win.since(reach, ds[0].Message); ok {
			vis, earlier = v, e
		} else if vis, earlier, err = h.evidenceSince(ctx, hd.ID, reach, ds[0].Message, win); err != nil {
			return nil, err
		}
	}
	card := decisionCard(hd, ds[0], win.msgs, vis, earlier, hid, hiddenEntries(hd))
	question := map[string]bool{}
	for _, a := range it.Args {
		question[a.Path] = true
	}
	if card.Check != nil {
		for i := range card.Check.Args {
			card.Check.Args[i].Question = question[card.Check.Args[i].Path]
		}
	}
	id := strconv.FormatInt(it.ID, 10)
	base := "/review/" + id
	ri := &views.ReviewItem{
		ID:            id,
		VerdictURL:    base + "/verdict",
		SkipURL:       base + "/skip",
		NoteURL:       base + "/note",
		RenewURL:      base + "/renew",
		NoteOn:        strconv.FormatInt(it.TrajectoryID, 10) + ":" + strconv.Itoa(it.Ordinal),
		NoteKey:       "groundwork.note." + strconv.FormatInt(u.ID, 10) + "." + id,
		TrajectoryURL: decisionURL(hd.ID, it.Ordinal),
		ExtID:         hd.ExtID,
		RunName:       hd.RunName,
		Decision:      card.Title,
		LeadNote:      it.Note,
		Card:          card,
	}
	ri.Why, ri.Evidence = splitWhy(it.Why)
	for _, a := range it.Args {
		ri.Question = append(ri.Question, views.QuestionView{Path: a.Path, Value: valueText(a.Value), Status: a.Status, Note: policyLine(a.Where)})
	}
	if it.Required > 1 {
		ri.Verdicts = "needs " + strconv.Itoa(it.Required) + " independent verdicts · " + strconv.Itoa(it.Verdicts) + " given"
	}
	notes, err := h.store.NotesBy(ctx, u.ID, it.TrajectoryID, it.Ordinal)
	if err != nil {
		return nil, err
	}
	for _, e := range notes {
		ri.Notes = append(ri.Notes, eventView(e))
	}
	return ri, nil
}

// evidenceSince reads the visible messages from lo up to msg, and how many
// precede lo, for a window too wide to hold them (see windowFrom).
func (h *Review) evidenceSince(ctx context.Context, id int64, lo, msg int, win *decisionWindow) ([]grounding.Message, int, error) {
	ms, err := h.store.MessagesHead(ctx, id, lo, msg, pageChars)
	if err != nil {
		return nil, 0, err
	}
	var vis []grounding.Message
	for _, m := range ms {
		win.msgs[m.Index] = m
		if !m.IsHidden() {
			vis = append(vis, m)
		}
	}
	_, earlier, err := h.store.VisibleBefore(ctx, id, lo, 0)
	return vis, earlier, err
}

// evidenceStart is the earliest visible message holding evidence for args
// (a value found there, or the record a policy finding cites: the annotator
// judges the finding against that record), -1 when none does.
func evidenceStart(args []grounding.ArgEvidence) int {
	lo := -1
	for _, a := range args {
		if m := evidenceMessage(a.Where); m >= 0 && (lo < 0 || m < lo) {
			lo = m
		}
	}
	return lo
}

// parseQueueFilter reads the queue filter of the review and queue pages.
func parseQueueFilter(q url.Values) (grounding.QueueFilter, error) {
	f := grounding.QueueFilter{Domain: q.Get("domain"), Tool: q.Get("tool"), Reason: q.Get("reason"), State: q.Get("state"), After: q.Get("after")}
	if s := q.Get("run"); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id <= 0 {
			return f, badRequest("run must be a run id")
		}
		f.RunID = id
	}
	switch f.State {
	case "", "all", grounding.QueueOpen, grounding.QueueConflict, grounding.QueueDone:
	default:
		return f, badRequest("state must be open, conflict, done or all")
	}
	return f, nil
}

// queueQuery encodes f's filters (not state or cursor) for links.
func queueQuery(f grounding.QueueFilter) url.Values {
	v := url.Values{}
	if f.RunID != 0 {
		v.Set("run", strconv.FormatInt(f.RunID, 10))
	}
	if f.Domain != "" {
		v.Set("domain", f.Domain)
	}
	if f.Tool != "" {
		v.Set("tool", f.Tool)
	}
	if f.Reason != "" {
		v.Set("reason", f.Reason)
	}
	return v
}

func reviewURL(f grounding.QueueFilter) string { return withQuery("/review", queueQuery(f)) }

func reviewFilter(f grounding.QueueFilter) views.ReviewFilter {
	rf := views.ReviewFilter{Domain: f.Domain, Tool: f.Tool, Reason: f.Reason}
	var label []string
	if f.RunID != 0 {
		rf.Run = strconv.FormatInt(f.RunID, 10)
		label = append(label, "run "+rf.Run)
	}
	for _, s := range []string{f.Domain, f.Tool, f.Reason} {
		if s != "" {
			label = append(label, s)
		}
	}
	rf.Label = strings.Join(label, " · ")
	if rf.Label == "" {
		rf.Label = "all runs"
	}
	return rf
}

// eventView formats one history event on one line.
func eventView(e grounding.VerdictEvent) views.EventView {
	v := views.EventView{When: dateTime(e.CreatedAt), User: e.UserName, Kind: e.Kind, Verdict: string(e.Verdict), Prev: string(e.PrevVerdict), Note: e.Note}
	switch e.Kind {
	case grounding.EventVerdict:
		v.Text = "judged it " + string(e.Verdict)
	case grounding.EventFinal:
		v.Text = "set the final verdict " + string(e.Verdict)
	case grounding.EventUndo:
		v.Text = "undid event " + strconv.FormatInt(e.Undoes, 10)
	case grounding.EventSkip:
		v.Text = "skipped it"
	case grounding.EventNote:
		v.Text = "noted"
	case grounding.EventEnqueue:
		v.Text = "sent it to the queue"
	default:
		v.Text = e.Kind
	}
	switch {
	case (e.Kind == grounding.EventUndo || e.Kind == grounding.EventFinal) && e.PrevVerdict != e.Verdict:
		v.Text += " (human verdict " + orDash(string(e.PrevVerdict)) + " → " + orDash(string(e.Verdict)) + ")"
	case e.Kind == grounding.EventEnqueue && e.PrevVerdict != "":
		v.Text += " (its human verdict " + string(e.PrevVerdict) + " stands until the new round settles)"
	}
	return v
}

// passEvidence are the reason codes the engine records for arguments it
// accepted: a normalized or derived value adds no severity (grounding's
// settle only makes a decision ambiguous for an ambiguous finding), so
// they never put a decision in the queue. The pages list them as
// evidence, apart from the reasons it was queued for.
var passEvidence = []string{grounding.ReasonNormalized, grounding.ReasonDerived}

// splitWhy separates a queued decision's reason codes into the ones that
// made it ambiguous and the pass evidence recorded alongside them.
func splitWhy(reasons []string) (why, evidence []string) {
	for _, r := range reasons {
		if slices.Contains(passEvidence, r) {
			evidence = append(evidence, r)
		} else {
			why = append(why, r)
		}
	}
	return why, evidence
}
