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
