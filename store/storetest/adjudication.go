package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
)

// Clock is a settable clock for store.DB.SetClock: leases expire when a
// test advances it, never by sleeping. It is safe for concurrent use.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a clock at 2026-03-02 09:00 UTC and installs it on db.
func NewClock(db *store.DB) *Clock {
	c := &Clock{}
	c.ns.Store(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC).UnixNano())
	db.SetClock(c.Now)
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// adjudicationTests are the contract subtests of the adjudication studio.
var adjudicationTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"QueueFromImport", testQueueFromImport},
	{"QueueFilters", testQueueFilters},
	{"ClaimAndVerdict", testClaimAndVerdict},
	{"VerdictRefusals", testVerdictRefusals},
	{"LeaseExpiry", testLeaseExpiry},
	{"SkipAndNotes", testSkipAndNotes},
	{"Undo", testUndo},
	{"UndoPassesOverStaleSkip", testUndoPassesOverStaleSkip},
	{"OverlapAgreeConflictFinal", testOverlapAgreeConflictFinal},
	{"SetOverlapSettles", testSetOverlapSettles},
	{"EnqueueByHand", testEnqueueByHand},
	{"RecheckKeepsQueue", testRecheckKeepsQueue},
	{"NoteOnGoneItem", testNoteOnGoneItem},
	{"RecheckWhileAdjudicating", testRecheckWhileAdjudicating},
	{"LowerOverlapWhileClaimed", testLowerOverlapWhileClaimed},
	{"AgreementStats", testAgreementStats},
	{"AnnotatorWork", testAnnotatorWork},
	{"ConcurrentAnnotators", testConcurrentAnnotators},
	{"ConcurrentDoubleSubmit", testConcurrentDoubleSubmit},
	{"PrioritizeByDeficit", testPrioritizeByDeficit},
	{"QueueCountsUnderChurn", testQueueCountsUnderChurn},
}

// adjPool imports n Ambiguous trajectories as run name and returns the run.
func adjPool(t *testing.T, db *store.DB, name string, n int) grounding.Run {
	t.Helper()
	var ts []*grounding.Trajectory
	for i := range n {
		ts = append(ts, Ambiguous(name, i))
	}
	mustImport(t, db, name, name+".jsonl", ts...)
	return mustRun(t, db, name)
}

func mustUser(t *testing.T, db *store.DB, name, role string) grounding.User {
	t.Helper()
	u, err := db.CreateUser(ctx, name, role, []byte("hash-"+name))
	if err != nil {
		t.Fatalf("CreateUser(%s): %v", name, err)
	}
	return u
}

func mustNext(t *testing.T, db *store.DB, u grounding.User, f grounding.QueueFilter) grounding.Claim {
	t.Helper()
	c, err := db.Next(ctx, u.ID, f, 0)
	if err != nil {
		t.Fatalf("Next(%s) error: %v", u.Name, err)
	}
	return c
}

func mustSubmit(t *testing.T, db *store.DB, u grounding.User, itemID int64, v grounding.Verdict) grounding.SubmitResult {
	t.Helper()
	r, err := db.Submit(ctx, u.ID, itemID, v, "", 0)
	if err != nil {
		t.Fatalf("Submit(%s, item %d, %s) error: %v", u.Name, itemID, v, err)
	}
	return r
}

func decisionOf(t *testing.T, db *store.DB, it grounding.QueueItem) grounding.StoredDecision {
	t.Helper()
	ds, err := db.Decisions(ctx, it.TrajectoryID, it.Ordinal, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("Decisions(%d, %d) = %v, %v", it.TrajectoryID, it.Ordinal, ds, err)
	}
	return ds[0]
}

