package grounding

import (
	"fmt"
	"slices"
	"time"
)

// Queue item states. An item is open while it still needs verdicts,
// conflict when its k verdicts disagree (a lead decides), done when settled.
const (
	QueueOpen     = "open"
	QueueConflict = "conflict"
	QueueDone     = "done"
)

// Queue item sources: queued by the checks at import or recheck, or sent by
// a lead ("needs a human look").
const (
	SourceAuto   = "auto"
	SourceManual = "manual"
)

// Kinds of verdict events (the append-only label history).
const (
	EventVerdict = "verdict" // an annotator's verdict
	EventUndo    = "undo"    // cancels one earlier verdict or final (Undoes)
	EventFinal   = "final"   // a lead's verdict on a conflict, with a reason
	EventSkip    = "skip"    // the annotator passed the item on
	EventNote    = "note"    // a free-text note
	EventEnqueue = "enqueue" // a lead sent the decision to the queue: a new round
)

// MaxOverlap is the largest number of independent verdicts a run may ask
// per item.
const MaxOverlap = 10

// MaxNote is the longest note, in bytes.
const MaxNote = 4000

// Adjudication refusals. Each wraps ErrConflict, so a caller that does not
// know them still answers 409; handlers turn them into precise messages.
var (
	// ErrNotClaimed: the user holds no claim on the item (never handed to
	// them, released when they took another, or skipped).
	ErrNotClaimed = fmt.Errorf("%w: the item is not claimed by this user", ErrConflict)
	// ErrClaimExpired: the user's lease ran out and the item's slots went
	// to other annotators meanwhile.
	ErrClaimExpired = fmt.Errorf("%w: the claim expired and the item went to another annotator", ErrConflict)
	// ErrItemClosed: the item no longer takes verdicts (settled, or waiting
	// for a lead) though the user's claim was still there.
	ErrItemClosed = fmt.Errorf("%w: the item no longer takes verdicts", ErrConflict)
	// ErrNothingToUndo: the user has no verdict left to undo, or the one
	// the page offered is already undone.
	ErrNothingToUndo = fmt.Errorf("%w: nothing to undo", ErrConflict)
	// ErrFinalized: a lead's final verdict stands on the item, so an
	// annotator's verdict there can no longer be undone.
	ErrFinalized = fmt.Errorf("%w: a lead set the final verdict", ErrConflict)
	// ErrRoundClosed: the verdict closed the item's round together with
	// other annotators' verdicts (Settlement.ClosedWithOthers).
	ErrRoundClosed = fmt.Errorf("%w: the item's round closed with other annotators' verdicts", ErrConflict)
	// ErrSkipTaken: a skip cannot be taken back: the item went to other
	// annotators meanwhile (its slots are taken) or it was settled.
	ErrSkipTaken = fmt.Errorf("%w: the skipped item went to other annotators", ErrConflict)
	// ErrNotConflict: a final verdict was asked for an item that is not
	// waiting for one.
	ErrNotConflict = fmt.Errorf("%w: the item is not in conflict", ErrConflict)
)

// QueueItem is one decision waiting for (or given) human verdicts.
type QueueItem struct {
	ID           int64
	RunID        int64
	TrajectoryID int64
	Ordinal      int
	RunName      string
	ExtID        string // the trajectory's log id
	Domain       string
	Tool         string // "" for a text reply
	Source       string // SourceAuto or SourceManual
	Why          []string
	Note         string        // the lead's note on a manual item
	Args         []ArgEvidence // the arguments in question (see InQuestion)
	Priority     int
	Required     int // k: verdicts this round needs
	State        string
	Verdicts     int // annotator verdicts standing in this round
	Holders      int // live claims without a verdict yet
	Human        Verdict
	CreatedAt    time.Time
}

// QueueFilter selects queue items. State "" means open; "all" any state.
// Paging is keyset: After is the Next of the previous page.
type QueueFilter struct {
	RunID  int64
	Domain string
	Tool   string
	Reason string
	State  string
	After  string
	Limit  int // default 50, max 500
	// NoConflicts leaves out the items in conflict (an annotator's lists:
	// conflicts are for leads).
	NoConflicts bool
	// Decision, when set, keeps only the item of that decision: the
	// trajectory page's "judge it" link claims that one item.
	Decision *DecisionRef
}

// DecisionRef names one decision of a stored trajectory.
type DecisionRef struct {
	TrajectoryID int64
	Ordinal      int
}

// QueuePage is one page of queue items, best first (priority, then oldest).
type QueuePage struct {
	Items []QueueItem
	Next  string // "" on the last page
}

// Claim is a server-side lease on an item by one annotator.
type Claim struct {
	Item      QueueItem
	UserID    int64
	ClaimedAt time.Time
	ExpiresAt time.Time
}

