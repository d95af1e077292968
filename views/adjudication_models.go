package views

// ReviewPage is the review screen: the claimed decision with its three
// panes, why it was queued, the verdict keys and the progress figures; or,
// when nothing is left, the empty state.
type ReviewPage struct {
	Filter   ReviewFilter
	Progress ReviewProgress
	Item     *ReviewItem // nil when nothing is left for this annotator
	Notice   Notice
	Undo     *UndoForm // nil when there is nothing to undo
	Empty    string
	QueueURL string
}

// Notice is the line above the item saying what the last action did.
type Notice struct {
	Text string
	Tone string // "ok", "warn" or "" for none
}

// ReviewFilter is the queue the annotator works through; every form of the
// review screen carries it so the next item comes from the same queue.
type ReviewFilter struct {
	Run    string
	Domain string
	Tool   string
	Reason string
	Label  string // "airline-gpt4o · vis.choice", or "all queues"
}

// ReviewProgress are the figures of the review header, already formatted.
type ReviewProgress struct {
	Remaining string // "37 left": open items this annotator has neither judged nor skipped
	Passed    string // "of 40 open: 3 judged or skipped by you", "" when none
	MineToday string // "14 today"
	RunShare  string // "62% adjudicated"
	RunOver   string // "of 120 items in airline-gpt4o"
	Conflicts string // "2 in review", "" when none
}

// ReviewItem is the decision being adjudicated.
type ReviewItem struct {
	ID            string
	VerdictURL    string
	SkipURL       string
	NoteURL       string
	RenewURL      string
	NoteOn        string // the decision, "trajectory:ordinal", a note is kept on if the item leaves the queue
	NoteKey       string // where the page keeps the unsent note (sessionStorage): per user and item
	TrajectoryURL string
	ExtID         string
	RunName       string
	Decision      string   // "decision 5 of 6"
	Why           []string // reason codes that made it ambiguous
	Evidence      []string // pass-evidence codes recorded with them (vis.normalized, …)
	Question      []QuestionView
	LeadNote      string // the note of a lead who queued it by hand
	Verdicts      string // "needs 2 independent verdicts · 1 given", "" for k = 1
	Card          DecisionCard
	Notes         []EventView // this annotator's notes on the item
}

// QuestionView is one argument that left the decision to a human.
type QuestionView struct {
	Path   string
	Value  string
	Status string
	Note   string // the evidence line: "one of 3 visible payment candidates; …"
}

// UndoForm offers to undo the annotator's latest verdict.
type UndoForm struct {
	URL   string
	Event string // the event id the page offers to undo
	Label string // "pass on adj-00 · decision 5"
}

// EventView is one entry of a decision's label history.
type EventView struct {
	When    string
	User    string
	Kind    string // verdict, undo, final, skip, note, enqueue
	Verdict string
	Prev    string
	Note    string
	Text    string // one readable line
}

// HistoryView is the history block of a decision card.
type HistoryView struct {
	State  string // queue state, "" when never queued
	Events []EventView
	Hidden string // "2 entries by other annotators are hidden until the item is complete", or ""
	Empty  string
}

// QueueListPage lists queue items with the filters and, for leads, the
// run's overlap setting.
type QueueListPage struct {
	Filter       QueueFilterForm
	Rows         []QueueRow
	NextURL      string
	ReviewURL    string // start reviewing this queue
	ConflictsURL string // "" for annotators
	Conflicts    string // "3 in review"
	Summary      string // "37 open items"
	Overlap      *OverlapForm
	Prioritize   *PrioritizeForm
	Notice       Notice
	Empty        string
}

// PrioritizeForm ranks a run's open items by coverage deficit at a scale.
type PrioritizeForm struct {
	Action string
	Run    string
	Scales []Option
}

// QueueFilterForm is the queue's filter form.
type QueueFilterForm struct {
	Action  string
	Runs    []Option
	Domains []Option
	Tools   []Option
	Reasons []Option
	States  []Option
}

// QueueRow is one item of the queue list.
type QueueRow struct {
	ID       string
	URL      string // the decision on its trajectory page
	ExtID    string
	RunName  string
	Decision string
	Tool     string
	Why      []string
	Evidence []string
	Question string // "payment_id = credit_card_4959530 (choice)"
	LeadNote string
	Source   string
	State    string
	Human    string // the settled verdict, "" while open
	Verdicts string // "1 / 2"
	Held     string // "held by 1", ""
	Priority string
	Created  string
}

// OverlapForm sets a run's k.
type OverlapForm struct {
	Action  string
	RunName string
	K       string
	Max     string
	Saved   bool
}

// ConflictsPage lists the items whose verdicts disagree, for a lead.
type ConflictsPage struct {
	Filter    QueueFilterForm
	Rows      []ConflictRow
	Empty     string
	QueueURL  string
	Notice    Notice
	ReviewURL string
}

// ConflictRow is one item in conflict with its verdicts side by side.
type ConflictRow struct {
	ID       string
	URL      string
	ExtID    string
	RunName  string
	Decision string
	Tool     string
	Why      []string
	Evidence []string
	Question string
	Verdicts []EventView
	Notes    []EventView
	FinalURL string
}

// AgreementPage shows inter-annotator agreement for a run.
type AgreementPage struct {
	Action  string
	Runs    []Option
	RunName string
	Overlap *OverlapForm
	Items   string // "24 items with ≥2 verdicts"
	Ratings string // "52 verdicts"
	Raw     string // "83%" over N pairs
	Pairs   string
	Alpha   string // "0.61" or "—"
	Rows    []PairRow
	Empty   string
	// Work is who did what on the run, WorkEmpty the sentence when nobody did.
	Work      []WorkRow
	WorkEmpty string
}

// WorkRow is one person's work on a run, every figure formatted.
type WorkRow struct {
	Name, Role string
	Disabled   bool
	Verdicts   string // "42" or "42 (3 final)"
	Passed     string // "30 (71%)", "—" without verdicts
	Today      string
	Week       string
	Skips      string
	Holding    string
	Last       string // date and time, "—" when none
}

// PairRow is the agreement of two annotators.
type PairRow struct {
	A, B  string
	Items string
	Raw   string
	Kappa string
}

// UsersPage lists the accounts and the form to add one (admins only).
type UsersPage struct {
	Rows []UserRow
	Form UserForm
}

// UserRow is one account.
type UserRow struct {
	Name     string
	Role     string
	Created  string
	Disabled bool
	You      bool // the admin looking at the page: no disable button
	// the row's actions (POST)
	DisableURL, EnableURL, PasswordURL string
}

// UserForm is the new-account form's state, and the page's notice.
type UserForm struct {
	Name     string
	Roles    []Option
	Error    string
	Created  string // "Created annotator ann.", or what an action did
	Password string // a new password to show once, after a reset
}
