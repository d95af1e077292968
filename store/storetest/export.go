package storetest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"groundwork/grounding"
	"groundwork/store"
)

// exportTests are the promises of the export store (store/export.go,
// store/tokens.go).
var exportTests = []struct {
	name string
	fn   func(t *testing.T, db *store.DB)
}{
	{"ExportContents", testExportContents},
	{"ExportNeverLeaks", testExportNeverLeaks},
	{"ExportSnapshot", testExportSnapshot},
	{"ExportRefusals", testExportRefusals},
	{"ExportCanceled", testExportCanceled},
	{"ExportView", testExportView},
	{"APITokens", testAPITokens},
}

// The export contract: Export yields exactly the trajectories its filter
// selects, in parent order, from one snapshot, with their stored decisions,
// the visible messages only, message weights by the all-calls rule and
// parent-normalized weights; its summary announces what follows.

// exportPool imports a run with every kind of trajectory an export meets:
// hidden messages and entries (RoundTrip, twice under one parent), failures
// (Simple), τ-bench-like ones with errors and hidden hints, and ambiguous
// ones whose queued decisions keep them out of complete exports. A second
// run must never leak into the first one's export.
func exportPool(t *testing.T, db *store.DB) grounding.Run {
	t.Helper()
	rt2 := RoundTrip("rt-2")
	rt2.Messages = slices.Clone(rt2.Messages)
	rt2.Messages[8].Content = "Booked <ZFA04Y>, total paid."
	ts := []*grounding.Trajectory{RoundTrip("rt-1"), rt2,
		Simple("s-ok", "retail", true, "get_order_details"), Simple("s-failed", "retail", false, "get_order_details")}
	for i := range 8 {
		ts = append(ts, TauLike("tl", i))
	}
	for i := range 4 {
		ts = append(ts, Ambiguous("amb", i))
	}
	mustImport(t, db, "exp", "exp.jsonl", ts...)
	mustImport(t, db, "other", "other.jsonl", Simple("o-1", "retail", true, "get_order_details"))
	return mustRun(t, db, "exp")
}

// collected is what one Export call produced.
type collected struct {
	summary grounding.ExportSummary
	ts      []grounding.ExportTrajectory
	lines   [][]byte // rendered by grounding.ExportEncoder, header and trailer excluded
	all     []byte   // the whole rendering
}

// collect runs Export and copies what it yields (valid only during each).
func collect(t *testing.T, db *store.DB, f grounding.ExportFilter) (collected, error) {
	t.Helper()
	var c collected
	enc := grounding.NewExportEncoder(f)
	began := 0
	sum, err := db.Export(ctx, f, func(at time.Time) error {
		began++
		c.all = enc.Header(c.all, at)
		return nil
	}, func(tr *grounding.ExportTrajectory) error {
		cp := *tr
		cp.Messages = slices.Clone(tr.Messages)
		cp.Decisions = slices.Clone(tr.Decisions)
		c.ts = append(c.ts, cp)
		n := len(c.all)
		var err error
		c.all, err = enc.Trajectory(c.all, tr)
		c.lines = append(c.lines, slices.Clone(c.all[n:]))
		return err
	})
	if err != nil {
		return c, err
	}
	if began != 1 {
		t.Fatalf("Export called begin %d times, want 1", began)
	}
	c.summary = sum
	c.all = enc.Trailer(c.all, sum)
	return c, nil
}

func mustCollect(t *testing.T, db *store.DB, f grounding.ExportFilter) collected {
	t.Helper()
	c, err := collect(t, db, f)
	if err != nil {
		t.Fatalf("Export(%+v) error: %v", f, err)
	}
	return c
}

// expected is one trajectory as the test computes it from the store's
// ordinary readers, independently of Export.
type expected struct {
	sum       grounding.TrajectorySummary
	decisions []grounding.StoredDecision
	visible   []grounding.Message
	weights   map[int]int // message index → SFT weight, visible assistant messages
	selected  int
	super     int
	tokens    int
}

