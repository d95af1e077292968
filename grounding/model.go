package grounding

import "time"

// Roles of a groundwork account.
const (
	RoleAdmin      = "admin"
	RoleResearcher = "researcher"
	RoleAnnotator  = "annotator"
)

// ValidAccountRole reports whether r is one of the account roles.
func ValidAccountRole(r string) bool {
	return r == RoleAdmin || r == RoleResearcher || r == RoleAnnotator
}

// User is a groundwork account. PasswordHash is a bcrypt hash.
type User struct {
	ID           int64
	Name         string
	Role         string
	PasswordHash []byte
	CreatedAt    time.Time
	// Disabled: an admin disabled the account; it cannot log in, and its
	// sessions and API tokens were ended when it was disabled.
	Disabled bool
}

// Run is a named set of imported trajectories, with counters maintained at
// import time so listing runs never counts over the pool.
type Run struct {
	ID           int64
	Name         string
	CreatedAt    time.Time
	Trajectories int
	Successes    int
	Decisions    int
	ToolCalls    int
	Messages     int
	Imports      int
	// Check figures (effective verdicts: a human verdict replaces the
	// automatic one).
	Pass, Fail, Ambiguous int // decisions by verdict
	Queued                int // decisions waiting for a human
	Supervised            int // decisions with mask 1
	Certified             int // trajectories with R=1, workflow ok, ≥1 mask 1
}

// TrajectorySummary is one row of a run's trajectory list.
type TrajectorySummary struct {
	ID          int64 // database id, used in URLs
	RunID       int64
	ExtID       string // the log's own trajectory id
	ParentID    string
	Domain      string
	Success     bool
	Reward      *float64
	Messages    int
	Decisions   int
	ToolCalls   int
	Errors      int // error observations
	SourceFile  string
	SourceIndex int
	SourceLine  int
	// Check figures of the trajectory.
	WorkflowOK            bool
	Certified             bool
	Pass, Fail, Ambiguous int
	Queued                int
	Supervised            int
	// Match is the ordinal of the trajectory's first decision that meets a
	// list's tool, verdict and reason filter; nil when the list has none.
	Match *int
}

// TrajectoryFilter selects a page of a run's trajectories, in the natural
// order of their ExtIDs (task2 before task10). Paging is keyset: After is
// the ExtID of the last row of the previous page.
//
// Tool, Verdict and Reason are conditions on a decision: given together,
// one decision of the trajectory must meet all of them.
type TrajectoryFilter struct {
	RunID   int64
	Success *bool  // nil: any
	Domain  string // "": any
	Tool    string // "": any; else trajectories with a decision calling it
	Search  string // "": any; else ExtID contains it (case-insensitive)
	Verdict string // "": any; else trajectories with a decision of that effective verdict
	Reason  string // "": any; else trajectories with a decision carrying that reason code
	After   string
	Limit   int // default 50, max 500
}

// TrajectoryPage is one page of a filtered trajectory list. Next is the
// cursor for the following page, "" on the last page.
type TrajectoryPage struct {
	Rows []TrajectorySummary
	Next string
}

// TrajectoryHeader is a stored trajectory without its messages: enough to
// render the top of the trajectory page and to compute projections of one
// decision with the messages loaded separately.
type TrajectoryHeader struct {
	TrajectorySummary
	RunName string
	Request string
	Tools   []Tool
	Hidden  []HiddenEntry
	Meta    []byte // raw JSON or nil
	Format  string
	// The check that produced the stored verdicts.
	EngineVersion string
	Profile       string // name@version
	CheckedAt     time.Time
	FlowReasons   []string    // trajectory-level reason codes
	Violations    []Violation // broken workflow rules
}

// StoredDecision is a decision with its stored check: the automatic result
// of the engine and the effective verdict and mask once a human verdict
// (HumanVerdict, "" when none) replaces g_t.
type StoredDecision struct {
	Decision
	Action       string
	E, V, G      int // automatic e_t, v_t, g_t
	FlowOK       bool
	AutoVerdict  Verdict
	HumanVerdict Verdict // "", VerdictPass or VerdictFail
	Verdict      Verdict // effective
	Mask         int     // effective
	Queued       bool
	Reasons      []string
	Args         []ArgEvidence
	Detail       string
}

// CheckDefault checks t with the embedded profile of its domain; it is what
// import and recheck store.
func CheckDefault(t *Trajectory) Result { return Check(t, ProfileFor(t.Domain)) }

// ImportResult reports what one file's import did. When Duplicate is true the
// same content (by SHA-256) was imported before, into PreviousRun, and
// nothing was added.
type ImportResult struct {
	File         string
	Format       string
	SHA256       string
	Bytes        int64
	RunID        int64
	RunName      string
	Trajectories int
	Messages     int
	Decisions    int
	Duplicate    bool
	PreviousRun  string
	PreviousAt   time.Time
}

// MessageWindow is what a page of decisions shows of a trajectory, read at
// once: every message (visible or hidden) with Lo <= index <= the last
// index asked for, ascending; how many visible messages come before Lo; and
// every hidden message before the index asked for, ascending (the collector
// context the decisions had by then).
type MessageWindow struct {
	Lo      int
	Earlier int
	Range   []Message
	Hidden  []Message
}
