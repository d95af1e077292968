package grounding

import (
	"testing"
	"time"
)

func TestSettle(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ev := func(id int64, kind string, user int64, v Verdict) VerdictEvent {
		return VerdictEvent{ID: id, Kind: kind, UserID: user, Verdict: v, CreatedAt: at.Add(time.Duration(id) * time.Minute)}
	}
	undo := func(id int64, user, undoes int64) VerdictEvent {
		e := ev(id, EventUndo, user, "")
		e.Undoes = undoes
		return e
	}
	enqueue := func(id int64, user int64, prev Verdict) VerdictEvent {
		e := ev(id, EventEnqueue, user, "")
		e.PrevVerdict = prev
		return e
	}
	tests := []struct {
		name      string
		events    []VerdictEvent
		required  int
		state     string
		human     Verdict
		decidedBy int64
		verdicts  int
	}{
		{"no events", nil, 1, QueueOpen, "", 0, 0},
		{"one verdict settles k=1", []VerdictEvent{ev(1, EventVerdict, 7, VerdictPass)}, 1, QueueDone, VerdictPass, 7, 1},
		{"one of two", []VerdictEvent{ev(1, EventVerdict, 7, VerdictPass)}, 2, QueueOpen, "", 0, 1},
		{"two agree", []VerdictEvent{ev(1, EventVerdict, 7, VerdictFail), ev(2, EventVerdict, 8, VerdictFail)}, 2, QueueDone, VerdictFail, 8, 2},
		{"two disagree", []VerdictEvent{ev(1, EventVerdict, 7, VerdictFail), ev(2, EventVerdict, 8, VerdictPass)}, 2, QueueConflict, "", 0, 2},
		{"skips and notes do not count", []VerdictEvent{ev(1, EventSkip, 7, ""), ev(2, EventNote, 8, "")}, 1, QueueOpen, "", 0, 0},
		{"undo reopens", []VerdictEvent{ev(1, EventVerdict, 7, VerdictPass), undo(2, 7, 1)}, 1, QueueOpen, "", 0, 0},
		{"verdict after undo counts", []VerdictEvent{ev(1, EventVerdict, 7, VerdictPass), undo(2, 7, 1), ev(3, EventVerdict, 7, VerdictFail)}, 1, QueueDone, VerdictFail, 7, 1},
		{"final settles a conflict", []VerdictEvent{ev(1, EventVerdict, 7, VerdictFail), ev(2, EventVerdict, 8, VerdictPass), ev(3, EventFinal, 9, VerdictPass)}, 2, QueueDone, VerdictPass, 9, 2},
		{"undone final is a conflict again", []VerdictEvent{ev(1, EventVerdict, 7, VerdictFail), ev(2, EventVerdict, 8, VerdictPass), ev(3, EventFinal, 9, VerdictPass), undo(4, 9, 3)}, 2, QueueConflict, "", 0, 2},
		{"lowered k: two disagree with k=1 stay a conflict", []VerdictEvent{ev(1, EventVerdict, 7, VerdictFail), ev(2, EventVerdict, 8, VerdictPass)}, 1, QueueConflict, "", 0, 2},
		{"a new round keeps the old verdict until it settles",
			[]VerdictEvent{ev(1, EventVerdict, 7, VerdictPass), enqueue(2, 9, VerdictPass), ev(3, EventVerdict, 8, VerdictFail)}, 2, QueueOpen, VerdictPass, 7, 1},
		{"a new round settles",
			[]VerdictEvent{ev(1, EventVerdict, 7, VerdictPass), enqueue(2, 9, VerdictPass), ev(3, EventVerdict, 8, VerdictFail), ev(4, EventVerdict, 7, VerdictFail)}, 2, QueueDone, VerdictFail, 7, 2},
		{"undo in an old round does not touch the new one",
			[]VerdictEvent{ev(1, EventVerdict, 7, VerdictPass), enqueue(2, 9, VerdictPass), undo(3, 7, 1)}, 1, QueueOpen, VerdictPass, 7, 0},
	}
	// The rounds user 7 can no longer undo a verdict in: closed (agreed or
	// in conflict) with another annotator's verdict, and no final verdict.
	closedFor7 := map[string]bool{"two agree": true, "two disagree": true, "undone final is a conflict again": true,
		"lowered k: two disagree with k=1 stay a conflict": true, "a new round settles": true}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Settle(tt.events, tt.required)
			if s.State != tt.state || s.Human != tt.human || s.DecidedBy != tt.decidedBy || len(s.Verdicts) != tt.verdicts {
				t.Errorf("Settle = state %s human %q by %d, %d verdicts; want %s %q by %d, %d",
					s.State, s.Human, s.DecidedBy, len(s.Verdicts), tt.state, tt.human, tt.decidedBy, tt.verdicts)
			}
			if got := s.ClosedWithOthers(7); got != closedFor7[tt.name] {
				t.Errorf("ClosedWithOthers(7) = %v, want %v", got, closedFor7[tt.name])
			}
		})
	}
}