// checkCounters recomputes a run's and its trajectories' counters from
// their decisions and compares them with the stored ones: settling a
// verdict must keep them exact.
func checkCounters(t *testing.T, db *store.DB, runID int64) {
	t.Helper()
	run, err := db.Run(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var want grounding.Run
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: runID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	withVerdict := map[grounding.Verdict][]string{} // the run page's verdict filter, from the decisions
	for _, s := range page.Rows {
		ds, err := db.Decisions(ctx, s.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var own grounding.TrajectorySummary
		for _, d := range ds {
			switch d.Verdict {
			case grounding.VerdictPass:
				own.Pass++
			case grounding.VerdictFail:
				own.Fail++
			default:
				own.Ambiguous++
			}
			if d.Queued && d.HumanVerdict == "" {
				own.Queued++
			}
			own.Supervised += d.Mask
		}
		own.Certified = s.Success && s.WorkflowOK && own.Supervised > 0
		for v, n := range map[grounding.Verdict]int{grounding.VerdictPass: own.Pass, grounding.VerdictFail: own.Fail, grounding.VerdictAmbiguous: own.Ambiguous} {
			if n > 0 {
				withVerdict[v] = append(withVerdict[v], s.ExtID)
			}
		}
		if own.Pass != s.Pass || own.Fail != s.Fail || own.Ambiguous != s.Ambiguous || own.Queued != s.Queued ||
			own.Supervised != s.Supervised || own.Certified != s.Certified {
			t.Errorf("trajectory %s counters = %d/%d/%d queued %d supervised %d certified %v; decisions say %d/%d/%d, %d, %d, %v",
				s.ExtID, s.Pass, s.Fail, s.Ambiguous, s.Queued, s.Supervised, s.Certified,
				own.Pass, own.Fail, own.Ambiguous, own.Queued, own.Supervised, own.Certified)
		}
		want.Pass += own.Pass
		want.Fail += own.Fail
		want.Ambiguous += own.Ambiguous
		want.Queued += own.Queued
		want.Supervised += own.Supervised
		if own.Certified {
			want.Certified++
		}
	}
	for _, v := range []grounding.Verdict{grounding.VerdictPass, grounding.VerdictFail, grounding.VerdictAmbiguous} {
		got, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: runID, Verdict: string(v), Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range got.Rows {
			ids = append(ids, s.ExtID)
		}
		if !slices.Equal(ids, withVerdict[v]) {
			t.Errorf("trajectories with a %s decision = %q; the decisions say %q", v, ids, withVerdict[v])
		}
	}
	if run.Pass != want.Pass || run.Fail != want.Fail || run.Ambiguous != want.Ambiguous || run.Queued != want.Queued ||
		run.Supervised != want.Supervised || run.Certified != want.Certified {
		t.Errorf("run counters = pass %d fail %d amb %d queued %d supervised %d certified %d; decisions say %d %d %d %d %d %d",
			run.Pass, run.Fail, run.Ambiguous, run.Queued, run.Supervised, run.Certified,
			want.Pass, want.Fail, want.Ambiguous, want.Queued, want.Supervised, want.Certified)
	}
	checkQueueCounts(t, db, runID)
	checkQueueCounts(t, db, 0)
}

// checkQueueCounts compares the progress line's queue figures (kept by
// triggers, migration 00017) for a run, or every run when runID is 0, with
// the items listed state by state.
func checkQueueCounts(t *testing.T, db *store.DB, runID int64) {
	t.Helper()
	var want grounding.Progress
	for _, it := range allQueue(t, db, grounding.QueueFilter{RunID: runID, State: "all", Limit: 500}) {
		want.Items++
		switch it.State {
		case grounding.QueueOpen:
			want.Remaining++
		case grounding.QueueConflict:
			want.Conflicts++
		case grounding.QueueDone:
			want.Done++
		}
	}
	got, err := db.Progress(ctx, 0, grounding.QueueFilter{RunID: runID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Items != want.Items || got.Remaining != want.Remaining || got.Conflicts != want.Conflicts || got.Done != want.Done {
		t.Errorf("run %d progress: %d items, %d open, %d in conflict, %d done; the queue lists %d, %d, %d, %d",
			runID, got.Items, got.Remaining, got.Conflicts, got.Done, want.Items, want.Remaining, want.Conflicts, want.Done)
	}
}

func allQueue(t *testing.T, db *store.DB, f grounding.QueueFilter) []grounding.QueueItem {
	t.Helper()
	var out []grounding.QueueItem
	for range 1000 {
		page, err := db.Queue(ctx, f)
		if err != nil {
			t.Fatalf("Queue(%+v) error: %v", f, err)
		}
		out = append(out, page.Items...)
		if page.Next == "" {
			return out
		}
		f.After = page.Next
	}
	t.Fatal("Queue never ended")
	return nil
}

func testQueueFromImport(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 6)
	items := allQueue(t, db, grounding.QueueFilter{RunID: run.ID, Limit: 4})
	// Trajectories 0, 1, 3, 4 have two queued decisions, 2 and 5 one.
	if len(items) != 10 || run.Queued != 10 {
		t.Fatalf("queue has %d items, run counts %d queued; want 10", len(items), run.Queued)
	}
	for i, it := range items {
		if it.State != grounding.QueueOpen || it.Source != grounding.SourceAuto || it.Required != 1 || it.RunName != "adj" || it.Domain != "airline" {
			t.Errorf("item %d = %+v", i, it)
		}
		if len(it.Why) == 0 || len(it.Args) == 0 {
			t.Errorf("item %d (%s d%d) has no why %v or argument in question %v", i, it.ExtID, it.Ordinal, it.Why, it.Args)
		}
		// The database picks the arguments in question out of the stored
		// evidence; it must pick exactly what grounding.InQuestion would.
		want, _ := json.Marshal(grounding.InQuestion(decisionOf(t, db, it).Args))
		got, _ := json.Marshal(it.Args)
		if string(got) != string(want) {
			t.Errorf("item %d (%s d%d) arguments in question\n got %s\nwant %s", i, it.ExtID, it.Ordinal, got, want)
		}
		if i > 0 {
			p := items[i-1]
			if p.Priority < it.Priority || (p.Priority == it.Priority && p.CreatedAt.After(it.CreatedAt)) {
				t.Errorf("queue order: %d (prio %d) before %d (prio %d)", p.ID, p.Priority, it.ID, it.Priority)
			}
		}
	}
	if items[0].Priority != 2 || items[len(items)-1].Priority != 1 {
		t.Errorf("priorities run %d..%d; want 2 (two queued in the trajectory) down to 1", items[0].Priority, items[len(items)-1].Priority)
	}
	for _, it := range items {
		switch it.Tool {
		case "search_direct_flight":
			if !slices.Contains(it.Why, grounding.ReasonKnowledge) || it.Args[0].Path != "origin" || it.Args[0].Status != grounding.StatusKnowledge {
				t.Errorf("search item why %v args %+v; want vis.knowledge on origin", it.Why, it.Args)
			}
		case "update_reservation_flights":
			if !slices.Contains(it.Why, grounding.ReasonChoice) || it.Args[0].Path != "payment_id" {
				t.Errorf("update item why %v args %+v; want vis.choice on payment_id", it.Why, it.Args)
			}
		default:
			t.Errorf("unexpected item on tool %q", it.Tool)
		}
	}
	_, err := db.Queue(ctx, grounding.QueueFilter{After: "nonsense"})
	wantErr(t, "Queue(bad cursor)", err, grounding.ErrInvalid)
	_, err = db.Queue(ctx, grounding.QueueFilter{State: "weird"})
	wantErr(t, "Queue(bad state)", err, grounding.ErrInvalid)
}

func testQueueFilters(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 6)
	other := adjPool(t, db, "other", 3)
	count := func(f grounding.QueueFilter) int { return len(allQueue(t, db, f)) }
	for _, c := range []struct {
		name string
		f    grounding.QueueFilter
		want int
	}{
		{"all runs", grounding.QueueFilter{}, 15},
		{"run", grounding.QueueFilter{RunID: run.ID}, 10},
		{"other run", grounding.QueueFilter{RunID: other.ID}, 5},
		{"domain", grounding.QueueFilter{RunID: run.ID, Domain: "airline"}, 10},
		{"no such domain", grounding.QueueFilter{RunID: run.ID, Domain: "retail"}, 0},
		{"tool", grounding.QueueFilter{RunID: run.ID, Tool: "update_reservation_flights"}, 6},
		{"reason", grounding.QueueFilter{RunID: run.ID, Reason: grounding.ReasonKnowledge}, 4},
		{"reason and tool", grounding.QueueFilter{Reason: grounding.ReasonKnowledge, Tool: "update_reservation_flights"}, 0},
		{"conflicts", grounding.QueueFilter{State: grounding.QueueConflict}, 0},
		{"any state", grounding.QueueFilter{State: "all"}, 15},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: %d items, want %d", c.name, got, c.want)
		}
		// The review screen's and the queue page's figures count what the
		// list holds: open items matching the filter; all, settled and
		// conflicting items of the filter's run (every run without one).
		if c.f.State != "" {
			continue
		}
		p, err := db.Progress(ctx, 0, c.f)
		if err != nil {
			t.Fatal(err)
		}
		items := count(grounding.QueueFilter{RunID: c.f.RunID, State: "all"})
		if p.Remaining != c.want || p.Items != items || p.Done != 0 || p.Conflicts != 0 || p.MineToday != 0 {
			t.Errorf("%s: progress %+v; want %d remaining of %d items", c.name, p, c.want, items)
		}
		checkStanding(t, db, grounding.User{}, c.f)
	}
	// Next follows the filter too.
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	c := mustNext(t, db, ann, grounding.QueueFilter{RunID: other.ID, Reason: grounding.ReasonChoice})
	if c.Item.RunID != other.ID || c.Item.Tool != "update_reservation_flights" {
		t.Errorf("Next(filtered) = %+v", c.Item)
	}
	p, err := db.Progress(ctx, ann.ID, grounding.QueueFilter{RunID: other.ID})
	if err != nil || p.Remaining != 5 || p.Items != 5 || p.Done != 0 || p.MineToday != 0 {
		t.Errorf("Progress = %+v, %v; want 5 remaining of 5", p, err)
	}

	// A decision's own item: Next claims exactly it, giving up the claim
	// the annotator held; taken by someone else (k = 1), it is not offered.
	items := allQueue(t, db, grounding.QueueFilter{RunID: run.ID})
	last := items[len(items)-1] // the queue's last: never what Next would pick
	at := &grounding.DecisionRef{TrajectoryID: last.TrajectoryID, Ordinal: last.Ordinal}
	got := mustNext(t, db, ann, grounding.QueueFilter{Decision: at})
	if got.Item.ID != last.ID {
		t.Errorf("Next(decision %d of trajectory %d) claimed item %d, want %d", at.Ordinal, at.TrajectoryID, got.Item.ID, last.ID)
	}
	if it, _ := db.QueueItem(ctx, c.Item.ID); it.Holders != 0 {
		t.Errorf("item %d still held by %d after its annotator took another", c.Item.ID, it.Holders)
	}
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	if c, err := db.Next(ctx, bob.ID, grounding.QueueFilter{Decision: at}, 0); !errors.Is(err, grounding.ErrNotFound) {
		t.Errorf("Next(a decision ann holds) for bob = item %d, %v; want ErrNotFound", c.Item.ID, err)
	}
	if c := mustNext(t, db, bob, grounding.QueueFilter{RunID: run.ID}); c.Item.ID == last.ID {
		t.Errorf("bob was handed the item ann holds")
	}
}

func testClaimAndVerdict(t *testing.T, db *store.DB) {
	clock := NewClock(db)
	run := adjPool(t, db, "adj", 3)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}

	c := mustNext(t, db, ann, f)
	if c.UserID != ann.ID || !c.ExpiresAt.Equal(clock.Now().Add(store.DefaultLease)) || c.Item.Holders != 1 {
		t.Errorf("Next = %+v; want a 15-minute lease held by ann", c)
	}
	// The queue list counts the live claim as a holder, on that item only.
	for _, it := range allQueue(t, db, f) {
		if want := map[bool]int{true: 1, false: 0}[it.ID == c.Item.ID]; it.Holders != want || it.Verdicts != 0 {
			t.Errorf("queue lists item %d with %d holders, %d verdicts; want %d, 0", it.ID, it.Holders, it.Verdicts, want)
		}
	}
	// A reload moments later returns the same claim; the lease stands.
	clock.Advance(10 * time.Second)
	if soon := mustNext(t, db, ann, f); soon.Item.ID != c.Item.ID || !soon.ExpiresAt.Equal(c.ExpiresAt) ||
		!reflect.DeepEqual(soon.Item, c.Item) || !soon.ClaimedAt.Equal(c.ClaimedAt) {
		t.Errorf("Next 10 s later = item %d expires %v; want item %d, lease unchanged (%v)", soon.Item.ID, soon.ExpiresAt, c.Item.ID, c.ExpiresAt)
	}
	// Asking again a minute after the claim returns it renewed.
	clock.Advance(50 * time.Second)
	again := mustNext(t, db, ann, f)
	if again.Item.ID != c.Item.ID || !again.ExpiresAt.Equal(clock.Now().Add(store.DefaultLease)) || !again.ClaimedAt.Equal(c.ClaimedAt) {
		t.Errorf("Next again = item %d expires %v claimed %v; want item %d renewed", again.Item.ID, again.ExpiresAt, again.ClaimedAt, c.Item.ID)
	}
	// Another annotator gets another item (k = 1).
	cb := mustNext(t, db, bob, f)
	if cb.Item.ID == c.Item.ID {
		t.Fatalf("bob was handed ann's item %d", c.Item.ID)
	}

	before := decisionOf(t, db, c.Item)
	if before.Verdict != grounding.VerdictAmbiguous || before.Mask != 0 || !before.Queued {
		t.Fatalf("decision before = %+v", before)
	}
	res := mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
	if res.Repeated || res.State != grounding.QueueDone || res.Human != grounding.VerdictPass || res.Event.Kind != grounding.EventVerdict {
		t.Errorf("Submit = %+v", res)
	}
	after := decisionOf(t, db, c.Item)
	if after.HumanVerdict != grounding.VerdictPass || after.Verdict != grounding.VerdictPass || after.Mask != 1 || after.AutoVerdict != grounding.VerdictAmbiguous {
		t.Errorf("decision after pass = human %q verdict %q mask %d auto %q", after.HumanVerdict, after.Verdict, after.Mask, after.AutoVerdict)
	}
	checkCounters(t, db, run.ID)
	r2 := mustRun(t, db, "adj")
	if r2.Queued != run.Queued-1 || r2.Supervised != run.Supervised+1 || r2.Ambiguous != run.Ambiguous-1 || r2.Pass != run.Pass+1 {
		t.Errorf("run after one pass: %+v (before %+v)", r2, run)
	}

	// A double click: the same verdict again records nothing.
	rep := mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
	if !rep.Repeated || rep.Event.ID != res.Event.ID {
		t.Errorf("second Submit = %+v; want Repeated with event %d", rep, res.Event.ID)
	}
	// A stale tab with the other verdict: still nothing recorded.
	rep, err := db.Submit(ctx, ann.ID, c.Item.ID, grounding.VerdictFail, "", 0)
	if err != nil || !rep.Repeated || rep.Event.Verdict != grounding.VerdictPass {
		t.Errorf("stale Submit(fail) = %+v, %v; want the standing pass, Repeated", rep, err)
	}
	h, err := db.History(ctx, c.Item.TrajectoryID, c.Item.Ordinal)
	if err != nil || h.Item == nil || h.Item.State != grounding.QueueDone || len(h.Events) != 1 {
		t.Fatalf("History = %+v, %v; want one event on a done item", h, err)
	}
	e := h.Events[0]
	if e.UserName != "ann" || e.Verdict != grounding.VerdictPass || e.PrevVerdict != "" || !e.CreatedAt.Equal(clock.Now()) {
		t.Errorf("event = %+v", e)
	}

	// Fail on bob's item masks it.
	mustSubmit(t, db, bob, cb.Item.ID, grounding.VerdictFail)
	d := decisionOf(t, db, cb.Item)
	if d.HumanVerdict != grounding.VerdictFail || d.Verdict != grounding.VerdictFail || d.Mask != 0 {
		t.Errorf("decision after fail = %+v", d)
	}
	checkCounters(t, db, run.ID)

	// The next Next hands a fresh item, never a judged one.
	n := mustNext(t, db, ann, f)
	if n.Item.ID == c.Item.ID || n.Item.ID == cb.Item.ID {
		t.Errorf("Next after verdict = item %d, already judged", n.Item.ID)
	}
	p, err := db.Progress(ctx, ann.ID, f)
	if err != nil || p.MineToday != 1 || p.Done != 2 || p.Items != 5 || p.Remaining != 3 || p.Yours != 3 {
		t.Errorf("Progress = %+v, %v; want mine 1, done 2 of 5, 3 remaining, all 3 left for ann", p, err)
	}
	// Drain: everyone ends with ErrNotFound once nothing is left.
	for {
		c, err := db.Next(ctx, ann.ID, f, 0)
		if errors.Is(err, grounding.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
	}
	_, err = db.Next(ctx, bob.ID, f, 0)
	wantErr(t, "Next on an empty queue", err, grounding.ErrNotFound)
	checkCounters(t, db, run.ID)
	if r := mustRun(t, db, "adj"); r.Queued != 0 {
		t.Errorf("run still counts %d queued", r.Queued)
	}
}

func testVerdictRefusals(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 2)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	c := mustNext(t, db, ann, f)

	_, err := db.Submit(ctx, bob.ID, c.Item.ID, grounding.VerdictPass, "", 0)
	wantErr(t, "Submit on an item not claimed", err, grounding.ErrNotClaimed)
	wantErr(t, "Submit on an item not claimed", err, grounding.ErrConflict)
	_, err = db.Submit(ctx, ann.ID, c.Item.ID, "ambiguous", "", 0)
	wantErr(t, "Submit(ambiguous)", err, grounding.ErrInvalid)
	_, err = db.Submit(ctx, ann.ID, 99999, grounding.VerdictPass, "", 0)
	wantErr(t, "Submit on an unknown item", err, grounding.ErrNotFound)
	_, err = db.Renew(ctx, bob.ID, c.Item.ID, 0)
	wantErr(t, "Renew by a non-holder", err, grounding.ErrNotClaimed)

	// Taking another item releases the first: a stale tab on it is refused.
	if _, err := db.Next(ctx, ann.ID, grounding.QueueFilter{RunID: run.ID, Tool: "search_direct_flight"}, 0); err != nil {
		t.Fatal(err)
	}
	if c.Item.Tool != "search_direct_flight" {
		_, err = db.Submit(ctx, ann.ID, c.Item.ID, grounding.VerdictPass, "", 0)
		wantErr(t, "Submit after taking another item", err, grounding.ErrNotClaimed)
	}
	h, err := db.History(ctx, c.Item.TrajectoryID, c.Item.Ordinal)
	if err != nil || len(h.Events) != 0 {
		t.Errorf("refused verdicts left events: %+v, %v", h.Events, err)
	}
	_, err = db.History(ctx, c.Item.TrajectoryID, 999)
	wantErr(t, "History(unknown decision)", err, grounding.ErrNotFound)
}