// VerdictEvent is one entry of the label history. Events are never updated
// or deleted; the current verdict is derived from them (Settle).
type VerdictEvent struct {
	ID           int64
	ItemID       int64
	RunID        int64
	TrajectoryID int64
	ExtID        string // the trajectory's log id, where a reader sets it
	Ordinal      int
	UserID       int64
	UserName     string
	Kind         string
	Verdict      Verdict // the verdict given; for an undo, the one restored
	PrevVerdict  Verdict // the decision's human verdict before the event
	Note         string
	Undoes       int64  // for an undo: the event it cancels
	UndoneKind   string // for an undo that Undo returns: the kind of the event it cancelled
	CreatedAt    time.Time
}

// SubmitResult is what recording a verdict did. Repeated means the user had
// already given a verdict on the item (a double click, another tab): Event
// is that earlier one and nothing new was recorded.
type SubmitResult struct {
	Event    VerdictEvent
	Repeated bool
	State    string  // the item's state afterwards
	Human    Verdict // the decision's human verdict afterwards
	// Closed: the verdict closed the item's round together with other
	// annotators' verdicts (see Settlement.ClosedWithOthers), so it can no
	// longer be undone.
	Closed bool
}

// Progress are the figures the review screen shows.
type Progress struct {
	MineToday int // my verdicts since 00:00 UTC, undone ones excluded
	Remaining int // open items matching the filter
	Yours     int // of which the user has neither judged nor skipped this round
	Items     int // queue items of the run (all runs when no run is chosen)
	Done      int // of which settled
	Conflicts int // of which waiting for a lead
}

// AnnotatorWork is what one person did on a run (or on every run), for the
// lead who plans the work. Verdicts, final verdicts and skips count while
// they stand: an undone one is not counted, as on the review screen.
type AnnotatorWork struct {
	UserID   int64
	Name     string
	Role     string
	Disabled bool
	Verdicts int       // verdicts and final verdicts
	Passed   int       // of which pass ("grounded")
	Finals   int       // of which final verdicts a lead set on a conflict
	Today    int       // of Verdicts, since 00:00 UTC
	Week     int       // of Verdicts, in the last 7 days
	Skips    int       // items skipped
	Holding  int       // items claimed now and not yet judged or skipped
	Last     time.Time // the latest of their standing verdicts and skips; zero when none
}

// DecisionHistory is a decision's queue item (nil when it never had one)
// and every event about it, oldest first.
type DecisionHistory struct {
	Item   *QueueItem
	Events []VerdictEvent
}

// ConflictItem is an item whose verdicts disagree, with the verdicts and
// notes of its current round, for the lead who settles it.
type ConflictItem struct {
	Item     QueueItem
	Verdicts []VerdictEvent // one standing verdict per annotator
	Notes    []VerdictEvent
}

// ValidOverlap reports whether k verdicts per item is an acceptable overlap.
func ValidOverlap(k int) bool { return k >= 1 && k <= MaxOverlap }

// Settlement is the state of an item derived from its events.
type Settlement struct {
	State string
	// Human is the decision's human verdict: the round's agreed or final
	// verdict once settled, else the previous round's ("" when none).
	Human     Verdict
	DecidedBy int64 // who settled Human (0 when Human is "")
	DecidedAt time.Time
	// Verdicts are the standing annotator verdicts of the current round,
	// one per annotator, in the order they were given.
	Verdicts []VerdictEvent
	Final    *VerdictEvent // the standing final verdict of the round
	Round    int64         // the enqueue event that opened the round (0: the first)
}

// Settle derives an item's state from all of its events, oldest first, and
// the number of verdicts a round requires. An enqueue event opens a new
// round: the previous round's outcome stays the human verdict until the new
// one settles. In a round, an undo cancels the event it names; each
// annotator's latest standing verdict counts; a standing final verdict
// settles the round; otherwise required agreeing verdicts settle it and
// required verdicts that disagree make a conflict. It is pure.
func Settle(events []VerdictEvent, required int) Settlement {
	var s Settlement
	var base Settlement // the outcome of the rounds before the current one
	for _, e := range events {
		switch e.Kind {
		case EventEnqueue:
			base = roundOutcome(s, e.PrevVerdict)
			s = Settlement{Round: e.ID}
		case EventVerdict:
			s.Verdicts = slices.DeleteFunc(s.Verdicts, func(v VerdictEvent) bool { return v.UserID == e.UserID })
			s.Verdicts = append(s.Verdicts, e)
		case EventFinal:
			f := e
			s.Final = &f
		case EventUndo:
			// An undo cancels an event of its own round only.
			s.Verdicts = slices.DeleteFunc(s.Verdicts, func(v VerdictEvent) bool { return v.ID == e.Undoes })
			if s.Final != nil && s.Final.ID == e.Undoes {
				s.Final = nil
			}
		}
	}
	return settleRound(s, base, required)
}