func TestEffectiveCheck(t *testing.T) {
	tests := []struct {
		name     string
		auto     Verdict
		g        int
		workflow bool
		reasons  []string
		human    Verdict
		verdict  Verdict
		mask     int
	}{
		{"no human: the engine's", VerdictAmbiguous, 0, true, []string{ReasonChoice}, "", VerdictAmbiguous, 0},
		{"no human: a pass", VerdictPass, 1, true, nil, "", VerdictPass, 1},
		{"human pass supervises", VerdictAmbiguous, 0, true, []string{ReasonChoice}, VerdictPass, VerdictPass, 1},
		{"human fail masks", VerdictPass, 1, true, nil, VerdictFail, VerdictFail, 0},
		{"human pass never overrides the workflow", VerdictAmbiguous, 0, false, []string{ReasonOrder}, VerdictPass, VerdictPass, 0},
		{"human pass never overrides R", VerdictAmbiguous, 0, true, []string{ReasonKnowledge, ReasonTermFailed}, VerdictPass, VerdictPass, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, m := EffectiveCheck(tt.auto, tt.g, tt.workflow, tt.reasons, tt.human)
			if v != tt.verdict || m != tt.mask {
				t.Errorf("EffectiveCheck = %s, %d; want %s, %d", v, m, tt.verdict, tt.mask)
			}
		})
	}
}

func TestInQuestion(t *testing.T) {
	args := []ArgEvidence{{Path: "a", Status: StatusLiteral}, {Path: "b", Status: StatusChoice}, {Path: "c", Status: StatusNormalized}, {Path: "d", Status: StatusKnowledge}}
	got := InQuestion(args)
	if len(got) != 2 || got[0].Path != "b" || got[1].Path != "d" {
		t.Errorf("InQuestion = %+v, want b and d", got)
	}
}

func TestDeficitPriority(t *testing.T) {
	tests := []struct {
		depth, support, queued, want int
	}{
		{3, 0, 2, 3002}, // an unseen path at 8B: deficit 3
		{3, 2, 1, 1001},
		{3, 3, 5, 5}, // at target: only the queued count
		{1, 7, 2, 2}, // above target
		{3, 0, 5000, 3999},
	}
	for _, tt := range tests {
		if got := DeficitPriority(tt.depth, tt.support, tt.queued); got != tt.want {
			t.Errorf("DeficitPriority(%d, %d, %d) = %d, want %d", tt.depth, tt.support, tt.queued, got, tt.want)
		}
	}
}

func TestPotentialPath(t *testing.T) {
	steps := []PathStep{{Action: "read", Roles: []string{"id"}}, {Action: "write", Roles: []string{"id", "amount"}}, {Action: "respond"}}
	now := CanonicalPath(steps, []int{1, 0, 1}, true)
	got := PotentialPath(steps, []int{1, 0, 1}, []bool{false, true, false}, true)
	if got == now || got != CanonicalPath(steps, []int{1, 1, 1}, true) {
		t.Errorf("PotentialPath = %q (now %q); want the path with the write supervised", got, now)
	}
	if PotentialPath(steps, nil, []bool{true}, false) != "" {
		t.Errorf("an ineligible trajectory has no path")
	}
}