func testLeaseExpiry(t *testing.T, db *store.DB) {
	clock := NewClock(db)
	// One trajectory with the airports named: a single queued item.
	mustImport(t, db, "one", "one.jsonl", Ambiguous("one", 2))
	run := mustRun(t, db, "one")
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	cy := mustUser(t, db, "cy", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}

	c := mustNext(t, db, ann, f)
	_, err := db.Next(ctx, bob.ID, f, 0)
	wantErr(t, "Next while the only item is held", err, grounding.ErrNotFound)

	// Activity renews the lease.
	clock.Advance(10 * time.Minute)
	exp, err := db.Renew(ctx, ann.ID, c.Item.ID, 0)
	if err != nil || !exp.Equal(clock.Now().Add(store.DefaultLease)) {
		t.Fatalf("Renew = %v, %v", exp, err)
	}
	clock.Advance(10 * time.Minute) // 20 minutes after the claim, 10 after the renewal
	_, err = db.Next(ctx, bob.ID, f, 0)
	wantErr(t, "Next while the renewed item is held", err, grounding.ErrNotFound)

	// Expired, and nobody took it: ann's late verdict still counts.
	clock.Advance(6 * time.Minute)
	res, err := db.Submit(ctx, ann.ID, c.Item.ID, grounding.VerdictFail, "", 0)
	if err != nil || res.State != grounding.QueueDone {
		t.Fatalf("late Submit with the slot still free = %+v, %v", res, err)
	}

	// A second item: a lead sends a decision to the queue.
	lead := mustUser(t, db, "lea", grounding.RoleResearcher)
	it, _, err := db.Enqueue(ctx, lead.ID, c.Item.TrajectoryID, 0, "check the user id")
	if err != nil {
		t.Fatal(err)
	}
	cb := mustNext(t, db, bob, f)
	if cb.Item.ID != it.ID {
		t.Fatalf("bob got %d, want the enqueued %d", cb.Item.ID, it.ID)
	}
	clock.Advance(store.DefaultLease + time.Second)
	// The lease ran out: the queue list no longer counts bob as a holder.
	for _, li := range allQueue(t, db, f) {
		if li.ID == it.ID && li.Holders != 0 {
			t.Errorf("queue lists item %d with %d holders after bob's lease ran out, want 0", li.ID, li.Holders)
		}
	}
	// The lease ran out: the item is back in the queue for cy.
	cc := mustNext(t, db, cy, f)
	if cc.Item.ID != it.ID {
		t.Fatalf("after expiry cy got %d, want %d", cc.Item.ID, it.ID)
	}
	_, err = db.Submit(ctx, bob.ID, it.ID, grounding.VerdictPass, "", 0)
	wantErr(t, "Submit on an expired claim taken by another", err, grounding.ErrClaimExpired)
	_, err = db.Renew(ctx, bob.ID, it.ID, 0)
	wantErr(t, "Renew of an expired claim taken by another", err, grounding.ErrClaimExpired)
	mustSubmit(t, db, cy, it.ID, grounding.VerdictPass)
	h, _ := db.History(ctx, it.TrajectoryID, it.Ordinal)
	verdicts := 0
	for _, e := range h.Events {
		if e.Kind == grounding.EventVerdict {
			verdicts++
			if e.UserID != cy.ID {
				t.Errorf("verdict by %s recorded", e.UserName)
			}
		}
	}
	if verdicts != 1 {
		t.Errorf("%d verdicts recorded, want cy's only", verdicts)
	}
	// Bob's expired claim is swept; cy's and ann's judged ones stay.
	n, err := db.ReleaseExpired(ctx)
	if err != nil || n != 1 {
		t.Errorf("ReleaseExpired = %d, %v; want 1", n, err)
	}
}