func expectTrajectory(t *testing.T, db *store.DB, s grounding.TrajectorySummary, src grounding.VerdictSource) expected {
	t.Helper()
	e := expected{sum: s, weights: map[int]int{}}
	var err error
	if e.decisions, err = db.Decisions(ctx, s.ID, 0, 0); err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Messages(ctx, s.ID, 0, s.Messages)
	if err != nil {
		t.Fatal(err)
	}
	sel := func(d grounding.StoredDecision) bool {
		switch src {
		case grounding.VerdictSourceHuman:
			return d.HumanVerdict != ""
		case grounding.VerdictSourceAuto:
			return d.HumanVerdict == ""
		}
		return true
	}
	for _, d := range e.decisions {
		if sel(d) {
			e.selected++
		}
	}
	for _, m := range msgs {
		if m.IsHidden() {
			continue
		}
		e.visible = append(e.visible, m)
		if m.Role != grounding.RoleAssistant {
			continue
		}
		n, ok := 0, true
		for _, d := range e.decisions {
			if d.Message == m.Index {
				n++
				ok = ok && sel(d) && d.Mask == 1
			}
		}
		e.weights[m.Index] = 0
		if n > 0 && ok {
			e.weights[m.Index] = 1
			e.super += n
			b := len(m.Content)
			for _, c := range m.ToolCalls {
				args := c.RawArguments
				if args == "" {
					args = string(c.Arguments)
				}
				b += len(c.Name) + len(args)
			}
			e.tokens += (b + 3) / 4
		}
	}
	return e
}

// expectExport computes what Export(f) must yield, in order.
func expectExport(t *testing.T, db *store.DB, f grounding.ExportFilter) (want []expected, sum grounding.ExportSummary) {
	t.Helper()
	src := cmp.Or(f.Source, grounding.VerdictSourceAny)
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: f.RunID, Domain: f.Domain, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var inView []int64
	if f.ViewID != 0 {
		if inView, err = db.ViewTrajectoryIDs(ctx, f.ViewID, f.RunID); err != nil {
			t.Fatal(err)
		}
	}
	// Export order: parents by their first candidate trajectory (smallest
	// id), each parent's trajectories by id.
	first := map[string]int64{}
	for _, s := range page.Rows {
		if f.Complete && s.Queued > 0 || f.ViewID != 0 && !slices.Contains(inView, s.ID) {
			continue
		}
		if id, ok := first[s.ParentID]; !ok || s.ID < id {
			first[s.ParentID] = s.ID
		}
		e := expectTrajectory(t, db, s, src)
		keep := f.IncludeEmpty || (f.Format == grounding.ExportSFT && e.super > 0) || (f.Format != grounding.ExportSFT && e.selected > 0)
		if keep {
			want = append(want, e)
		}
	}
	slices.SortFunc(want, func(a, b expected) int {
		return cmp.Or(cmp.Compare(first[a.sum.ParentID], first[b.sum.ParentID]), cmp.Compare(a.sum.ID, b.sum.ID))
	})
	if f.Limit > 0 && len(want) > f.Limit {
		want = want[:f.Limit]
	}
	parents := map[string]bool{}
	for _, e := range want {
		sum.Trajectories++
		sum.Decisions += e.selected
		sum.Supervised += e.super
		if e.super > 0 {
			parents[e.sum.ParentID] = true
		}
	}
	sum.Parents = len(parents)
	return want, sum
}

