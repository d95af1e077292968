package handlers

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"groundwork/grounding"
)

// AddDecisionNote records a note on a decision whose item is gone.
func (f *fakeAdjudication) AddDecisionNote(_ context.Context, userID, tid int64, ord int, note string) (grounding.VerdictEvent, bool, error) {
	if f.DecisionNoteFn == nil {
		f.missing("AddDecisionNote")
	}
	return f.DecisionNoteFn(userID, tid, ord, note)
}

// TestReviewRefusedVerdictKeepsNote: whatever refuses a verdict (the claim
// expired, the item went to someone else, it was settled meanwhile, it
// left the queue, or the same verdict came again from another tab), the
// note typed with it is saved on the decision, and the answer says so.
func TestReviewRefusedVerdictKeepsNote(t *testing.T) {
	const note = "the user named it in turn 3"
	for _, c := range []struct {
		name   string
		err    error // what Submit answers
		status int
		// the store calls that keep the note, and what the notice says
		want   []string
		notice string
	}{
		{"claim expired", grounding.ErrClaimExpired, 409, []string{`note 7 "` + note + `"`}, "your claim on that item expired"},
		{"claimed by someone else", grounding.ErrNotClaimed, 409, []string{`note 7 "` + note + `"`}, "that item is not yours to judge"},
		{"already settled", grounding.ErrItemClosed, 409, []string{`note 7 "` + note + `"`}, "that item was settled meanwhile"},
		{"item gone", grounding.ErrNotFound, 409, []string{`note 7 gone`, `decision note 5/0 "` + note + `"`}, "that item is no longer in the queue"},
		{"same verdict from another tab", nil, 200, []string{`note 7 "` + note + `"`}, "you had already recorded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := adjudicationStore(t)
			var log []string
			st.SubmitFn = func(userID, itemID int64, v grounding.Verdict, n string) (grounding.SubmitResult, error) {
				if c.err != nil {
					return grounding.SubmitResult{}, fmt.Errorf("store: verdict: %w", c.err)
				}
				// The other tab's verdict stands, sent without this note.
				return grounding.SubmitResult{Event: grounding.VerdictEvent{ID: 43, Verdict: v}, Repeated: true, State: grounding.QueueDone, Human: v}, nil
			}
			st.AddNoteFn = func(userID, itemID int64, n string) (grounding.VerdictEvent, bool, error) {
				if c.err == grounding.ErrNotFound {
					log = append(log, fmt.Sprintf("note %d gone", itemID))
					return grounding.VerdictEvent{}, false, fmt.Errorf("store: note: %w", grounding.ErrNotFound)
				}
				log = append(log, fmt.Sprintf("note %d %q", itemID, n))
				return grounding.VerdictEvent{ID: 44, Kind: grounding.EventNote, Note: n, ItemID: itemID, TrajectoryID: 5}, false, nil
			}
			st.DecisionNoteFn = func(userID, tid int64, ord int, n string) (grounding.VerdictEvent, bool, error) {
				log = append(log, fmt.Sprintf("decision note %d/%d %q", tid, ord, n))
				return grounding.VerdictEvent{ID: 45, Kind: grounding.EventNote, Note: n, TrajectoryID: tid, Ordinal: ord}, false, nil
			}
			h := adjudicationRouter(st, annotator)
			// The form as the screen renders it, with the note typed.
			_, doc := do(t, h, httptest.NewRequest("GET", "/review", nil), true)
			form := url.Values{"verdict": {"pass"}, "note": {note}}
			doc.Find(`form[hx-post="/review/7/verdict"] input[type=hidden]`).Each(func(_ int, s *goquery.Selection) {
				name, _ := s.Attr("name")
				v, _ := s.Attr("value")
				form.Set(name, v)
			})
			req := post("/review/7/verdict", form)
			req.Header.Set("HX-Request", "true")
			rec, doc := do(t, h, req, true)
			if rec.Code != c.status {
				t.Errorf("status %d, want %d", rec.Code, c.status)
			}
			if rec.Header().Get(NoteSaved) != "7" {
				t.Errorf("%s = %q, want 7: the page would keep its copy of a saved note", NoteSaved, rec.Header().Get(NoteSaved))
			}
			if !slices.Equal(log, c.want) {
				t.Errorf("store calls %q, want %q: the note is lost", log, c.want)
			}
			got := strings.Join(strings.Fields(doc.Find(`[data-testid=notice]`).Text()), " ")
			if !strings.HasPrefix(got, "Your note was saved") || !strings.Contains(got, "the verdict was not recorded") || !strings.Contains(got, c.notice) {
				t.Errorf("notice = %q; want it to say the note was saved, the verdict not, because %s…", got, c.notice)
			}
		})
	}
}

// A double click sends the note twice with the same verdict: it was
// recorded with the verdict, so nothing more is saved.
func TestReviewDoubleClickSavesNoteOnce(t *testing.T) {
	st := adjudicationStore(t)
	var log []string
	st.SubmitFn = func(userID, itemID int64, v grounding.Verdict, n string) (grounding.SubmitResult, error) {
		return grounding.SubmitResult{Event: grounding.VerdictEvent{ID: 43, Verdict: v, Note: "same thought"}, Repeated: true, State: grounding.QueueDone, Human: v}, nil
	}
	st.AddNoteFn = func(userID, itemID int64, n string) (grounding.VerdictEvent, bool, error) {
		log = append(log, n)
		return grounding.VerdictEvent{}, false, nil
	}
	req := post("/review/7/verdict", url.Values{"verdict": {"pass"}, "note": {" same thought "}})
	req.Header.Set("HX-Request", "true")
	rec, doc := do(t, adjudicationRouter(st, annotator), req, true)
	if rec.Code != 200 || len(log) != 0 || !strings.Contains(doc.Find(`[data-testid=notice]`).Text(), "Already recorded") {
		t.Errorf("status %d, notes saved %q, notice %q; want 200, none, Already recorded", rec.Code, log, doc.Find(`[data-testid=notice]`).Text())
	}
}