func testSkipAndNotes(t *testing.T, db *store.DB) {
	mustImport(t, db, "one", "one.jsonl", Ambiguous("one", 2))
	run := mustRun(t, db, "one")
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	c := mustNext(t, db, ann, f)

	e, rep, err := db.AddNote(ctx, ann.ID, c.Item.ID, "  three cards, the user never picked one  ")
	if err != nil || rep || e.Note != "three cards, the user never picked one" || e.Kind != grounding.EventNote {
		t.Fatalf("AddNote = %+v, %v, %v", e, rep, err)
	}
	e2, rep, err := db.AddNote(ctx, ann.ID, c.Item.ID, "three cards, the user never picked one")
	if err != nil || !rep || e2.ID != e.ID {
		t.Errorf("AddNote twice = %+v, %v, %v; want the first, Repeated", e2, rep, err)
	}
	_, _, err = db.AddNote(ctx, ann.ID, c.Item.ID, "   ")
	wantErr(t, "AddNote(blank)", err, grounding.ErrInvalid)

	if err := db.Skip(ctx, ann.ID, c.Item.ID); err != nil {
		t.Fatalf("Skip: %v", err)
	}
	if err := db.Skip(ctx, ann.ID, c.Item.ID); err != nil {
		t.Errorf("Skip twice: %v", err)
	}
	_, err = db.Submit(ctx, ann.ID, c.Item.ID, grounding.VerdictPass, "", 0)
	wantErr(t, "Submit after skip", err, grounding.ErrNotClaimed)
	_, err = db.Next(ctx, ann.ID, f, 0)
	wantErr(t, "Next for the annotator who skipped the only item", err, grounding.ErrNotFound)
	// The skipped item is still open, but no longer left for ann.
	for _, c := range []struct {
		who   grounding.User
		yours int
	}{{ann, 0}, {bob, 1}} {
		p, err := db.Progress(ctx, c.who.ID, f)
		if err != nil || p.Remaining != 1 || p.Yours != c.yours {
			t.Errorf("Progress(%s) after ann's skip = %+v, %v; want 1 open, %d left for them", c.who.Name, p, err, c.yours)
		}
		checkStanding(t, db, c.who, f)
	}
	// ann takes the skip back (u): the item is hers again.
	skipped := checkStanding(t, db, ann, f)
	if skipped.Kind != grounding.EventSkip || skipped.ItemID != c.Item.ID || skipped.ExtID == "" {
		t.Fatalf("after a skip, Standing offers to undo %+v; want the skip of item %d", skipped, c.Item.ID)
	}
	back, err := db.Undo(ctx, ann.ID, skipped.ID, 0)
	if err != nil || back.UndoneKind != grounding.EventSkip || back.Undoes != skipped.ID {
		t.Fatalf("Undo of the skip = %+v, %v", back, err)
	}
	if again := mustNext(t, db, ann, f); again.Item.ID != c.Item.ID {
		t.Errorf("after taking the skip back ann is given %d, want %d", again.Item.ID, c.Item.ID)
	}
	if p, _ := db.Progress(ctx, ann.ID, f); p.Yours != 1 {
		t.Errorf("after taking the skip back: %+v, want the item left for ann", p)
	}
	_, err = db.Undo(ctx, ann.ID, skipped.ID, 0)
	wantErr(t, "Undo of the skip twice", err, grounding.ErrNothingToUndo)
	// Skipped again, and bob takes the only slot: the skip stays, and it
	// is no longer offered.
	if err := db.Skip(ctx, ann.ID, c.Item.ID); err != nil {
		t.Fatal(err)
	}
	skipped2 := checkStanding(t, db, ann, f)
	if skipped2.Kind != grounding.EventSkip || skipped2.ID == skipped.ID {
		t.Fatalf("after the second skip Standing offers %+v", skipped2)
	}
	cb := mustNext(t, db, bob, f)
	if cb.Item.ID != c.Item.ID {
		t.Errorf("bob got %d, want the skipped %d", cb.Item.ID, c.Item.ID)
	}
	if e := checkStanding(t, db, ann, f); e.ID != 0 {
		t.Errorf("a skip whose slot bob holds is still offered: %+v", e)
	}
	_, err = db.Undo(ctx, ann.ID, skipped2.ID, 0)
	wantErr(t, "Undo of a skip whose slot bob holds", err, grounding.ErrSkipTaken)
	_, err = db.Undo(ctx, ann.ID, 0, 0)
	wantErr(t, "Undo with only a stale skip", err, grounding.ErrNothingToUndo)
	err = db.Skip(ctx, ann.ID, 12345)
	wantErr(t, "Skip(unknown item)", err, grounding.ErrNotFound)
	h, _ := db.History(ctx, c.Item.TrajectoryID, c.Item.Ordinal)
	kinds := []string{}
	for _, e := range h.Events {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, []string{grounding.EventNote, grounding.EventSkip, grounding.EventUndo, grounding.EventSkip}) {
		t.Errorf("history kinds = %v; want note, skip, undo, skip", kinds)
	}
	// The review screen shows each annotator their own notes, and only those.
	if _, _, err := db.AddNote(ctx, bob.ID, c.Item.ID, "bob's note"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.AddNote(ctx, ann.ID, c.Item.ID, "a second look"); err != nil {
		t.Fatal(err)
	}
	// A note sent with a verdict is one of its author's notes too.
	if _, err := db.Submit(ctx, bob.ID, c.Item.ID, grounding.VerdictPass, "bob's call", 0); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		user grounding.User
		want []string
	}{{ann, []string{"three cards, the user never picked one", "a second look"}}, {bob, []string{"bob's note", "bob's call"}}} {
		notes, err := db.NotesBy(ctx, tt.user.ID, c.Item.TrajectoryID, c.Item.Ordinal)
		var got []string
		for _, e := range notes {
			got = append(got, e.Note)
			if (e.Kind != grounding.EventNote && e.Kind != grounding.EventVerdict) || e.UserID != tt.user.ID || e.UserName != tt.user.Name {
				t.Errorf("NotesBy(%s) event %+v", tt.user.Name, e)
			}
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("NotesBy(%s) = %q, %v; want %q", tt.user.Name, got, err, tt.want)
		}
	}
	if notes, err := db.NotesBy(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal+1); err != nil || len(notes) != 0 {
		t.Errorf("NotesBy(another decision) = %+v, %v; want none", notes, err)
	}
}

// checkStanding checks that Standing's progress is Progress's, and
// returns the event it offers to undo (zero for none).
func checkStanding(t *testing.T, db *store.DB, u grounding.User, f grounding.QueueFilter) grounding.VerdictEvent {
	t.Helper()
	p, last, err := db.Standing(ctx, u.ID, f)
	if err != nil {
		t.Fatalf("Standing: %v", err)
	}
	if want, err := db.Progress(ctx, u.ID, f); err != nil || p != want {
		t.Errorf("Standing progress = %+v, Progress = %+v, %v", p, want, err)
	}
	if last == nil {
		return grounding.VerdictEvent{}
	}
	return *last
}

// A skip that can no longer be taken back (its item went to someone else)
// is passed over: u undoes the verdict before it.
func testUndoPassesOverStaleSkip(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 2)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	c1 := mustNext(t, db, ann, f)
	pass := mustSubmit(t, db, ann, c1.Item.ID, grounding.VerdictPass)
	c2 := mustNext(t, db, ann, f)
	if err := db.Skip(ctx, ann.ID, c2.Item.ID); err != nil {
		t.Fatal(err)
	}
	if cb := mustNext(t, db, bob, f); cb.Item.ID != c2.Item.ID {
		t.Fatalf("bob got %d, want ann's skipped %d", cb.Item.ID, c2.Item.ID)
	}
	if e := checkStanding(t, db, ann, f); e.ID != pass.Event.ID {
		t.Errorf("Standing offers %+v; want the pass %d before the stale skip", e, pass.Event.ID)
	}
	if u, err := db.Undo(ctx, ann.ID, pass.Event.ID, 0); err != nil || u.Undoes != pass.Event.ID {
		t.Errorf("Undo of the pass behind a stale skip = %+v, %v", u, err)
	}
}

func testUndo(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 3)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}

	_, err := db.Undo(ctx, ann.ID, 0, 0)
	wantErr(t, "Undo with nothing done", err, grounding.ErrNothingToUndo)
	if e := checkStanding(t, db, ann, f); e.ID != 0 {
		t.Errorf("last undoable before any verdict = %+v", e)
	}

	c1 := mustNext(t, db, ann, f)
	r1 := mustSubmit(t, db, ann, c1.Item.ID, grounding.VerdictPass)
	c2 := mustNext(t, db, ann, f)
	r2 := mustSubmit(t, db, ann, c2.Item.ID, grounding.VerdictFail)
	c3 := mustNext(t, db, ann, f) // now holding a third item
	if p, _ := db.Progress(ctx, ann.ID, f); p.MineToday != 2 || p.Done != 2 {
		t.Errorf("progress before undo = %+v", p)
	}
	if e := checkStanding(t, db, ann, f); e.ID != r2.Event.ID || e.ItemID != c2.Item.ID || e.Ordinal != c2.Item.Ordinal ||
		e.ExtID != c2.Item.ExtID || e.ExtID == "" || e.Kind != grounding.EventVerdict || e.Verdict != grounding.VerdictFail {
		t.Fatalf("Standing offers %+v; want the fail on item %d (event %d)", e, c2.Item.ID, r2.Event.ID)
	}

	u, err := db.Undo(ctx, ann.ID, r2.Event.ID, 0)
	if err != nil {
		t.Fatalf("Undo: %v", err)
	}
	if u.Kind != grounding.EventUndo || u.Undoes != r2.Event.ID || u.PrevVerdict != grounding.VerdictFail || u.Verdict != "" {
		t.Errorf("undo event = %+v", u)
	}
	d := decisionOf(t, db, c2.Item)
	if d.HumanVerdict != "" || d.Verdict != grounding.VerdictAmbiguous || d.Mask != 0 {
		t.Errorf("decision after undo = human %q verdict %q mask %d; want the automatic ambiguous back", d.HumanVerdict, d.Verdict, d.Mask)
	}
	checkCounters(t, db, run.ID)
	// The undone item is the annotator's again; the third item is released.
	again := mustNext(t, db, ann, f)
	if again.Item.ID != c2.Item.ID || again.Item.State != grounding.QueueOpen {
		t.Errorf("Next after undo = item %d (%s), want %d back", again.Item.ID, again.Item.State, c2.Item.ID)
	}
	if it, _ := db.QueueItem(ctx, c3.Item.ID); it.Holders != 0 {
		t.Errorf("the item held before the undo still has %d holders", it.Holders)
	}
	if p, _ := db.Progress(ctx, ann.ID, f); p.MineToday != 1 || p.Done != 1 {
		t.Errorf("progress after undo = %+v; want mine 1, done 1", p)
	}
	if e := checkStanding(t, db, ann, f); e.ID != r1.Event.ID {
		t.Errorf("after the undo Standing offers %+v, want the first verdict %d", e, r1.Event.ID)
	}
	// The same undo again (a double press, a stale tab) records nothing.
	_, err = db.Undo(ctx, ann.ID, r2.Event.ID, 0)
	wantErr(t, "Undo of an undone event", err, grounding.ErrNothingToUndo)
	// Judge again, then undo without naming the event: the latest goes.
	r3 := mustSubmit(t, db, ann, c2.Item.ID, grounding.VerdictPass)
	if _, err := db.Undo(ctx, ann.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, ann.ID, 0, 0); err != nil { // then r1
		t.Fatal(err)
	}
	if e := checkStanding(t, db, ann, f); e.ID != 0 {
		t.Errorf("with every verdict undone Standing offers %+v", e)
	}
	d1 := decisionOf(t, db, c1.Item)
	if d1.HumanVerdict != "" || d1.Mask != 0 {
		t.Errorf("first decision after undoing it = %+v", d1)
	}
	h, _ := db.History(ctx, c2.Item.TrajectoryID, c2.Item.Ordinal)
	var kinds []string
	for _, e := range h.Events {
		kinds = append(kinds, e.Kind+":"+string(e.Verdict))
	}
	want := []string{"verdict:fail", "undo:", "verdict:pass", "undo:"}
	if !slices.Equal(kinds, want) {
		t.Errorf("history = %v, want %v (undo appends, never deletes)", kinds, want)
	}
	_ = r1
	_ = r3
	checkCounters(t, db, run.ID)
}