// checkExport compares an export with what the store's readers say.
func checkExport(t *testing.T, db *store.DB, f grounding.ExportFilter, c collected) {
	t.Helper()
	want, wsum := expectExport(t, db, f)
	name := fmt.Sprintf("Export(format=%s source=%s complete=%v empty=%v domain=%q limit=%d)",
		f.Format, f.Source, f.Complete, f.IncludeEmpty, f.Domain, f.Limit)
	gs := c.summary
	if gs.Trajectories != wsum.Trajectories || gs.Decisions != wsum.Decisions || gs.Supervised != wsum.Supervised || gs.Parents != wsum.Parents {
		t.Errorf("%s summary = %d trajectories, %d decisions, %d supervised, %d parents; want %d, %d, %d, %d", name,
			gs.Trajectories, gs.Decisions, gs.Supervised, gs.Parents, wsum.Trajectories, wsum.Decisions, wsum.Supervised, wsum.Parents)
	}
	if gs.Snapshot.IsZero() || len(gs.EngineVersions) == 0 && len(want) > 0 || len(gs.Profiles) == 0 && len(want) > 0 {
		t.Errorf("%s summary = %+v: snapshot, engine versions and profiles must be set", name, gs)
	}
	var got, wantIDs []string
	for _, tr := range c.ts {
		got = append(got, tr.ExtID)
	}
	for _, e := range want {
		wantIDs = append(wantIDs, e.sum.ExtID)
	}
	if !slices.Equal(got, wantIDs) {
		t.Fatalf("%s trajectories =\n%v\nwant (parents in order of first id, then id order)\n%v", name, got, wantIDs)
	}
	tokens := map[string]int{}
	for _, e := range want {
		tokens[e.sum.ParentID] += e.tokens
	}
	total := 0.0
	for i, tr := range c.ts {
		e := want[i]
		if tr.ParentID != e.sum.ParentID || tr.Domain != e.sum.Domain || tr.Success != e.sum.Success || tr.WorkflowOK != e.sum.WorkflowOK {
			t.Errorf("%s %s header = %+v, want %+v", name, tr.ExtID, tr, e.sum)
		}
		if tr.SelectedDecisions != e.selected || tr.SupervisedDecisions != e.super || tr.Tokens != e.tokens {
			t.Errorf("%s %s = %d selected, %d supervised, %d tokens; want %d, %d, %d", name, tr.ExtID,
				tr.SelectedDecisions, tr.SupervisedDecisions, tr.Tokens, e.selected, e.super, e.tokens)
		}
		wantW := 0.0
		if tokens[e.sum.ParentID] > 0 {
			wantW = float64(e.tokens) / float64(tokens[e.sum.ParentID]) / float64(wsum.Parents)
		}
		if math.Abs(tr.Weight-wantW) > 1e-12 {
			t.Errorf("%s %s weight = %v, want %v", name, tr.ExtID, tr.Weight, wantW)
		}
		total += tr.Weight
		if len(tr.Decisions) != len(e.decisions) {
			t.Fatalf("%s %s has %d decisions, want %d", name, tr.ExtID, len(tr.Decisions), len(e.decisions))
		}
		if f.Format == grounding.ExportSFT {
			// SFT loads what its weights need, in message order.
			key := func(m, mask int, h grounding.Verdict) string { return fmt.Sprintf("%05d/%d/%s", m, mask, h) }
			var got, want []string
			for k, d := range tr.Decisions {
				got = append(got, key(d.Message, d.Mask, d.HumanVerdict))
				want = append(want, key(e.decisions[k].Message, e.decisions[k].Mask, e.decisions[k].HumanVerdict))
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s decisions (message/mask/human) = %v, want %v", name, tr.ExtID, got, want)
			}
		}
		for k, d := range tr.Decisions {
			if f.Format == grounding.ExportSFT {
				break
			}
			w := e.decisions[k]
			if d.Ordinal != w.Ordinal || d.Message != w.Message || d.Call != w.Call || d.Tool != w.Tool || d.Mask != w.Mask ||
				d.Verdict != w.Verdict || d.AutoVerdict != w.AutoVerdict || d.HumanVerdict != w.HumanVerdict {
				t.Errorf("%s %s decision %d = %+v, want %+v", name, tr.ExtID, k, d, w)
			}
			if f.Format != grounding.ExportSFT && !slices.Equal(d.Reasons, w.Reasons) && (len(d.Reasons) > 0 || len(w.Reasons) > 0) {
				t.Errorf("%s %s decision %d reasons = %v, want %v", name, tr.ExtID, k, d.Reasons, w.Reasons)
			}
			if (d.HumanVerdict == "") != (d.Annotator == "") || (d.HumanVerdict == "") != d.DecidedAt.IsZero() {
				if f.Format != grounding.ExportSFT {
					t.Errorf("%s %s decision %d: human %q, annotator %q, decided at %v", name, tr.ExtID, k, d.HumanVerdict, d.Annotator, d.DecidedAt)
				}
			}
		}
		// The visible messages, never a hidden one, as SFT renders them; for
		// masks and CSV the marks of the assistant ones (their tokens).
		wantSFT, wantMarks := grounding.AppendSFTMessages(nil, canonMessages(t, e.visible))
		if f.Format == grounding.ExportSFT {
			if got, want := canonSFT(t, tr.SFT), canonSFT(t, string(wantSFT)); got != want {
				t.Errorf("%s %s messages rendered\n%.2000s\nwant\n%.2000s", name, tr.ExtID, got, want)
			}
		}
		gotMarks := slices.Clone(tr.Marks)
		for k := range gotMarks {
			if f.Format != grounding.ExportSFT {
				gotMarks[k].Offset = 0 // where its weight is: only the SFT rendering has them
				wantMarks[k].Offset = 0
			}
		}
		if !slices.Equal(gotMarks, wantMarks) {
			t.Errorf("%s %s marks = %v, want %v", name, tr.ExtID, gotMarks, wantMarks)
		}
		if f.Format == grounding.ExportSFT {
			checkSFTWeights(t, name+" "+tr.ExtID, c.lines[i], e)
		}
	}
	if wsum.Parents > 0 && math.Abs(total-1) > 1e-9 {
		t.Errorf("%s weights sum to %v, want 1", name, total)
	}
	// Header and trailer agree with what was written.
	first, _, _ := bytes.Cut(c.all, []byte("\n"))
	if f.Format == grounding.ExportCSV {
		first = bytes.TrimPrefix(first, []byte("# "))
	}
	var h struct {
		Export struct {
			Snapshot time.Time
			Format   string
		} `json:"groundwork_export"`
	}
	if err := json.Unmarshal(first, &h); err != nil {
		t.Fatalf("%s header %q: %v", name, first, err)
	}
	lines := bytes.Split(bytes.TrimSuffix(c.all, []byte("\n")), []byte("\n"))
	last := bytes.TrimPrefix(lines[len(lines)-1], []byte("# "))
	var tr struct {
		Trailer struct {
			Complete                                     bool
			Trajectories, Decisions, Supervised, Parents int
			Snapshot                                     time.Time
			Profiles                                     []string
		} `json:"groundwork_trailer"`
	}
	if err := json.Unmarshal(last, &tr); err != nil {
		t.Fatalf("%s trailer %q: %v", name, last, err)
	}
	x := tr.Trailer
	if !x.Complete || x.Trajectories != wsum.Trajectories || x.Decisions != wsum.Decisions || x.Supervised != wsum.Supervised ||
		x.Parents != wsum.Parents || !x.Snapshot.Equal(h.Export.Snapshot) || !h.Export.Snapshot.Equal(gs.Snapshot) ||
		h.Export.Format != string(f.Format) || !slices.Equal(x.Profiles, gs.Profiles) {
		t.Errorf("%s header %s and trailer %s disagree with %d trajectories written", name, first, last, len(c.ts))
	}
}

