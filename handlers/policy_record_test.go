package handlers

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"groundwork/grounding"
)

// policyRecord is get_reservation_details' record of NO6JO3: economy,
// booked two weeks before the policy's current time, no insurance, so the
// airline policy does not allow cancelling it for a change of plans.
const policyRecord = `{"reservation_id": "NO6JO3", "user_id": "mia_li_3668", "cabin": "economy", "flights": [{"flight_number": "HAT136", "date": "2024-05-20", "price": 152}], "created_at": "2024-05-01T05:17:41", "insurance": "no"}`

// policyTrajectory reads the record at message 3, chats for pad more turns,
// then cancels the reservation the record does not allow cancelling.
func policyTrajectory(pad int) *grounding.Trajectory {
	msgs := []grounding.Message{
		{Role: "system", Content: "# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST."},
		{Role: "user", Content: "I am mia_li_3668, cancel reservation NO6JO3. My plans changed."},
		{Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c1", Name: "get_reservation_details", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
		{Role: "tool", ToolCallID: "c1", Name: "get_reservation_details", Content: policyRecord},
	}
	for range pad {
		msgs = append(msgs, grounding.Message{Role: "assistant", Content: "Is there anything else about the trip?"},
			grounding.Message{Role: "user", Content: "No, just that."})
	}
	msgs = append(msgs,
		grounding.Message{Role: "assistant", Content: "Cancel NO6JO3? Please confirm (yes/no)."},
		grounding.Message{Role: "user", Content: "Yes."},
		grounding.Message{Role: "assistant", ContentNull: true, ToolCalls: []grounding.ToolCall{{ID: "c2", Name: "cancel_reservation", Arguments: json.RawMessage(`{"reservation_id":"NO6JO3"}`)}}},
		grounding.Message{Role: "tool", ToolCallID: "c2", Name: "cancel_reservation", Content: `{"reservation_id": "NO6JO3", "status": "cancelled"}`})
	for i := range msgs {
		msgs[i].Index = i
	}
	one := 1.0
	return &grounding.Trajectory{ID: "t-policy", Domain: "airline", Reward: &one, Messages: msgs}
}

// checkedStore is trajectoryStore(tr) with the header of a checked
// trajectory, so cards show their checks.
func checkedStore(t *testing.T, tr *grounding.Trajectory) *fakeStore {
	st := trajectoryStore(t, tr)
	header := st.TrajectoryFn
	st.TrajectoryFn = func(id int64) (grounding.TrajectoryHeader, error) {
		hd, err := header(id)
		hd.EngineVersion, hd.Profile = grounding.EngineVersion, "airline@1"
		return hd, err
	}
	return st
}

// policyFinding is the cancellation's policy finding in tr, and the
// cancellation's ordinal.
func policyFinding(t *testing.T, tr *grounding.Trajectory) (grounding.ArgEvidence, int) {
	t.Helper()
	for _, d := range grounding.CheckDefault(tr).Decisions {
		for _, a := range d.Args {
			if d.Tool == "cancel_reservation" && a.Path == "policy" {
				return a, d.Ordinal
			}
		}
	}
	t.Fatal("no policy finding on the cancellation")
	return grounding.ArgEvidence{}, 0
}

// TestArgViewPolicyRecord: a policy finding that cites a record points the
// page at the record (its message, the id's text there as the needle) and
// its line starts with where to look; the needle is the id when the record
// is not loaded; a finding stored before findings named their record reads
// as it always did.
func TestArgViewPolicyRecord(t *testing.T) {
	tr := policyTrajectory(0)
	a, _ := policyFinding(t, tr)
	if a.Where.Record == nil || a.Where.Record.Message != 3 {
		t.Fatalf("finding %s cites record %+v, want message 3", a.Where, a.Where.Record)
	}
	loaded := map[int]grounding.Message{3: tr.Messages[3]}
	v := argView(a, loaded)
	if v.Msg != "3" || v.Needle != "NO6JO3" || v.Record != "3" {
		t.Errorf("argView = msg %q needle %q record %q, want message 3, needle NO6JO3", v.Msg, v.Needle, v.Record)
	}
	if !strings.HasPrefix(v.Evidence, "the record of NO6JO3 shows created_at 2024-05-01T05:17:41") || strings.Contains(v.Evidence, "(message 3)") {
		t.Errorf("evidence after the link = %q, want the note without repeating the message", v.Evidence)
	}
	if got := policyLine(a.Where); !strings.HasPrefix(got, "against the policy — see the record in message 3; the record of NO6JO3 shows") {
		t.Errorf("policy line = %q", got)
	}
	if v := argView(a, nil); v.Msg != "3" || v.Needle != "NO6JO3" {
		t.Errorf("record not loaded: msg %q needle %q, want 3 and the id", v.Msg, v.Needle)
	}
	// A span the message does not hold (a stale row): the id, not a slice.
	bad := a
	r := *a.Where.Record
	r.Start, r.End = 5, 5000
	bad.Where.Record = &r
	if v := argView(bad, loaded); v.Needle != "NO6JO3" {
		t.Errorf("out-of-range span: needle %q, want the id", v.Needle)
	}
	old := a
	old.Where.Record = nil
	if v := argView(old, loaded); v.Msg != "" || v.Needle != "" || v.Record != "" || v.Evidence != a.Where.String() {
		t.Errorf("finding without a record: %+v, want no pointer and the engine's line", v)
	}
	if got := policyLine(old.Where); got != a.Where.String() {
		t.Errorf("policy line without a record = %q, want %q", got, a.Where.String())
	}
	if evidenceMessage(old.Where) != -1 || evidenceMessage(a.Where) != 3 {
		t.Errorf("evidenceMessage = %d without a record, %d with; want -1 and 3", evidenceMessage(old.Where), evidenceMessage(a.Where))
	}
}

// TestTrajectoryPolicyRecordLink: on the trajectory page the policy
// finding's button points at the record message with the id as its needle,
// the record is in the card's visible pane, and the line under it links to
// it in plain words.
func TestTrajectoryPolicyRecordLink(t *testing.T) {
	tr := policyTrajectory(0)
	_, ord := policyFinding(t, tr)
	h := testRouter(checkedStore(t, tr), &fakeSessions{}, researcher, t.TempDir(), 1<<20)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/trajectories/5", nil), false)
	if rec.Code != 200 {
		t.Fatalf("status %d", rec.Code)
	}
	card := doc.Find(`#d` + strconv.Itoa(ord))
	var arg *goquery.Selection
	card.Find(`button[data-testid=arg]`).Each(func(_ int, s *goquery.Selection) {
		if strings.TrimSpace(s.Find(".mono").First().Text()) == "policy" {
			arg = s
		}
	})
	if arg == nil {
		t.Fatalf("no policy argument on decision %d:\n%s", ord, card.Text())
	}
	if m, _ := arg.Attr("data-msg"); m != "3" {
		t.Errorf("data-msg = %q, want 3 (the record)", m)
	}
	if n, _ := arg.Attr("data-needle"); n != "NO6JO3" {
		t.Errorf("data-needle = %q, want NO6JO3", n)
	}
	li := arg.Parent()
	link := li.Find(`[data-testid=record-link]`)
	if got := strings.Join(strings.Fields(li.Find(".evidence").Text()), " "); link.Length() != 1 ||
		!strings.HasPrefix(got, "against the policy — see the record in message 3 the record of NO6JO3 shows created_at") {
		t.Errorf("evidence line = %q (%d links)", got, link.Length())
	}
	if _, ok := link.Attr("data-show-evidence"); !ok {
		t.Errorf("the record link does not show the evidence")
	}
	if m := card.Find(`[data-testid=visible-pane] .msg[data-index="3"]`); !strings.Contains(m.Text(), `"NO6JO3"`) {
		t.Errorf("the record is not in the card's visible pane: %q", m.Text())
	}
}

// TestReviewReachesBackToPolicyRecord: a policy finding in question whose
// record lies before the messages a decision normally shows: the review
// screen's visible pane starts at the record (the page highlights its id
// there at once), and the "why queued" line reads plainly.
func TestReviewReachesBackToPolicyRecord(t *testing.T) {
	tr := policyTrajectory(4)
	a, ord := policyFinding(t, tr)
	f := &fakeAdjudication{fakeStore: checkedStore(t, tr)}
	item := grounding.QueueItem{ID: 9, RunID: 1, TrajectoryID: 5, Ordinal: ord, RunName: "demo", ExtID: tr.ID, Tool: "cancel_reservation",
		Source: grounding.SourceAuto, Why: []string{grounding.ReasonUnsupported}, Required: 1, State: grounding.QueueOpen,
		Args: []grounding.ArgEvidence{a}}
	serveOneItem(f, item)
	rec, doc := do(t, adjudicationRouter(f, annotator), httptest.NewRequest("GET", "/review", nil), true)
	if rec.Code != 200 {
		t.Fatalf("status %d:\n%s", rec.Code, rec.Body)
	}
	var shown []string
	doc.Find(`[data-testid=visible-pane] .msg`).Each(func(_ int, s *goquery.Selection) {
		i, _ := s.Attr("data-index")
		shown = append(shown, i)
	})
	if len(shown) == 0 || shown[0] != "3" || !slices.Contains(shown, "12") {
		t.Errorf("visible pane shows messages %q, want from the record (3) to the confirmation (12)", shown)
	}
	q := doc.Find(`button.arg[data-question]`)
	if m, _ := q.Attr("data-msg"); q.Length() != 1 || m != "3" {
		t.Errorf("the argument in question points at message %q (%d), want the record's 3", m, q.Length())
	}
	if got := strings.Join(strings.Fields(doc.Find(`[data-testid=question]`).Text()), " "); !strings.Contains(got, "against the policy — see the record in message 3; the record of NO6JO3 shows") {
		t.Errorf("question line = %q", got)
	}
}

// TestCheckViewProblemsFirst: under a decision's header the arguments
// that decided its verdict come first (failing, then doubtful), each group
// in the call's order, so a booking's one contradicted count is the first
// line an annotator reads.
func TestCheckViewProblemsFirst(t *testing.T) {
	arg := func(path, status string) grounding.ArgEvidence {
		return grounding.ArgEvidence{Path: path, Status: status, Where: grounding.Evidence{Found: "nowhere", Message: -1, HiddenEntry: -1, HiddenMessage: -1}}
	}
	d := grounding.StoredDecision{Verdict: grounding.VerdictFail, Args: []grounding.ArgEvidence{
		arg("user_id", grounding.StatusLiteral),
		arg("payment_id", grounding.StatusChoice),
		arg("origin", grounding.StatusLiteral),
		arg("nonfree_baggages", grounding.StatusContradiction),
		arg("total_baggages", grounding.StatusWeak),
		arg("insurance", grounding.StatusNormalized),
	}}
	c := checkView(grounding.TrajectoryHeader{}, d, nil)
	var got []string
	for _, a := range c.Args {
		got = append(got, a.Path)
	}
	want := []string{"nonfree_baggages", "payment_id", "total_baggages", "user_id", "origin", "insurance"}
	if !slices.Equal(got, want) {
		t.Errorf("argument order = %v, want %v", got, want)
	}
}