func testOverlapAgreeConflictFinal(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 1) // two items
	if err := db.SetOverlap(ctx, run.ID, 2); err != nil {
		t.Fatal(err)
	}
	if k, err := db.Overlap(ctx, run.ID); err != nil || k != 2 {
		t.Fatalf("Overlap = %d, %v", k, err)
	}
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	cy := mustUser(t, db, "cy", grounding.RoleAnnotator)
	lea := mustUser(t, db, "lea", grounding.RoleResearcher)
	f := grounding.QueueFilter{RunID: run.ID}

	ca := mustNext(t, db, ann, f)
	cb := mustNext(t, db, bob, f)
	if ca.Item.ID != cb.Item.ID || ca.Item.Required != 2 {
		t.Fatalf("with k=2 the best item goes to both: ann %d, bob %d (required %d)", ca.Item.ID, cb.Item.ID, ca.Item.Required)
	}
	cc := mustNext(t, db, cy, f)
	if cc.Item.ID == ca.Item.ID {
		t.Fatal("a third annotator was handed an item already held by k=2")
	}
	// One verdict of two: nothing decided, and nothing shown.
	r := mustSubmit(t, db, ann, ca.Item.ID, grounding.VerdictPass)
	if r.State != grounding.QueueOpen || r.Human != "" || r.Closed {
		t.Errorf("first of two verdicts = %+v", r)
	}
	if d := decisionOf(t, db, ca.Item); d.HumanVerdict != "" || d.Mask != 0 {
		t.Errorf("decision after one of two verdicts = %+v", d)
	}
	// Both items are open; ann's verdict takes one out of what is left for
	// her, not for bob (and not for her under a filter that excludes it).
	for _, c := range []struct {
		who   grounding.User
		f     grounding.QueueFilter
		yours int
	}{{ann, f, 1}, {bob, f, 2}, {ann, grounding.QueueFilter{}, 1}, {ann, grounding.QueueFilter{RunID: run.ID, Tool: "no_such_tool"}, 0}} {
		p, err := db.Progress(ctx, c.who.ID, c.f)
		if err != nil || p.Yours != c.yours || p.Remaining < p.Yours {
			t.Errorf("Progress(%s, %+v) after one of two verdicts = %+v, %v; want %d left for them", c.who.Name, c.f, p, err, c.yours)
		}
		checkStanding(t, db, c.who, c.f)
	}
	// Agreement settles.
	r = mustSubmit(t, db, bob, ca.Item.ID, grounding.VerdictPass)
	if r.State != grounding.QueueDone || r.Human != grounding.VerdictPass || !r.Closed {
		t.Errorf("two agreeing verdicts = %+v", r)
	}
	// A round closed with others' verdicts is nobody's to undo: bob knows
	// now that ann agreed, and ann that bob did.
	for _, who := range []grounding.User{bob, ann} {
		if e := checkStanding(t, db, who, f); e.ID != 0 {
			t.Errorf("%s is offered to undo %+v in a round closed with another's verdict", who.Name, e)
		}
		_, err := db.Undo(ctx, who.ID, 0, 0)
		wantErr(t, who.Name+"'s Undo in an agreed round", err, grounding.ErrRoundClosed)
	}
	d := decisionOf(t, db, ca.Item)
	if d.HumanVerdict != grounding.VerdictPass || d.Mask != 1 {
		t.Errorf("agreed decision = %+v", d)
	}
	// The other item: cy and ann disagree.
	cn := mustNext(t, db, ann, f)
	if cn.Item.ID != cc.Item.ID {
		t.Fatalf("ann got %d, want %d", cn.Item.ID, cc.Item.ID)
	}
	mustSubmit(t, db, cy, cc.Item.ID, grounding.VerdictFail)
	r = mustSubmit(t, db, ann, cc.Item.ID, grounding.VerdictPass)
	if r.State != grounding.QueueConflict || r.Human != "" || !r.Closed {
		t.Fatalf("disagreeing verdicts = %+v; want conflict", r)
	}
	// Undoing it would let ann learn cy's verdict and vote it: the
	// conflict must reach a lead.
	_, err := db.Undo(ctx, ann.ID, 0, 0)
	wantErr(t, "Undo of the verdict that made a conflict", err, grounding.ErrRoundClosed)
	if it, _ := db.QueueItem(ctx, cc.Item.ID); it.State != grounding.QueueConflict {
		t.Errorf("after a refused undo the item is %s, want conflict", it.State)
	}
	if _, _, err := db.AddNote(ctx, cy.ID, cc.Item.ID, "the user never picked a card"); err != nil {
		t.Fatal(err)
	}
	cs, err := db.Conflicts(ctx, f)
	if err != nil || len(cs) != 1 || cs[0].Item.ID != cc.Item.ID || len(cs[0].Verdicts) != 2 || len(cs[0].Notes) != 1 {
		t.Fatalf("Conflicts = %+v, %v", cs, err)
	}
	if p, _ := db.Progress(ctx, lea.ID, f); p.Conflicts != 1 || p.Done != 1 || p.Remaining != 0 {
		t.Errorf("progress with a conflict = %+v", p)
	}
	// An annotator's "all" leaves the conflict out.
	all := f
	all.State = "all"
	n := len(allQueue(t, db, all))
	all.NoConflicts = true
	for _, it := range allQueue(t, db, all) {
		if it.State == grounding.QueueConflict {
			t.Errorf("Queue(all, NoConflicts) lists item %d in conflict", it.ID)
		}
		n--
	}
	if n != 1 {
		t.Errorf("NoConflicts left out %d items, want the 1 conflict", n)
	}
	// The lead settles it, with a reason.
	_, err = db.Finalize(ctx, lea.ID, cc.Item.ID, grounding.VerdictFail, " ")
	wantErr(t, "Finalize without a reason", err, grounding.ErrInvalid)
	_, err = db.Finalize(ctx, lea.ID, ca.Item.ID, grounding.VerdictFail, "no")
	wantErr(t, "Finalize of an agreed item", err, grounding.ErrNotConflict)
	fr, err := db.Finalize(ctx, lea.ID, cc.Item.ID, grounding.VerdictFail, "three visible cards; nothing picked 2140")
	if err != nil || fr.State != grounding.QueueDone || fr.Human != grounding.VerdictFail || fr.Event.Kind != grounding.EventFinal {
		t.Fatalf("Finalize = %+v, %v", fr, err)
	}
	again, err := db.Finalize(ctx, lea.ID, cc.Item.ID, grounding.VerdictFail, "three visible cards; nothing picked 2140")
	if err != nil || !again.Repeated || again.Event.ID != fr.Event.ID {
		t.Errorf("Finalize twice = %+v, %v; want Repeated", again, err)
	}
	d = decisionOf(t, db, cc.Item)
	if d.HumanVerdict != grounding.VerdictFail || d.Verdict != grounding.VerdictFail || d.Mask != 0 {
		t.Errorf("finalized decision = %+v", d)
	}
	checkCounters(t, db, run.ID)
	if e := checkStanding(t, db, lea, f); e.ID != fr.Event.ID || e.Kind != grounding.EventFinal || e.Verdict != grounding.VerdictFail {
		t.Errorf("the lead is offered to undo %+v, want the final verdict %d", e, fr.Event.ID)
	}
	// An annotator cannot undo under a final verdict; the lead can.
	_, err = db.Undo(ctx, ann.ID, 0, 0)
	wantErr(t, "annotator Undo under a final verdict", err, grounding.ErrFinalized)
	if _, err := db.Undo(ctx, lea.ID, fr.Event.ID, 0); err != nil {
		t.Fatalf("lead Undo of the final: %v", err)
	}
	if it, _ := db.QueueItem(ctx, cc.Item.ID); it.State != grounding.QueueConflict {
		t.Errorf("after undoing the final the item is %s, want conflict", it.State)
	}
	if d := decisionOf(t, db, cc.Item); d.HumanVerdict != "" {
		t.Errorf("after undoing the final the decision keeps %q", d.HumanVerdict)
	}
	_, err = db.Undo(ctx, ann.ID, 0, 0)
	wantErr(t, "annotator Undo in a conflict again", err, grounding.ErrRoundClosed)
	checkCounters(t, db, run.ID)
	err = db.SetOverlap(ctx, run.ID, 0)
	wantErr(t, "SetOverlap(0)", err, grounding.ErrInvalid)
	err = db.SetOverlap(ctx, 4242, 2)
	wantErr(t, "SetOverlap(unknown run)", err, grounding.ErrNotFound)
}

func testSetOverlapSettles(t *testing.T, db *store.DB) {
	mustImport(t, db, "one", "one.jsonl", Ambiguous("one", 2))
	run := mustRun(t, db, "one")
	if err := db.SetOverlap(ctx, run.ID, 3); err != nil {
		t.Fatal(err)
	}
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	c := mustNext(t, db, ann, f)
	mustNext(t, db, bob, f)
	mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
	mustSubmit(t, db, bob, c.Item.ID, grounding.VerdictPass)
	if it, _ := db.QueueItem(ctx, c.Item.ID); it.State != grounding.QueueOpen || it.Verdicts != 2 {
		t.Fatalf("two of three = %+v", it)
	}
	// Lowering k to 2 settles the item that already has two agreeing.
	if err := db.SetOverlap(ctx, run.ID, 2); err != nil {
		t.Fatal(err)
	}
	it, _ := db.QueueItem(ctx, c.Item.ID)
	if it.State != grounding.QueueDone || it.Required != 2 || it.Human != grounding.VerdictPass {
		t.Errorf("after lowering k: %+v", it)
	}
	checkCounters(t, db, run.ID)
}

