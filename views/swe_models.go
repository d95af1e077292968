package views

// SWEComparePage is the run comparison: runs side by side on the
// diagnostics of SPEC §5, each figure with what it is over.
type SWEComparePage struct {
	Form         SWECompareForm
	Table        SWECompareTable
	InstancesURL string
}

// SWECompareForm chooses the runs and the baseline. It works as a plain GET
// form and, with htmx, swaps only the table.
type SWECompareForm struct {
	Action string
	Runs   []SWERunChoice
}

// SWERunChoice is one run of the form.
type SWERunChoice struct {
	ID           string
	Name         string
	Trajectories string
	Selected     bool
	Baseline     bool
}

// SWECompareTable is the swappable comparison table.
type SWECompareTable struct {
	Empty        string // why there is nothing to compare, when there is not
	BaselineName string
	Rows         []SWECompareRow
}

// SWECompareRow is one run of the comparison.
type SWECompareRow struct {
	RunName      string
	TimelineURL  string
	Baseline     bool
	Trajectories string
	Instances    string
	Paired       string // "24 shared with the baseline"
	Cells        []SWEMetricCell
	Share        string // "LOC 30% · REP 45% · PATCH 25%"
	ShareOver    string // "over 1,204 steps"
}

// SWEMetricCell is one figure of the comparison: a mean, what it is over,
// and for a non-baseline run its paired difference to the baseline.
type SWEMetricCell struct {
	Metric    string // "localization", …
	Value     string // "0.52", or "—"
	Over      string // "over 24 instances" or "no reference"
	Delta     string // "+0.04", "−0.10", "±0"; "" for the baseline or nothing paired
	DeltaOver string // "paired on 20"
	Sign      string // "up", "down" or "zero"
}

// SWERunPage is one run's stage timelines: one bar per trajectory, one cell
// per step.
type SWERunPage struct {
	RunName    string
	RunURL     string
	CompareURL string
	Summary    string
	Rows       []SWETimelineRow
	NextURL    string
	FirstURL   string
	Paged      bool
}

// SWETimelineRow is one trajectory's bar and its diagnostics in short.
type SWETimelineRow struct {
	ExtID        string
	URL          string
	Instance     string
	InstanceURL  string
	Steps        string
	Localization string
	Reproduction string
	Verification string
	Completed    string
	Resolved     string
	Bar          SWEBar
}

// SWEBar is a stage timeline. DetailID is the element the step details of
// an htmx click land in.
type SWEBar struct {
	Label    string // accessible name of the bar
	DetailID string
	Cells    []SWECell
}

// SWECell is one step of a bar.
type SWECell struct {
	Stage       string // "loc", "rep" or "patch": the CSS class
	Letter      string // L, R, P
	Fallback    bool
	Title       string // "step 5: PATCH → REP (fall-back)"
	URL         string // the trajectory page at this step
	FragmentURL string // the step's detail fragment
}

// SWETrajectoryPage is one trajectory's diagnostics, each linking to the
// steps that justify it, its bar and its steps.
type SWETrajectoryPage struct {
	ExtID       string
	RunName     string
	TimelineURL string
	CompareURL  string
	Source      string
	Instance    string
	InstanceURL string // "" without stored metadata
	Figures     []SWEFigure
	Share       string
	Bar         SWEBar
	Steps       []SWEStepView
}

// SWEFigure is one diagnostic: its value, the evidence in words and the
// steps that justify it.
type SWEFigure struct {
	Name   string
	Value  string
	Kind   string // "yes", "no", "none" (not applicable / no reference), "num"
	Detail string
	Links  []SWELink
}

// SWELink points at a step of the page.
type SWELink struct {
	Label string
	URL   string
}

// SWEStepView is one step with what the router made of it.
type SWEStepView struct {
	Anchor      string // element id, "step-4"
	Number      string
	Stage       string // "LOC"
	StageClass  string // "loc"
	Fallback    bool
	Class       string // "repro-run"
	Tool        string
	Short       string // the action's first line, shortened, for the summary
	Action      string
	Observation string
	Cut         bool // the observation was shortened
	Failure     string
	Why         string // the classification
	RouteWhy    string // the router's rule
	Open        bool
}

// SWEInstancesPage lists the stored instances with their evidence sizes.
type SWEInstancesPage struct {
	Rows      []SWEInstanceRow
	Medians   SWEInstanceRow // Files holds what the medians are over
	NextURL   string
	Tokenizer string
}

// SWEInstanceRow is one instance of the list.
type SWEInstanceRow struct {
	URL   string
	ID    string
	Repo  string
	Files string
	LOC   string
	REP   string
	PATCH string
	Total string
}

// SWEInstancePage is one instance's evidence slices.
type SWEInstancePage struct {
	ID        string
	Repo      string
	ListURL   string
	Tokenizer string
	Slices    []SWESlice
	Total     string
}

// SWESlice is one evidence slice.
type SWESlice struct {
	Name   string // "LOC evidence"
	What   string // "files and line ranges the fix touches"
	Tokens string
	Items  []string // spans or tests
	Text   string
	TestID string
}