// TestQueueHidesConflictsFromAnnotators: items in conflict are for leads.
// An annotator asking for them is refused, their "all" leaves them out,
// and no count they see mentions them (blind overlap: a conflict would
// tell them the other verdict differed).
func TestQueueHidesConflictsFromAnnotators(t *testing.T) {
	st := adjudicationStore(t)
	var asked []grounding.QueueFilter
	st.QueueFn = func(q grounding.QueueFilter) (grounding.QueuePage, error) {
		asked = append(asked, q)
		return grounding.QueuePage{Items: []grounding.QueueItem{reviewItem()}}, nil
	}
	st.ProgressFn = func(int64, grounding.QueueFilter) (grounding.Progress, error) {
		return grounding.Progress{Remaining: 14, Yours: 12, Items: 20, Done: 5, Conflicts: 1}, nil
	}
	ann, lead := adjudicationRouter(st, annotator), adjudicationRouter(st, researcher)
	for _, htmx := range []bool{false, true} {
		if rec, _ := do(t, ann, httptest.NewRequest("GET", "/queue?state=conflict", nil), htmx); rec.Code != 403 {
			t.Errorf("annotator /queue?state=conflict (htmx %v): status %d, want 403", htmx, rec.Code)
		}
	}
	if rec, _ := do(t, lead, httptest.NewRequest("GET", "/queue?state=conflict", nil), false); rec.Code != 200 {
		t.Errorf("lead /queue?state=conflict: status %d, want 200", rec.Code)
	}

	asked = nil
	rec, doc := do(t, ann, httptest.NewRequest("GET", "/queue?state=all", nil), false)
	if rec.Code != 200 || len(asked) != 1 || !asked[0].NoConflicts {
		t.Errorf("annotator /queue?state=all: status %d, store asked %+v; want conflicts left out", rec.Code, asked)
	}
	if doc.Find(`select[name=state] option[value=conflict]`).Length() != 0 {
		t.Errorf("the annotator's state filter offers conflicts")
	}
	if got := doc.Find(`[data-testid=queue-summary]`).Text(); strings.Contains(got, "conflict") || !strings.Contains(got, "19 queued items") {
		t.Errorf("annotator's summary = %q; want no conflicts, 19 items (20 less the conflict)", got)
	}
	_, doc = do(t, ann, httptest.NewRequest("GET", "/review", nil), false)
	if got := doc.Find(`[data-testid=progress]`).Text(); strings.Contains(got, "conflict") {
		t.Errorf("annotator's review progress = %q; want no conflicts", strings.Join(strings.Fields(got), " "))
	}

	asked = nil
	_, doc = do(t, lead, httptest.NewRequest("GET", "/queue?state=all", nil), false)
	if len(asked) != 1 || asked[0].NoConflicts || !strings.Contains(doc.Find(`[data-testid=queue-summary]`).Text(), "1 conflict waiting for a lead") {
		t.Errorf("lead's /queue?state=all: store asked %+v, summary %q; want conflicts listed and counted", asked, doc.Find(`[data-testid=queue-summary]`).Text())
	}
}

// TestReviewNothingLeftAgreesWithCounts: when Next has nothing for the
// annotator, the screen does not also say "1 left": it says 0 and why
// the items still open are not theirs.
func TestReviewNothingLeftAgreesWithCounts(t *testing.T) {
	for _, c := range []struct {
		name  string
		user  *grounding.User
		pr    grounding.Progress
		left  string
		empty string
	}{
		{"claimed by someone else", annotator, grounding.Progress{Remaining: 1, Yours: 1, Items: 4, Done: 2, Conflicts: 1},
			"0 left", "Nothing left for you — 1 item is claimed by someone else."},
		{"claimed by others and judged by you", annotator, grounding.Progress{Remaining: 5, Yours: 3, Items: 9, Done: 4},
			"0 left of 5 open: 2 judged or skipped by you", "Nothing left for you — 3 items are claimed by other annotators, and you judged or skipped the other 2."},
		{"your own verdicts", annotator, grounding.Progress{Remaining: 2, Yours: 0, Items: 2},
			"0 left of 2 open: 2 judged or skipped by you", "Nothing left for you — you judged or skipped the 2 open items; they wait for other annotators."},
		{"a conflict, for a lead", researcher, grounding.Progress{Remaining: 0, Items: 3, Done: 2, Conflicts: 1},
			"0 left", "Nothing left for you — 1 conflict waits for a lead: see the conflicts list."},
		{"all settled", annotator, grounding.Progress{Items: 3, Done: 3},
			"0 left", "Nothing left in this queue: no item is open any more."},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := adjudicationStore(t)
			st.NextFn = func(int64, grounding.QueueFilter) (grounding.Claim, error) {
				return grounding.Claim{}, fmt.Errorf("store: next: queue empty: %w", grounding.ErrNotFound)
			}
			st.ProgressFn = func(int64, grounding.QueueFilter) (grounding.Progress, error) { return c.pr, nil }
			_, doc := do(t, adjudicationRouter(st, c.user), httptest.NewRequest("GET", "/review", nil), false)
			if got := strings.Join(strings.Fields(doc.Find(`[data-testid=remaining]`).Text()), " "); got != c.left {
				t.Errorf("remaining = %q, want %q", got, c.left)
			}
			if got := strings.Join(strings.Fields(doc.Find(`[data-testid=review-empty]`).Text()), " "); got != c.empty {
				t.Errorf("empty = %q\nwant %q", got, c.empty)
			}
		})
	}
}