// testLowerOverlapWhileClaimed: k goes from 3 to 1 while three annotators
// hold an item; they then submit at once. Exactly one verdict lands, the
// others are refused as closed, and the item is settled by it.
func testLowerOverlapWhileClaimed(t *testing.T, db *store.DB) {
	for round := range 5 {
		name := fmt.Sprintf("low%d", round)
		mustImport(t, db, name, name+".jsonl", Ambiguous(name, 2))
		run := mustRun(t, db, name)
		if err := db.SetOverlap(ctx, run.ID, 3); err != nil {
			t.Fatal(err)
		}
		f := grounding.QueueFilter{RunID: run.ID}
		var users []grounding.User
		var item int64
		for i := range 3 {
			u := mustUser(t, db, fmt.Sprintf("%s-%d", name, i), grounding.RoleAnnotator)
			users = append(users, u)
			c := mustNext(t, db, u, f)
			if i > 0 && c.Item.ID != item {
				t.Fatalf("annotator %d got item %d, want the shared %d", i, c.Item.ID, item)
			}
			item = c.Item.ID
		}
		if err := db.SetOverlap(ctx, run.ID, 1); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		results := make([]error, len(users))
		for i, u := range users {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, results[i] = db.Submit(ctx, u.ID, item, grounding.VerdictPass, "", 0)
			}()
		}
		wg.Wait()
		accepted := 0
		for i, err := range results {
			switch {
			case err == nil:
				accepted++
			case !errors.Is(err, grounding.ErrItemClosed) && !errors.Is(err, grounding.ErrConflict):
				t.Errorf("round %d: annotator %d: %v", round, i, err)
			}
		}
		it, err := db.QueueItem(ctx, item)
		if err != nil {
			t.Fatal(err)
		}
		if accepted != 1 || it.Verdicts != 1 || it.State != grounding.QueueDone {
			t.Errorf("round %d: %d verdicts accepted, item has %d and is %s; want exactly one, done", round, accepted, it.Verdicts, it.State)
		}
		checkCounters(t, db, run.ID)
	}
}

func testEnqueueByHand(t *testing.T, db *store.DB) {
	clock := NewClock(db)
	run := adjPool(t, db, "adj", 2)
	lea := mustUser(t, db, "lea", grounding.RoleResearcher)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	tr := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: run.ID})
	h, err := db.TrajectoryByExtID(ctx, run.ID, tr[0])
	if err != nil {
		t.Fatal(err)
	}
	// Decision 0 (get_user_details) passed automatically.
	it, created, err := db.Enqueue(ctx, lea.ID, h.ID, 0, "is the user id really visible?")
	if err != nil || !created || it.Source != grounding.SourceManual || it.Note != "is the user id really visible?" || it.State != grounding.QueueOpen {
		t.Fatalf("Enqueue = %+v, %v, %v", it, created, err)
	}
	items := allQueue(t, db, f)
	if items[0].ID != it.ID {
		t.Errorf("the manual item is not first: %d, want %d", items[0].ID, it.ID)
	}
	same, created, err := db.Enqueue(ctx, lea.ID, h.ID, 0, "again")
	if err != nil || created || same.ID != it.ID {
		t.Errorf("Enqueue of an open item = %+v, %v, %v; want it unchanged", same, created, err)
	}
	_, _, err = db.Enqueue(ctx, lea.ID, h.ID, 99, "")
	wantErr(t, "Enqueue(unknown decision)", err, grounding.ErrNotFound)

	c := mustNext(t, db, ann, f)
	if c.Item.ID != it.ID {
		t.Fatalf("Next = %d, want the manual item %d", c.Item.ID, it.ID)
	}
	clock.Advance(time.Minute)
	mustSubmit(t, db, ann, it.ID, grounding.VerdictFail)
	if d := decisionOf(t, db, it); d.HumanVerdict != grounding.VerdictFail || d.Mask != 0 || d.Verdict != grounding.VerdictFail {
		t.Errorf("human fail on a passing decision = %+v", d)
	}
	checkCounters(t, db, run.ID)

	// A second look at a settled decision: a new round. The old verdict
	// stands until the new round settles.
	clock.Advance(time.Minute)
	_, created, err = db.Enqueue(ctx, lea.ID, h.ID, 0, "second look")
	if err != nil || !created {
		t.Fatalf("re-Enqueue = %v, %v", created, err)
	}
	if d := decisionOf(t, db, it); d.HumanVerdict != grounding.VerdictFail {
		t.Errorf("during the new round the decision is %q, want the old fail", d.HumanVerdict)
	}
	c = mustNext(t, db, ann, f)
	if c.Item.ID != it.ID {
		t.Fatalf("ann not handed the re-opened item: %d", c.Item.ID)
	}
	mustSubmit(t, db, ann, it.ID, grounding.VerdictPass)
	if d := decisionOf(t, db, it); d.HumanVerdict != grounding.VerdictPass || d.Mask != 1 {
		t.Errorf("after the second round = %+v", d)
	}
	hist, _ := db.History(ctx, h.ID, 0)
	var kinds []string
	for _, e := range hist.Events {
		kinds = append(kinds, e.Kind)
	}
	if !slices.Equal(kinds, []string{"enqueue", "verdict", "enqueue", "verdict"}) {
		t.Errorf("history = %v", kinds)
	}
	if hist.Events[2].PrevVerdict != grounding.VerdictFail {
		t.Errorf("the second enqueue records prev %q, want fail", hist.Events[2].PrevVerdict)
	}
	checkCounters(t, db, run.ID)
}

func testRecheckKeepsQueue(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 3)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	c := mustNext(t, db, ann, f)
	mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
	// A stricter engine queues nothing: untouched open items leave, the
	// judged one stays with its verdict.
	none := func(t *grounding.Trajectory) grounding.Result {
		r := grounding.CheckDefault(t)
		for i := range r.Decisions {
			if r.Decisions[i].Verdict == grounding.VerdictAmbiguous {
				r.Decisions[i].Verdict, r.Decisions[i].Queued = grounding.VerdictFail, false
			}
		}
		return r
	}
	if _, err := db.Recheck(ctx, run.ID, none, nil); err != nil {
		t.Fatal(err)
	}
	items := allQueue(t, db, grounding.QueueFilter{RunID: run.ID, State: "all"})
	if len(items) != 1 || items[0].ID != c.Item.ID || items[0].Human != grounding.VerdictPass {
		t.Fatalf("after a recheck queueing nothing, queue = %+v; want the judged item only", items)
	}
	// Back to the default engine: the decisions queued again get items.
	if _, err := db.Recheck(ctx, run.ID, grounding.CheckDefault, nil); err != nil {
		t.Fatal(err)
	}
	items = allQueue(t, db, grounding.QueueFilter{RunID: run.ID, State: "all"})
	if len(items) != 5 {
		t.Errorf("after the default recheck %d items, want 5", len(items))
	}
	if it, _ := db.QueueItem(ctx, c.Item.ID); it.State != grounding.QueueDone {
		t.Errorf("the judged item is %s after recheck", it.State)
	}
	checkCounters(t, db, run.ID)
}

// testNoteOnGoneItem: a recheck takes an untouched item out of the queue
// while an annotator holds it; their verdict is refused (ErrNotFound) and
// the note they wrote is kept on the decision, where the review screen and
// the history read it. On a decision that still has its item the note goes
// on the item.
func testNoteOnGoneItem(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "gone", 1)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	c := mustNext(t, db, ann, grounding.QueueFilter{RunID: run.ID})
	none := func(t *grounding.Trajectory) grounding.Result {
		r := grounding.CheckDefault(t)
		for i := range r.Decisions {
			if r.Decisions[i].Verdict == grounding.VerdictAmbiguous {
				r.Decisions[i].Verdict, r.Decisions[i].Queued = grounding.VerdictFail, false
			}
		}
		return r
	}
	if _, err := db.Recheck(ctx, run.ID, none, nil); err != nil {
		t.Fatal(err)
	}
	_, err := db.Submit(ctx, ann.ID, c.Item.ID, grounding.VerdictPass, "it was in turn 3", 0)
	wantErr(t, "Submit on a gone item", err, grounding.ErrNotFound)
	_, _, err = db.AddNote(ctx, ann.ID, c.Item.ID, "it was in turn 3")
	wantErr(t, "AddNote on a gone item", err, grounding.ErrNotFound)

	e, rep, err := db.AddDecisionNote(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal, "  it was in turn 3 ")
	if err != nil || rep || e.ID == 0 || e.ItemID != 0 || e.Note != "it was in turn 3" || e.RunID != run.ID {
		t.Fatalf("AddDecisionNote = %+v, %v, %v; want a note on the decision, no item", e, rep, err)
	}
	if e2, rep, err := db.AddDecisionNote(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal, "it was in turn 3"); err != nil || !rep || e2.ID != e.ID {
		t.Errorf("AddDecisionNote twice = %+v, %v, %v; want the first, Repeated", e2, rep, err)
	}
	notes, err := db.NotesBy(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal)
	if err != nil || len(notes) != 1 || notes[0].Note != "it was in turn 3" || notes[0].UserName != "ann" || notes[0].CreatedAt.IsZero() {
		t.Errorf("NotesBy = %+v, %v; want ann's note with its time", notes, err)
	}
	h, err := db.History(ctx, c.Item.TrajectoryID, c.Item.Ordinal)
	if err != nil || h.Item != nil || len(h.Events) != 1 || h.Events[0].Note != "it was in turn 3" {
		t.Errorf("History = %+v, %v; want no item and the note", h, err)
	}
	_, _, err = db.AddDecisionNote(ctx, ann.ID, c.Item.TrajectoryID, 999, "nowhere")
	wantErr(t, "AddDecisionNote(unknown decision)", err, grounding.ErrNotFound)
	_, _, err = db.AddDecisionNote(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal, " ")
	wantErr(t, "AddDecisionNote(blank)", err, grounding.ErrInvalid)

	// Queued again: a note on the decision goes on its new item.
	if _, err := db.Recheck(ctx, run.ID, grounding.CheckDefault, nil); err != nil {
		t.Fatal(err)
	}
	h, err = db.History(ctx, c.Item.TrajectoryID, c.Item.Ordinal)
	if err != nil || h.Item == nil {
		t.Fatalf("History after requeueing = %+v, %v; want an item", h, err)
	}
	e, _, err = db.AddDecisionNote(ctx, ann.ID, c.Item.TrajectoryID, c.Item.Ordinal, "second look")
	if err != nil || e.ItemID != h.Item.ID {
		t.Errorf("AddDecisionNote with an item = %+v, %v; want it on item %d", e, err, h.Item.ID)
	}
}

