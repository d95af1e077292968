package views

// Chrome is what the layout shows around every full page.
type Chrome struct {
	Title     string
	UserName  string // "" when nobody is logged in
	UserRole  string
	CanImport bool
	CanLead   bool   // review conflicts, set overlap, manage queues
	IsAdmin   bool   // manage accounts
	Section   string // "runs" or "import": the highlighted nav entry
}

// LoginForm is the login page's form state.
type LoginForm struct {
	Name  string
	Next  string
	Error string
}

// RunsPage lists runs.
type RunsPage struct {
	Rows      []RunRow
	CanImport bool
}

// RunRow is one run in the runs table.
type RunRow struct {
	URL          string
	Name         string
	Trajectories string
	Successes    string
	SuccessPct   string
	Decisions    string
	ToolCalls    string
	Imports      string
	Created      string
	Pass         string
	Fail         string
	Ambiguous    string
	Queued       string
	Supervised   string
	Certified    string
}

// RunPage is one run's trajectory list with its filters.
type RunPage struct {
	Name    string
	RunsURL string
	Summary string // "315 trajectories · 171 successful (54%) · …"
	Filter  FilterForm
	Results TrajectoryResults
}

// Option is one choice of a select.
type Option struct {
	Value    string
	Label    string
	Selected bool
}

// FilterForm is the trajectory filter form. It works as a plain GET form and,
// with htmx, swaps only the results region.
type FilterForm struct {
	Action   string // the run page URL
	Success  []Option
	Domains  []Option
	Tools    []Option
	Verdicts []Option
	Reasons  []Option
	Search   string
}

// TrajectoryResults is the swappable results region of a run page.
type TrajectoryResults struct {
	Rows      []TrajectoryRow
	Filtered  bool   // some filter is set (changes the empty message)
	Paged     bool   // this is not the first page
	FirstURL  string // the first page with the same filters
	Pager     Pager
	ImportURL string
}

// Pager continues a trajectory list: NextURL is the plain "next page" link,
// MoreURL the rows fragment the "load more" button appends. Both are "" on
// the last page.
type Pager struct {
	NextURL string
	MoreURL string
}

// TrajectoryRow is one trajectory in a run's list.
type TrajectoryRow struct {
	URL string
	// MatchURL and Match link the first decision that meets the list's
	// tool, verdict and reason filters ("decision 4"); "" without them.
	MatchURL  string
	Match     string
	ExtID     string
	Parent    string
	Domain    string
	Reward    string
	Success   string // "yes" / "no"
	Succeeded bool
	Messages  string
	Decisions string
	ToolCalls string
	Errors    string
	HasErrors bool
	Source    string // "file.json#3": the file's base name
	SourceAll string // the file as imported, with its directories
	Pass      string
	Fail      string
	Ambiguous string
	Queued    string
	Masked    string // supervised decisions ("mask 1")
	Workflow  bool
}

// TrajectoryPage is the decision view of one trajectory.
type TrajectoryPage struct {
	RunsURL   string
	RunURL    string
	RunName   string
	ExtID     string
	Parent    string
	Domain    string
	Reward    string
	Success   string
	Succeeded bool
	Messages  string
	Decisions string
	ToolCalls string
	Errors    string
	Source    string           // "file.json · record 3 · tau-bench"
	Check     *TrajectoryCheck // nil when the trajectory has not been checked
	Request   Content
	Tools     []ToolView
	// ToolsFrom names where Tools come from when the log records none
	// ("the airline profile"); "" when they are the log's own.
	ToolsFrom string
	// Tabs filter the decisions by verdict; none before the checks ran.
	Tabs  []VerdictTab
	Chunk DecisionChunk
}

// VerdictTab is one "fail 2" link above a trajectory's decisions.
type VerdictTab struct {
	Label   string // "all", "fail", …
	Verdict string // "" for all: the color of the count
	Count   string
	URL     string
	Active  bool
	Empty   bool // no decision has this verdict
}

// ToolView is one tool schema the agent saw.
type ToolView struct {
	Name        string
	Description string
	Parameters  string // pretty JSON
}

// DecisionChunk is one page of decision cards. The next page loads when
// MoreURL's placeholder is revealed; NextURL is the plain-link fallback.
type DecisionChunk struct {
	Cards   []DecisionCard
	MoreURL string
	NextURL string
	Empty   string // shown when the trajectory has no decisions at all
}

// DecisionCard is one decision with its three panes.
type DecisionCard struct {
	Check   *CheckView // nil when not checked
	ID      string     // "d7": the anchor
	Title   string     // "decision 8 of 12"
	Message string     // "message 14"
	Kind    string     // the tool name, or "text reply"
	Error   bool       // the observation is an error
	Visible VisiblePane
	Action  ActionPane
	Hidden  HiddenPane
	// HistoryURL loads the decision's label history; EnqueueURL, set for
	// leads only, sends the decision to the human queue.
	HistoryURL string
	EnqueueURL string
	// JudgeURL opens the review screen on this decision's queue item,
	// while it waits for a human verdict; "" otherwise.
	JudgeURL string
}