// canonSFT is a rendered SFT messages array with the keys of every object,
// and of the JSON inside each call's argument string, in one order: the
// store keeps arguments in their source order, the fixtures' expectations
// are canonicalized (canonMessages).
func canonSFT(t *testing.T, rendering string) string {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal([]byte(rendering), &msgs); err != nil {
		t.Fatalf("rendered SFT messages are not a JSON array of objects: %v\n%.500s", err, rendering)
	}
	for _, m := range msgs {
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			fn, _ := c.(map[string]any)["function"].(map[string]any)
			if args, ok := fn["arguments"].(string); ok && json.Valid([]byte(args)) {
				fn["arguments"] = canonJSON(t, []byte(args))
			}
		}
	}
	out, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// checkSFTWeights parses an SFT line and compares its assistant weights.
func checkSFTWeights(t *testing.T, name string, line []byte, e expected) {
	t.Helper()
	var l struct {
		Messages []struct {
			Role   string
			Weight *int
		}
	}
	if err := json.Unmarshal(line, &l); err != nil {
		t.Fatalf("%s: SFT line %q: %v", name, line, err)
	}
	var got, want []int
	for _, m := range l.Messages {
		if m.Role == grounding.RoleAssistant {
			if m.Weight == nil {
				t.Errorf("%s: assistant message without weight", name)
				continue
			}
			got = append(got, *m.Weight)
		}
	}
	for _, m := range e.visible {
		if m.Role == grounding.RoleAssistant {
			want = append(want, e.weights[m.Index])
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: assistant weights %v, want %v", name, got, want)
	}
}

// judge gives the next open item of the run the user's verdict, through
// the adjudication queue (overlap 1: one verdict settles it).
func judge(t *testing.T, db *store.DB, userID, runID int64, v grounding.Verdict) grounding.QueueItem {
	t.Helper()
	c, err := db.Next(ctx, userID, grounding.QueueFilter{RunID: runID}, time.Minute)
	if err != nil {
		t.Fatalf("Next() error: %v", err)
	}
	if _, err := db.Submit(ctx, userID, c.Item.ID, v, "", time.Minute); err != nil {
		t.Fatalf("Submit() error: %v", err)
	}
	return c.Item
}

func testExportContents(t *testing.T, db *store.DB) {
	run := exportPool(t, db)
	ann, err := db.CreateUser(ctx, "ann", grounding.RoleAnnotator, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	// Settle both queued decisions of one ambiguous trajectory, and one of
	// another: the first becomes complete, the second stays out of complete
	// exports.
	for range 3 {
		judge(t, db, ann.ID, run.ID, grounding.VerdictPass)
	}
	for _, format := range []grounding.ExportFormat{grounding.ExportMasks, grounding.ExportSFT, grounding.ExportCSV} {
		for _, f := range []grounding.ExportFilter{
			{Complete: true},
			{Complete: false},
			{Complete: false, IncludeEmpty: true},
			{Complete: true, Source: grounding.VerdictSourceHuman},
			{Complete: false, Source: grounding.VerdictSourceAuto},
			{Complete: false, Domain: "retail"},
			{Complete: false, Limit: 5},
		} {
			f.RunID, f.RunName, f.Format = run.ID, run.Name, format
			checkExport(t, db, f, mustCollect(t, db, f))
		}
	}
	// The summary alone says the same as the export's header.
	f := grounding.ExportFilter{RunID: run.ID, RunName: run.Name, Format: grounding.ExportSFT, Complete: true}
	s, err := db.ExportSummary(ctx, f)
	c := mustCollect(t, db, f)
	if err != nil || s.Trajectories != c.summary.Trajectories || s.Decisions != c.summary.Decisions ||
		s.Parents != c.summary.Parents || !slices.Equal(s.Profiles, c.summary.Profiles) {
		t.Errorf("ExportSummary() = %+v, %v; want the export's %+v", s, err, c.summary)
	}
	// Human decisions carry the annotator and time.
	human := mustCollect(t, db, grounding.ExportFilter{RunID: run.ID, Format: grounding.ExportMasks, Source: grounding.VerdictSourceHuman})
	n := 0
	for _, tr := range human.ts {
		for _, d := range tr.Decisions {
			if d.Selected {
				n++
				if d.Annotator != "ann" || d.DecidedAt.IsZero() || d.Source() != "human" {
					t.Errorf("human decision %s/%d: annotator %q at %v", tr.ExtID, d.Ordinal, d.Annotator, d.DecidedAt)
				}
			}
		}
	}
	if n != 3 {
		t.Errorf("source=human exported %d decisions, want the 3 judged", n)
	}
}

func testExportNeverLeaks(t *testing.T, db *store.DB) {
	// Every hidden place holds a marker; the visible text holds none.
	markers := []string{"HIDDEN-MSG-7f3a", "HIDDEN-ENTRY-91c2", "HIDDEN-REQ-5d10", "HIDDEN-META-c0de", "HIDDEN-CALL-aa01", "HIDDEN-OBS-bb02"}
	var ts []*grounding.Trajectory
	for i := range 6 {
		tr := RoundTrip(fmt.Sprintf("leak-%d", i))
		tr.ParentID = fmt.Sprintf("leak-task-%d", i/2)
		tr.Request = "request " + markers[2]
		tr.Meta = json.RawMessage(`{"note":"` + markers[3] + `"}`)
		tr.Hidden = append(tr.Hidden, grounding.HiddenEntry{Kind: grounding.HiddenDBState, Content: json.RawMessage(`{"secret":"` + markers[1] + `"}`)})
		tr.Messages = slices.Clone(tr.Messages)
		tr.Messages[6].Content = "teacher note: " + markers[0]
		tr.Messages = append(tr.Messages,
			grounding.Message{Role: grounding.RoleAssistant, Visibility: grounding.Hidden, ContentNull: true, ToolCalls: []grounding.ToolCall{
				{ID: "hc", Name: "get_user_details", Arguments: json.RawMessage(`{"user_id":"` + markers[4] + `"}`)}}},
			grounding.Message{Role: grounding.RoleTool, ToolCallID: "hc", Name: "get_user_details", Content: "observation " + markers[5],
				Visibility: grounding.Hidden, HiddenKind: "teacher_tool"},
		)
		ts = append(ts, tr)
	}
	mustImport(t, db, "leak", "leak.jsonl", ts...)
	run := mustRun(t, db, "leak")
	for _, format := range []grounding.ExportFormat{grounding.ExportMasks, grounding.ExportSFT, grounding.ExportCSV} {
		f := grounding.ExportFilter{RunID: run.ID, RunName: run.Name, Format: format, IncludeEmpty: true, IDs: true}
		c := mustCollect(t, db, f)
		if len(c.ts) != len(ts) {
			t.Fatalf("%s export has %d trajectories, want %d", format, len(c.ts), len(ts))
		}
		for _, m := range markers {
			if bytes.Contains(c.all, []byte(m)) {
				t.Errorf("%s export contains the hidden marker %s", format, m)
			}
		}
		if format == grounding.ExportSFT && !bytes.Contains(c.all, []byte("mia_li_3668")) {
			t.Errorf("SFT export lacks the visible user id: %s", c.all)
		}
	}
}

func testExportSnapshot(t *testing.T, db *store.DB) {
	run := exportPool(t, db)
	ann, err := db.CreateUser(ctx, "ann", grounding.RoleAnnotator, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	f := grounding.ExportFilter{RunID: run.ID, RunName: run.Name, Format: grounding.ExportMasks, Source: grounding.VerdictSourceHuman, IncludeEmpty: true}
	var humans, seen int
	var written []string
	sum, err := db.Export(ctx, f, func(time.Time) error {
		// Verdicts and a new import land once the snapshot is taken,
		// before the export has counted or read anything.
		judge(t, db, ann.ID, run.ID, grounding.VerdictFail)
		judge(t, db, ann.ID, run.ID, grounding.VerdictPass)
		mustImport(t, db, "exp", "late.jsonl", Simple("zz-late", "retail", true, "get_order_details"))
		return nil
	}, func(tr *grounding.ExportTrajectory) error {
		if seen == 0 {
			// And more while it streams.
			judge(t, db, ann.ID, run.ID, grounding.VerdictPass)
		}
		seen++
		written = append(written, tr.ExtID)
		humans += tr.SelectedDecisions
		return nil
	})
	if err != nil {
		t.Fatalf("Export() error: %v", err)
	}
	if humans != 0 || sum.Decisions != 0 || slices.Contains(written, "zz-late") {
		t.Errorf("the export saw %d human decisions and trajectories %v: writes during it tore the snapshot", humans, written)
	}
	c := mustCollect(t, db, f)
	if c.summary.Decisions != 3 || c.summary.Trajectories != len(written)+1 {
		t.Errorf("a later export has %d human decisions in %d trajectories, want 3 in %d", c.summary.Decisions, c.summary.Trajectories, len(written)+1)
	}
	// An error from the callback stops the export and comes back.
	stop := errors.New("stop")
	n := 0
	_, err = db.Export(ctx, f, func(time.Time) error { return nil }, func(*grounding.ExportTrajectory) error {
		n++
		return stop
	})
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("Export() with a failing callback = %v after %d calls, want stop after 1", err, n)
	}
}

// testExportCanceled: a download the client abandons ends with the
// context's error, not as a whole export, nor with a weight-consistency
// error that did not happen (which an operator would chase in the log).
func testExportCanceled(t *testing.T, db *store.DB) {
	run := exportPool(t, db)
	c, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	_, err := db.Export(c, grounding.ExportFilter{RunID: run.ID, Format: grounding.ExportMasks, Source: grounding.VerdictSourceAny},
		func(time.Time) error { return nil },
		func(*grounding.ExportTrajectory) error {
			n++
			cancel() // the client went away after the first trajectory
			return nil
		})
	if !errors.Is(err, context.Canceled) || (err != nil && strings.Contains(err.Error(), "parents had target tokens")) {
		t.Errorf("a canceled export (after %d trajectories) = %v; want context.Canceled", n, err)
	}
}

func testExportRefusals(t *testing.T, db *store.DB) {
	run := exportPool(t, db)
	called := false
	begin := func(time.Time) error { called = true; return nil }
	each := func(*grounding.ExportTrajectory) error { return nil }
	for _, tt := range []struct {
		f    grounding.ExportFilter
		want error
	}{
		{grounding.ExportFilter{RunID: run.ID, Format: "parquet"}, grounding.ErrInvalid},
		{grounding.ExportFilter{RunID: run.ID, Format: grounding.ExportSFT, Source: "lead"}, grounding.ErrInvalid},
		{grounding.ExportFilter{RunID: run.ID, Format: grounding.ExportSFT, Limit: -1}, grounding.ErrInvalid},
	} {
		called = false
		_, err := db.Export(ctx, tt.f, begin, each)
		wantErr(t, fmt.Sprintf("Export(%+v)", tt.f), err, tt.want)
		if called {
			t.Errorf("Export(%+v) began before refusing", tt.f)
		}
		_, err = db.ExportSummary(ctx, tt.f)
		wantErr(t, fmt.Sprintf("ExportSummary(%+v)", tt.f), err, tt.want)
	}
	// An unknown run exports nothing (the caller resolves runs first).
	c := mustCollect(t, db, grounding.ExportFilter{RunID: run.ID + 1000, Format: grounding.ExportMasks})
	if len(c.ts) != 0 || c.summary.Trajectories != 0 {
		t.Errorf("export of an unknown run = %d trajectories", len(c.ts))
	}
}

func testAPITokens(t *testing.T, db *store.DB) {
	rita, err := db.CreateUser(ctx, "rita", grounding.RoleResearcher, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	bob, err := db.CreateUser(ctx, "bob", grounding.RoleResearcher, []byte("h"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = db.CreateAPIToken(ctx, rita.ID, "  ")
	wantErr(t, "CreateAPIToken(empty name)", err, grounding.ErrInvalid)
	_, _, err = db.CreateAPIToken(ctx, rita.ID+100, "ci")
	wantErr(t, "CreateAPIToken(unknown user)", err, grounding.ErrNotFound)

	tok, secret, err := db.CreateAPIToken(ctx, rita.ID, "nightly pipeline")
	if err != nil {
		t.Fatalf("CreateAPIToken() error: %v", err)
	}
	if !strings.HasPrefix(secret, store.TokenPrefix) || len(secret) != len(store.TokenPrefix)+43 || !strings.HasPrefix(secret, tok.Prefix) ||
		len(tok.Prefix) >= len(secret)/2 || tok.ID == 0 || tok.UserID != rita.ID || tok.Revoked() || !tok.LastUsedAt.IsZero() {
		t.Errorf("CreateAPIToken() = %+v, %q", tok, secret)
	}
	tok2, secret2, err := db.CreateAPIToken(ctx, rita.ID, "laptop")
	if err != nil || secret2 == secret {
		t.Fatalf("second CreateAPIToken() = %q, %v", secret2, err)
	}
	got, u, err := db.APITokenUser(ctx, secret)
	if err != nil || got.ID != tok.ID || u.ID != rita.ID || u.Role != grounding.RoleResearcher {
		t.Errorf("APITokenUser() = %+v, %+v, %v", got, u, err)
	}
	_, _, err = db.APITokenUser(ctx, secret+"x")
	wantErr(t, "APITokenUser(wrong)", err, grounding.ErrNotFound)

	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := db.TouchAPIToken(ctx, tok.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchAPIToken(ctx, tok.ID, at.Add(30*time.Second)); err != nil { // within the minute: kept
		t.Fatal(err)
	}
	list, err := db.APITokens(ctx, rita.ID)
	if err != nil || len(list) != 2 || list[0].ID != tok2.ID || list[1].ID != tok.ID || !list[1].LastUsedAt.Equal(at) || !list[0].LastUsedAt.IsZero() {
		t.Errorf("APITokens() = %+v, %v; want newest first, last used %v", list, err, at)
	}
	if other, err := db.APITokens(ctx, bob.ID); err != nil || len(other) != 0 {
		t.Errorf("APITokens(bob) = %+v, %v", other, err)
	}

	wantErr(t, "RevokeAPIToken(someone else's)", db.RevokeAPIToken(ctx, bob.ID, tok.ID), grounding.ErrNotFound)
	if err := db.RevokeAPIToken(ctx, rita.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.RevokeAPIToken(ctx, rita.ID, tok.ID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	_, _, err = db.APITokenUser(ctx, secret)
	wantErr(t, "APITokenUser(revoked)", err, grounding.ErrTokenRevoked)
	if _, _, err := db.APITokenUser(ctx, secret2); err != nil {
		t.Errorf("the other token stopped working: %v", err)
	}
	list, _ = db.APITokens(ctx, rita.ID)
	if !list[1].Revoked() || list[0].Revoked() {
		t.Errorf("APITokens() after revoke = %+v", list)
	}
	if reflect.DeepEqual(list[1].RevokedAt, time.Time{}) {
		t.Error("revoked token has no revocation time")
	}
}

func testExportView(t *testing.T, db *store.DB) {
	run := exportPool(t, db)
	other := mustRun(t, db, "other")
	// A view of two parents: the two RoundTrip trajectories of task-7 and
	// the one of s-ok (a view keeps certified trajectories only).
	page, err := db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: run.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	var members []grounding.ViewMember
	for _, s := range page.Rows {
		if s.ParentID == "task-7" || s.ExtID == "s-ok" {
			members = append(members, grounding.ViewMember{TrajectoryID: s.ID, RunID: run.ID, Parent: s.ParentID, Stage: "core"})
		}
	}
	if len(members) != 3 {
		t.Fatalf("fixture: %d members", len(members))
	}
	v, err := db.SaveView(ctx, grounding.CoverageView{Name: "core-8b", Scale: grounding.Scale{Name: "8B", Depth: 3}, Budget: 2,
		Method: grounding.MethodStructured, Runs: []int64{run.ID}}, members)
	if err != nil {
		t.Fatalf("SaveView() error: %v", err)
	}
	for _, format := range []grounding.ExportFormat{grounding.ExportMasks, grounding.ExportSFT, grounding.ExportCSV} {
		f := grounding.ExportFilter{RunID: run.ID, RunName: run.Name, Format: format, View: v.Name, ViewID: v.ID, Scale: v.Scale}
		c := mustCollect(t, db, f)
		checkExport(t, db, f, c)
		for _, tr := range c.ts {
			if tr.ParentID != "task-7" && tr.ExtID != "s-ok" {
				t.Errorf("%s export of view %q holds %s", format, v.Name, tr.ExtID)
			}
		}
		if len(c.ts) == 0 {
			t.Errorf("%s export of view %q is empty", format, v.Name)
		}
	}
	// The view belongs to its run only.
	c := mustCollect(t, db, grounding.ExportFilter{RunID: other.ID, Format: grounding.ExportMasks, ViewID: v.ID})
	if len(c.ts) != 0 {
		t.Errorf("view %q exported %d trajectories of another run", v.Name, len(c.ts))
	}
}