// testRecheckWhileAdjudicating: a recheck of a run recounts its counters
// while annotators settle verdicts on it; whatever interleaving happens,
// the counters end equal to what the decisions say, none counted twice or
// lost.
func testRecheckWhileAdjudicating(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "busy", 40)
	var users []grounding.User
	for i := range 6 {
		users = append(users, mustUser(t, db, fmt.Sprintf("busy%d", i), grounding.RoleAnnotator))
	}
	f := grounding.QueueFilter{RunID: run.ID}
	done := make(chan struct{})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for n, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step := 0; ; step++ {
				c, err := db.Next(ctx, u.ID, f, 0)
				if errors.Is(err, grounding.ErrNotFound) {
					return
				}
				if err != nil {
					fail(fmt.Errorf("Next(%s): %w", u.Name, err))
					return
				}
				v := grounding.VerdictPass
				if (step+n)%3 == 0 {
					v = grounding.VerdictFail
				}
				// A recheck may settle the item meanwhile (a 409): fine.
				if _, err := db.Submit(ctx, u.ID, c.Item.ID, v, "", 0); err != nil && !errors.Is(err, grounding.ErrConflict) {
					fail(fmt.Errorf("Submit(%s, %d): %w", u.Name, c.Item.ID, err))
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		for range 4 {
			if _, err := db.Recheck(ctx, run.ID, grounding.CheckDefault, nil); err != nil {
				fail(fmt.Errorf("Recheck: %w", err))
				return
			}
		}
	}()
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	checkCounters(t, db, run.ID)
}

func testAgreementStats(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 3) // 5 items
	if err := db.SetOverlap(ctx, run.ID, 2); err != nil {
		t.Fatal(err)
	}
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	// Both judge all five; they disagree on the third one they see.
	for i := range 5 {
		ca := mustNext(t, db, ann, f)
		cb := mustNext(t, db, bob, f)
		if ca.Item.ID != cb.Item.ID {
			t.Fatalf("round %d: ann %d, bob %d", i, ca.Item.ID, cb.Item.ID)
		}
		mustSubmit(t, db, ann, ca.Item.ID, grounding.VerdictPass)
		vb := grounding.VerdictPass
		if i == 2 {
			vb = grounding.VerdictFail
		}
		mustSubmit(t, db, bob, cb.Item.ID, vb)
	}
	rep, names, err := db.Agreement(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	// 5 items, 4 agree. Kappa: ann always pass, p_e = 1·0.8 = 0.8,
	// (0.8 − 0.8)/0.2 = 0. Alpha: o_pp = 8, o_pf = o_fp = 1; n_p = 9,
	// n_f = 1, n = 10: 1 − 9·2/(9·1·2) = 0.
	if rep.Items != 5 || rep.Pairs != 5 || rep.Raw != 0.8 || len(rep.ByPair) != 1 || rep.ByPair[0].Items != 5 ||
		!rep.ByPair[0].KappaOK || rep.ByPair[0].Kappa > 1e-9 || !rep.AlphaOK || rep.Alpha > 1e-9 {
		t.Errorf("Agreement = %+v", rep)
	}
	if names[ann.ID] != "ann" || names[bob.ID] != "bob" {
		t.Errorf("names = %v", names)
	}
	if cs, _ := db.Conflicts(ctx, f); len(cs) != 1 {
		t.Errorf("%d conflicts, want 1", len(cs))
	}
}