// VisiblePane is what the agent could see before the decision: the last few
// visible messages, and a button to load the earlier ones.
type VisiblePane struct {
	Before   string // "before message 14"
	Earlier  EarlierButton
	Messages []MessageView
}

// EarlierButton loads visible messages that precede the ones shown.
// Count "" means there are none.
type EarlierButton struct {
	Count string // "24"
	URL   string
}

// MessageView is one log message as shown in a pane.
type MessageView struct {
	Index      string // "14"
	Role       string // "user", "assistant", "tool", "system"
	Name       string // the tool name of a tool message
	HiddenKind string
	Error      bool
	Content    Content
	Calls      []CallView
}

// CallView is one tool call inside an assistant message.
type CallView struct {
	Name        string
	Args        Content
	ArgsInvalid bool
}

// Content is a piece of (untrusted) log text ready to show: pretty-printed
// when it is JSON, cut when long (FullURL then loads the rest).
type Content struct {
	Text      string
	Mono      bool
	Truncated bool
	Size      string // "12,345 characters", set when truncated or RawURL is set
	FullURL   string
	Empty     bool
	// RawURL, when set, downloads the whole content, of which Text is only
	// the start (Shown says how much): "show all" of a content too long
	// for a page.
	RawURL string
	Shown  string
}

// ActionPane is what the agent did at the decision.
type ActionPane struct {
	Reply       bool
	Tool        string
	Args        Content
	ArgsInvalid bool
	Text        Content // the text of a reply
	Observation *MessageView
}

// HiddenPane is what the agent could not see at the decision.
type HiddenPane struct {
	Items []HiddenItem
}

// HiddenItem is one hidden message or hidden collector entry.
type HiddenItem struct {
	Kind    string // hidden_kind or the entry kind
	Message string // index of a hidden message ("9"); "" for a hidden entry
	Entry   string // index of a hidden entry ("0"); "" for a hidden message
	Where   string // "message 9" or "collector context, from the start"
	Summary string // the first ~100 characters
	Content Content
}

// ImportPage is the upload form and, after a POST, its outcome.
type ImportPage struct {
	Form   ImportForm
	Result *ImportResult
}

// ImportForm is the upload form's state.
type ImportForm struct {
	RunName  string
	Formats  []Option
	Limit    string // "1 GiB"
	MaxBytes string // the same limit in bytes, for the browser-side check
}

// ImportResult is the outcome panel of an upload. Error is set when the
// import was refused (and then nothing was added).
type ImportResult struct {
	Error        string
	Duplicate    string // "this file was already imported into run X on DATE; nothing was added"
	File         string
	Format       string
	RunName      string
	RunURL       string
	Trajectories string
	Messages     string
	Decisions    string
	// Note replaces the counts for files that hold no trajectories (SWE-bench
	// metadata, evaluation results): "78 instances of SWE-bench metadata".
	Note string
}

// TrajectoryCheck is the trajectory-level result of the grounding checks.
type TrajectoryCheck struct {
	R          string // "1" / "0"
	Workflow   bool
	Reasons    []string // trajectory-level codes
	Violations []string // one line per broken workflow rule
	Counts     string   // "9 pass · 2 fail · 1 ambiguous (1 queued) · 8 supervised"
	Profile    string   // "airline@1"
	Engine     string
	Checked    string // "2026-11-29 14:03 UTC"
}

// CheckView is one decision's check as the card shows it.
type CheckView struct {
	Verdict     string // pass | fail | ambiguous: the effective verdict
	Human       bool   // the verdict is a human's
	AutoVerdict string // the engine's, shown when a human overrode it
	E, V, W, R  string // "1", "0" or "?" for e_t, v_t, workflow, R_τ
	Mask        string // "1" / "0"
	MaskNote    string // "0 until adjudicated" for queued decisions
	Queued      bool
	Reasons     []string
	Detail      string
	Flow        []string // the workflow rules this decision broke, each with why
	Action      string   // semantic action
	Args        []ArgView
}

// ArgView is one argument (or one value stated in a text reply) and where
// its value was found. Msg/Needle point the visible pane at the evidence;
// HiddenEntry/HiddenMsg point the hidden pane at it.
type ArgView struct {
	Path        string
	Value       string
	Role        string
	Status      string // literal, normalized, hidden_only, ...
	Tone        string // "ok", "warn", "bad": colours the status
	Evidence    string // one readable line; after the record link when Record is set
	Record      string // a policy finding's record: its visible message index, or ""
	Msg         string // visible message index holding the evidence, or ""
	Needle      string // the text to highlight in that message
	HiddenEntry string // hidden entry index, or ""
	HiddenMsg   string // hidden message index, or ""
	Question    bool   // the argument left the decision to a human (review pre-highlights it)
}