// roundOutcome is the human verdict a finished round left (human, as the
// enqueue event that closed it recorded) and who gave it. A round is only
// closed once settled, so it ended with a final verdict or agreeing ones;
// the round's own k may have differed from today's, so it is not re-derived.
func roundOutcome(s Settlement, human Verdict) Settlement {
	out := Settlement{Human: human}
	if human == "" {
		return out
	}
	if s.Final != nil && s.Final.Verdict == human {
		out.DecidedBy, out.DecidedAt = s.Final.UserID, s.Final.CreatedAt
		return out
	}
	for _, v := range s.Verdicts {
		if v.Verdict == human {
			out.DecidedBy, out.DecidedAt = v.UserID, v.CreatedAt
		}
	}
	return out
}

func settleRound(s, base Settlement, required int) Settlement {
	s.State, s.Human, s.DecidedBy, s.DecidedAt = QueueOpen, base.Human, base.DecidedBy, base.DecidedAt
	switch {
	case s.Final != nil:
		s.State, s.Human, s.DecidedBy, s.DecidedAt = QueueDone, s.Final.Verdict, s.Final.UserID, s.Final.CreatedAt
	case len(s.Verdicts) >= max(required, 1):
		agreed := true
		for _, v := range s.Verdicts[1:] {
			agreed = agreed && v.Verdict == s.Verdicts[0].Verdict
		}
		if agreed {
			last := s.Verdicts[len(s.Verdicts)-1]
			s.State, s.Human, s.DecidedBy, s.DecidedAt = QueueDone, s.Verdicts[0].Verdict, last.UserID, last.CreatedAt
		} else {
			s.State = QueueConflict
		}
	}
	return s
}

// ClosedWithOthers reports whether the round is closed (settled by
// agreement, or in conflict) with a standing verdict of an annotator other
// than userID in it. An annotator's verdict in such a round can no longer
// be undone: by then the outcome tells them what the others said (agreement
// or conflict), and an undo would let them change their verdict to match,
// turning a conflict a lead should see into a silent agreement. A lead's
// final verdict changes the outcome instead.
func (s Settlement) ClosedWithOthers(userID int64) bool {
	if s.State == QueueOpen || s.Final != nil {
		return false
	}
	for _, v := range s.Verdicts {
		if v.UserID != userID {
			return true
		}
	}
	return false
}

// EffectiveCheck is a decision's effective verdict and mask given its
// automatic result and a human verdict ("" for none). A human verdict
// overrides g_t only: mask = R · workflow · g, with g = 1 for a human pass
// and 0 for a human fail (SPEC §1, §3). R is 0 when the decision carries
// term.failed.
func EffectiveCheck(auto Verdict, g int, workflow bool, reasons []string, human Verdict) (Verdict, int) {
	r := !slices.Contains(reasons, ReasonTermFailed)
	verdict := auto
	switch human {
	case VerdictPass:
		verdict, g = VerdictPass, 1
	case VerdictFail:
		verdict, g = VerdictFail, 0
	}
	if r && workflow && g == 1 {
		return verdict, 1
	}
	return verdict, 0
}

// InQuestion returns the arguments whose evidence left the decision to a
// human: every one whose status is neither a plain nor a normalized,
// derived, enum or free-text match.
func InQuestion(args []ArgEvidence) []ArgEvidence {
	var out []ArgEvidence
	for _, a := range args {
		if !slices.Contains(SettledStatuses, a.Status) {
			out = append(out, a)
		}
	}
	return out
}

// SettledStatuses are the evidence statuses that settle a value by
// themselves; every other status puts its argument in question.
var SettledStatuses = []string{StatusLiteral, StatusNormalized, StatusDerived, StatusEnum, StatusFreeText}

// CanLead reports whether role may review conflicts, set overlap and manage
// queues (researchers and admins).
func CanLead(role string) bool { return role == RoleAdmin || role == RoleResearcher }

// PotentialPath is the canonical path a trajectory would have if a human
// approved its pending decisions (pending[i] for steps[i]): what adjudicating
// it could add to the pool. masks are the current effective masks.
func PotentialPath(steps []PathStep, masks []int, pending []bool, eligible bool) string {
	m := make([]int, len(steps))
	for i := range m {
		if i < len(masks) {
			m[i] = masks[i]
		}
		if i < len(pending) && pending[i] {
			m[i] = 1
		}
	}
	return CanonicalPath(steps, m, eligible)
}

// DeficitPriority ranks a queue item by value (SPEC §4): the deficit
// max(0, depth − support) of the path its trajectory would reach, first,
// then the number of its trajectory's queued decisions (capped at 999), so
// human time goes where it adds the most missing support.
func DeficitPriority(depth, support, queued int) int {
	return max(0, depth-support)*1000 + min(max(queued, 0), 999)
}