// testAnnotatorWork: the lead's table of who did what counts standing
// verdicts (an undone one is gone), skips, claims held now and final
// verdicts, per run and over every run, with today and the last 7 days.
func testAnnotatorWork(t *testing.T, db *store.DB) {
	clock := NewClock(db)             // Monday 2026-03-02 09:00 UTC
	work := adjPool(t, db, "work", 3) // 5 items
	other := adjPool(t, db, "other", 1)
	if err := db.SetOverlap(ctx, other.ID, 2); err != nil {
		t.Fatal(err)
	}
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	lea := mustUser(t, db, "lea", grounding.RoleResearcher)
	mustUser(t, db, "idle", grounding.RoleAnnotator)
	fw, fo := grounding.QueueFilter{RunID: work.ID}, grounding.QueueFilter{RunID: other.ID}
	if got, err := db.AnnotatorWork(ctx, work.ID); err != nil || len(got) != 0 {
		t.Fatalf("before any work: %+v, %v", got, err)
	}

	mustSubmit(t, db, ann, mustNext(t, db, ann, fw).Item.ID, grounding.VerdictPass) // 8 days before "now"
	clock.Advance(7*24*time.Hour + time.Hour)                                       // Mon 03-09 10:00
	mustSubmit(t, db, ann, mustNext(t, db, ann, fw).Item.ID, grounding.VerdictFail)
	taken := mustSubmit(t, db, ann, mustNext(t, db, ann, fw).Item.ID, grounding.VerdictPass)
	if _, err := db.Undo(ctx, ann.ID, taken.Event.ID, 0); err != nil {
		t.Fatal(err)
	}
	clock.Advance(22 * time.Hour) // Tue 03-10 08:00
	again := mustNext(t, db, ann, fw)
	if again.Item.ID != taken.Event.ItemID {
		t.Fatalf("after the undo ann was given item %d, not %d again", again.Item.ID, taken.Event.ItemID)
	}
	if err := db.Skip(ctx, ann.ID, again.Item.ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	mustSubmit(t, db, bob, mustNext(t, db, bob, fw).Item.ID, grounding.VerdictPass)
	// The other run, k = 2: ann and bob disagree, lea settles it.
	mustSubmit(t, db, ann, mustNext(t, db, ann, fo).Item.ID, grounding.VerdictPass)
	cb := mustNext(t, db, bob, fo)
	mustSubmit(t, db, bob, cb.Item.ID, grounding.VerdictFail)
	if _, err := db.Finalize(ctx, lea.ID, cb.Item.ID, grounding.VerdictFail, "the card was never named"); err != nil {
		t.Fatal(err)
	}
	mustNext(t, db, ann, fw) // held, not judged (an annotator holds one open item at a time)

	got, err := db.AnnotatorWork(ctx, work.ID)
	if err != nil {
		t.Fatal(err)
	}
	skipAt := clock.Now().Add(-time.Minute) // the other run's verdicts came later, but not in this run
	want := []grounding.AnnotatorWork{
		{UserID: ann.ID, Name: "ann", Role: grounding.RoleAnnotator, Verdicts: 2, Passed: 1, Today: 0, Week: 1, Skips: 1, Holding: 1},
		{UserID: bob.ID, Name: "bob", Role: grounding.RoleAnnotator, Verdicts: 1, Passed: 1, Today: 1, Week: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("run work: %+v; want ann and bob only", got)
	}
	for i := range want {
		g := got[i]
		if g.Last.IsZero() {
			t.Errorf("%s: no time of the latest work", g.Name)
		}
		g.Last = time.Time{}
		if g != want[i] {
			t.Errorf("run work, row %d = %+v; want %+v", i, g, want[i])
		}
	}
	if !got[0].Last.Equal(skipAt) {
		t.Errorf("ann's latest work at %v; want the skip at %v", got[0].Last, skipAt)
	}

	all, err := db.AnnotatorWork(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]grounding.AnnotatorWork{}
	for _, w := range all {
		byName[w.Name] = w
	}
	if len(all) != 3 || byName["ann"].Verdicts != 3 || byName["bob"].Verdicts != 2 || byName["bob"].Passed != 1 ||
		byName["lea"].Verdicts != 1 || byName["lea"].Finals != 1 || byName["lea"].Role != grounding.RoleResearcher {
		t.Errorf("every run: %+v; want ann 3 verdicts, bob 2 (1 pass), lea 1 final", all)
	}
	if _, ok := byName["idle"]; ok {
		t.Error("an account that did nothing is listed")
	}
	// Disabling an account keeps its work on the record, marked.
	if err := db.SetDisabled(ctx, bob.ID, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.AnnotatorWork(ctx, work.ID); len(got) != 2 || !got[1].Disabled || got[1].Verdicts != 1 {
		t.Errorf("after disabling bob: %+v", got)
	}
}

// testConcurrentAnnotators runs 32 simulated annotators at once through the
// store API on two runs (k = 1 and k = 2). Some walk away from their first
// claim; the clock then jumps past the lease so those items return. At the
// end every item has exactly its k verdicts from distinct annotators, each
// accepted verdict is in the history once, refused ones left no trace, and
// the counters match the decisions.
func testConcurrentAnnotators(t *testing.T, db *store.DB) {
	const annotators = 32
	clock := NewClock(db)
	runs := []grounding.Run{adjPool(t, db, "solo", 24), adjPool(t, db, "pair", 24)}
	if err := db.SetOverlap(ctx, runs[1].ID, 2); err != nil {
		t.Fatal(err)
	}
	k := map[int64]int{runs[0].ID: 1, runs[1].ID: 2}
	var users []grounding.User
	for i := range annotators {
		users = append(users, mustUser(t, db, fmt.Sprintf("ann%02d", i), grounding.RoleAnnotator))
	}

	// Phase 0: eight annotators claim an item each and walk away.
	abandoned := map[int64]int64{} // user → item
	for _, u := range users[:8] {
		c := mustNext(t, db, u, grounding.QueueFilter{})
		abandoned[u.ID] = c.Item.ID
	}
	clock.Advance(store.DefaultLease + time.Minute)

	// Phase 1: all 32 at once until the queue is empty for them.
	var (
		mu       sync.Mutex
		accepted = map[int64][]int64{} // item → users whose verdict was accepted
		handed   = map[int64]map[int64]bool{}
		events   = map[int64]bool{}
		errs     []error
	)
	var wg sync.WaitGroup
	for n, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			for step := 0; step < 500; step++ {
				f := grounding.QueueFilter{}
				if rng.IntN(3) == 0 {
					f.RunID = runs[rng.IntN(2)].ID
				}
				c, err := db.Next(ctx, u.ID, f, 0)
				if errors.Is(err, grounding.ErrNotFound) {
					if f.RunID == 0 {
						return
					}
					continue
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("Next(%s): %w", u.Name, err))
					mu.Unlock()
					return
				}
				mu.Lock()
				if handed[c.Item.ID] == nil {
					handed[c.Item.ID] = map[int64]bool{}
				}
				handed[c.Item.ID][u.ID] = true
				mu.Unlock()
				v := grounding.VerdictPass
				if (c.Item.ID+u.ID)%5 == 0 {
					v = grounding.VerdictFail
				}
				res, err := db.Submit(ctx, u.ID, c.Item.ID, v, "", 0)
				if rng.IntN(10) == 0 && err == nil {
					// A double click.
					if again, err2 := db.Submit(ctx, u.ID, c.Item.ID, v, "", 0); err2 != nil || !again.Repeated || again.Event.ID != res.Event.ID {
						mu.Lock()
						errs = append(errs, fmt.Errorf("double Submit(%s, %d) = %+v, %v", u.Name, c.Item.ID, again, err2))
						mu.Unlock()
					}
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("Submit(%s, %d): %w", u.Name, c.Item.ID, err))
				} else {
					accepted[c.Item.ID] = append(accepted[c.Item.ID], u.ID)
					if events[res.Event.ID] {
						errs = append(errs, fmt.Errorf("event %d returned twice", res.Event.ID))
					}
					events[res.Event.ID] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}

	// The walkers-away come back to their old tabs: refused, no trace.
	for uid, item := range abandoned {
		res, err := db.Submit(ctx, uid, item, grounding.VerdictPass, "", 0)
		switch {
		case err == nil && !res.Repeated:
			t.Errorf("late Submit by user %d on item %d recorded %+v; want a refusal", uid, item, res)
		case err != nil && !errors.Is(err, grounding.ErrConflict):
			t.Errorf("late Submit by user %d on item %d = %v; want a refusal", uid, item, err)
		}
	}

	all := allQueue(t, db, grounding.QueueFilter{State: "all"})
	if len(all) != 80 { // per run: 16 trajectories with two queued decisions, 8 with one
		t.Fatalf("%d items, want 80", len(all))
	}
	total := 0
	for _, it := range all {
		want := k[it.RunID]
		got := accepted[it.ID]
		distinct := map[int64]bool{}
		for _, u := range got {
			distinct[u] = true
		}
		if len(got) != want || len(distinct) != want || it.Verdicts != want {
			t.Errorf("item %d (k=%d): %d accepted verdicts from %d annotators, store says %d", it.ID, want, len(got), len(distinct), it.Verdicts)
		}
		if len(handed[it.ID]) != want {
			t.Errorf("item %d (k=%d) was handed to %d annotators in phase 1", it.ID, want, len(handed[it.ID]))
		}
		if it.State == grounding.QueueOpen {
			t.Errorf("item %d still open", it.ID)
		}
		h, err := db.History(ctx, it.TrajectoryID, it.Ordinal)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range h.Events {
			if e.Kind == grounding.EventVerdict {
				n++
				if !events[e.ID] {
					t.Errorf("event %d in history was never acknowledged", e.ID)
				}
			}
		}
		if n != want {
			t.Errorf("item %d history holds %d verdicts, want %d", it.ID, n, want)
		}
		total += n
	}
	if total != len(events) {
		t.Errorf("%d verdicts in history, %d acknowledged", total, len(events))
	}
	for _, r := range runs {
		checkCounters(t, db, r.ID)
	}
}

// testConcurrentDoubleSubmit fires the same verdict several times at once
// (a double click whose requests race, two tabs) and, on an item with k=2,
// two annotators at once: one verdict per annotator is recorded, the other
// calls say Repeated, and the item settles on both verdicts.
func testConcurrentDoubleSubmit(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 6)
	if err := db.SetOverlap(ctx, run.ID, 2); err != nil {
		t.Fatal(err)
	}
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	bob := mustUser(t, db, "bob", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	for round := range 8 {
		ca := mustNext(t, db, ann, f)
		cb := mustNext(t, db, bob, f)
		if ca.Item.ID != cb.Item.ID {
			t.Fatalf("round %d: ann %d, bob %d", round, ca.Item.ID, cb.Item.ID)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		fresh := map[int64]int{}
		for i := range 6 {
			u := []grounding.User{ann, bob}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := db.Submit(ctx, u.ID, ca.Item.ID, grounding.VerdictPass, "", 0)
				if err != nil {
					t.Errorf("Submit(%s): %v", u.Name, err)
					return
				}
				if !r.Repeated {
					mu.Lock()
					fresh[u.ID]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if fresh[ann.ID] != 1 || fresh[bob.ID] != 1 {
			t.Errorf("round %d: fresh verdicts per annotator %v, want one each", round, fresh)
		}
		h, _ := db.History(ctx, ca.Item.TrajectoryID, ca.Item.Ordinal)
		if len(h.Events) != 2 || h.Item.State != grounding.QueueDone {
			t.Errorf("round %d: %d events, item %s; want 2, done", round, len(h.Events), h.Item.State)
		}
	}
	checkCounters(t, db, run.ID)
}

// testPrioritizeByDeficit: once coverage paths exist, items rank by the
// deficit of the path their trajectory would reach (then by its queued
// count), and items a lead sent stay first.
func testPrioritizeByDeficit(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "adj", 6)
	lea := mustUser(t, db, "lea", grounding.RoleResearcher)
	ann := mustUser(t, db, "ann", grounding.RoleAnnotator)
	f := grounding.QueueFilter{RunID: run.ID}
	tr := allTrajectories(t, db, grounding.TrajectoryFilter{RunID: run.ID})
	h, err := db.TrajectoryByExtID(ctx, run.ID, tr[5])
	if err != nil {
		t.Fatal(err)
	}
	manual, _, err := db.Enqueue(ctx, lea.ID, h.ID, 0, "check")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.PrioritizeByDeficit(ctx, run.ID, 0)
	wantErr(t, "PrioritizeByDeficit(depth 0)", err, grounding.ErrInvalid)

	// Every trajectory would reach the same unseen path: deficit 3 at 8B.
	n, err := db.PrioritizeByDeficit(ctx, run.ID, 3)
	if err != nil || n != 11 {
		t.Fatalf("PrioritizeByDeficit = %d, %v; want 11 items", n, err)
	}
	prios := func() map[int64]int {
		out := map[int64]int{}
		for _, it := range allQueue(t, db, f) {
			out[it.ID] = it.Priority
		}
		return out
	}
	open := allQueue(t, db, f)
	perTrajectory := map[int64]int{}
	for _, it := range open {
		perTrajectory[it.TrajectoryID]++
	}
	for _, it := range open {
		want := 3000 + perTrajectory[it.TrajectoryID] // deficit 3, then its open items
		if it.ID == manual.ID {
			want = 3003
		}
		if it.Priority != want {
			t.Errorf("item %d (%s d%d, %s) priority %d, want %d", it.ID, it.ExtID, it.Ordinal, it.Source, it.Priority, want)
		}
	}
	// Approving both decisions of the first trajectory certifies that path
	// once: at depth 1 nobody else adds support, only queued counts remain.
	first := allQueue(t, db, grounding.QueueFilter{RunID: run.ID, Tool: "search_direct_flight"})[0]
	for _, it := range allQueue(t, db, f) {
		if it.TrajectoryID != first.TrajectoryID || it.Source != grounding.SourceAuto {
			continue
		}
		for {
			c := mustNext(t, db, ann, f)
			if c.Item.TrajectoryID == first.TrajectoryID {
				mustSubmit(t, db, ann, c.Item.ID, grounding.VerdictPass)
				break
			}
			if err := db.Skip(ctx, ann.ID, c.Item.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := db.PrioritizeByDeficit(ctx, run.ID, 1); err != nil {
		t.Fatal(err)
	}
	for id, p := range prios() {
		if id == manual.ID {
			if p != 3 {
				t.Errorf("manual item priority %d, want 3 (ahead of all)", p)
			}
		} else if p > 2 {
			t.Errorf("item %d priority %d after the path reached depth 1; want its queued count only", id, p)
		}
	}
}

// testQueueCountsUnderChurn moves items between states many times (verdicts
// and undos by two annotators at once) while readers ask for the progress
// line: on Postgres the counts' rows of differences pile up and readers
// fold them, concurrently, which must never change a total.
func testQueueCountsUnderChurn(t *testing.T, db *store.DB) {
	run := adjPool(t, db, "churn", 8)
	f := grounding.QueueFilter{RunID: run.ID}
	checkCounters(t, db, run.ID)
	items := len(allQueue(t, db, grounding.QueueFilter{RunID: run.ID, State: "all"}))
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := db.Progress(ctx, 0, f)
				if err != nil {
					t.Errorf("Progress: %v", err)
					return
				}
				if p.Items != items || p.Remaining+p.Done+p.Conflicts != p.Items {
					t.Errorf("Progress mid-churn: %d items, %d open, %d done, %d in conflict; want %d in all", p.Items, p.Remaining, p.Done, p.Conflicts, items)
					return
				}
			}
		}()
	}
	var workers sync.WaitGroup
	for _, name := range []string{"churn-ann", "churn-bob"} {
		u := mustUser(t, db, name, grounding.RoleAnnotator)
		workers.Add(1)
		go func() {
			defer workers.Done()
			for round := range 30 {
				c, err := db.Next(ctx, u.ID, f, time.Hour)
				if err != nil {
					t.Errorf("%s round %d: Next: %v", u.Name, round, err)
					return
				}
				r, err := db.Submit(ctx, u.ID, c.Item.ID, grounding.VerdictPass, "", time.Hour)
				if err != nil {
					t.Errorf("%s round %d: Submit: %v", u.Name, round, err)
					return
				}
				if _, err := db.Undo(ctx, u.ID, r.Event.ID, time.Hour); err != nil {
					t.Errorf("%s round %d: Undo: %v", u.Name, round, err)
					return
				}
			}
		}()
	}
	workers.Wait()
	close(stop)
	readers.Wait()
	checkCounters(t, db, run.ID)
}
