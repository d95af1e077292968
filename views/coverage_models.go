package views

import "github.com/a-h/templ"

// CoveragePage is the coverage page of a pool: one run or several.
type CoveragePage struct {
	// Runs is the run picker; NoRuns is set when nothing was imported yet.
	Runs   []RunChoice
	NoRuns bool
	// Scales is the scale picker (links keeping the runs and filters).
	Scales []ScaleChoice
	Region CoverageRegion
	// RegionView, when set, is Region already rendered (a cached
	// CoverageRegionView of it) and is written instead of rendering it again.
	RegionView templ.Component
	// CanEdit shows the scale settings and the save-view form
	// (researchers and admins).
	CanEdit bool
	Scale   ScaleForm
	Views   []ViewRow
	// Note explains a default pool ("No run chosen: showing …").
	Note string
}

// RunChoice is one run of the picker.
type RunChoice struct {
	ID           string
	Name         string
	Trajectories string
	Checked      bool
}

// ScaleChoice is one model scale of the picker.
type ScaleChoice struct {
	Name     string
	Depth    string
	URL      string
	Selected bool
}

// CoverageRegion is the part of the coverage page that depends on the pool
// and the scale.
type CoverageRegion struct {
	// Pool says what the figures are over: "airline-gpt4o + retail · 315
	// trajectories".
	Pool  string
	Scale string // "8B → target depth 3"
	// RunHidden are the run ids, for forms that keep the pool.
	RunHidden []string
	ScaleName string
	Figures   []Figure
	Paths     []Figure // distinct paths and how they sit against the target
	Heatmaps  []Heatmap
	Deficits  DeficitTable
	Selection SelectionForm
	// Empty, when set, says why there is nothing to map (no certified
	// trajectory in the pool) and replaces the heatmaps, the deficit table
	// and the selection simulator.
	Empty string
}

// Figure is one number of the pool audit with what it is over.
type Figure struct {
	Label  string
	Value  string
	Detail string
	TestID string
}

// Heatmap is a matrix of counts drawn as an SVG. Cells[r][c] is row r,
// column c.
type Heatmap struct {
	ID       string
	Title    string
	Caption  string // what a cell counts and where a click leads
	RowTitle string
	ColTitle string
	Rows     []string
	Cols     []string
	Cells    [][]HeatCell
	// Legend shows the color bins; DeficitNote explains the deficit mark
	// ("" when the heatmap marks none).
	Legend      []LegendBin
	DeficitNote string
	// Wide cells hold long column labels horizontally.
	CellWidth int
}

// HeatCell is one cell: its value (shown when not zero), its color bin
// (0 = none, 1–6 light to dark), its tooltip with the exact numbers and the
// trajectories behind it.
type HeatCell struct {
	Value   string
	Bin     int
	Title   string
	URL     string
	Deficit bool
}

// LegendBin is one color of a heatmap legend.
type LegendBin struct {
	Bin   int
	Label string
}

// DeficitTable lists canonical paths with their support against the target.
type DeficitTable struct {
	Rows []DeficitRow
	// Summary: "71 of 72 paths are below the target depth 3".
	Summary string
	// Atoms is the filter; Filtered says some atom is checked.
	Atoms    []AtomChoice
	Filtered bool
	All      bool // also paths at or above the target
	// Action is the form's plain URL, FragmentURL its htmx one; Hidden are
	// the pool and scale fields.
	Action      string
	FragmentURL string
	Hidden      []Hidden
	MoreURL     string
	Shown       string // "50 of 188"
}

// Hidden is a hidden form field.
type Hidden struct {
	Name  string
	Value string
}

// AtomChoice is one atom of the deficit filter.
type AtomChoice struct {
	Value   string
	Label   string // "recover · 9 paths"
	Checked bool
}

// DeficitRow is one canonical path.
type DeficitRow struct {
	ID       string
	Steps    []PathStepView
	Key      string
	Support  string
	Target   string
	Deficit  string
	Under    bool
	Examples []Link
	MoreURL  string // every trajectory of the path
	Atoms    []string
}

// PathStepView is one token of a path, with a class by kind (call, reply,
// error, recover, end).
type PathStepView struct {
	Text  string
	Class string
}

// Link is a labelled URL.
type Link struct {
	Label string
	URL   string
}

// SelectionForm asks for a budget and shows the comparison once run.
type SelectionForm struct {
	Action    string
	Hidden    []Hidden
	Budget    string
	MaxBudget string // parents with a certified trajectory
	// MaxBudgetText is MaxBudget for reading: 15,781.
	MaxBudgetText string
	Cores         []Option
	Error         string
	Result        *SelectionResult
}

// SelectionResult compares structured and random selection of one budget.
type SelectionResult struct {
	Budget     string
	Pool       string // "big", "airline-gpt4o + retail-grok3"
	Scale      string
	Seeds      string // "10 seeds (1–10)"
	Rows       []SelectionRow
	Stages     []Figure // parents picked per stage
	MissNote   string   // "a path seen once is missed by random selection with probability 1 − B/N = 0.57"
	Save       SaveViewForm
	ShowSave   bool
	PoolPaths  string
	PoolAtoms  string
	PoolCapped string
}

// SelectionRow is one metric, structured next to random.
type SelectionRow struct {
	Metric     string
	Structured string
	Random     string // "71.2 ± 4.1 (65–78)"
	Pool       string // the whole pool's value
	Better     bool   // structured beats the random mean
	TestID     string
}

// SaveViewForm saves a selection as a named view.
type SaveViewForm struct {
	Action string
	Hidden []Hidden
	Name   string
	Error  string
	Status string // "conflict" or "invalid", for styling and tests
}

// ScaleForm adds or changes a scale, or deletes one.
type ScaleForm struct {
	Action       string
	DeleteAction string
	Back         string
	Name         string
	Depth        string
	Error        string
	Scales       []ScaleChoice
}

// ViewRow is one saved view in a list.
type ViewRow struct {
	Name    string
	URL     string
	Scale   string
	Method  string
	Budget  string
	Parents string
	Rows    string
	Runs    string
	Created string
}

// CoverageTrajectoriesPage lists the trajectories behind a heatmap cell or a
// path.
type CoverageTrajectoriesPage struct {
	Title   string
	BackURL string
	Count   string
	// Unit, for a domain × action cell, says the heatmap counted decisions
	// where this list counts trajectories.
	Unit    string
	Rows    []CoverageTrajectoryRow
	MoreURL string
}

// CoverageTrajectoryRow is one trajectory of that list.
type CoverageTrajectoryRow struct {
	URL        string
	ExtID      string
	Run        string
	Parent     string
	Domain     string
	Supervised string
	Tokens     string
	Path       []PathStepView
}

// ViewPage shows a saved view and its parent-normalized weights.
type ViewPage struct {
	Name     string
	BackURL  string
	Facts    []Figure
	Export   string // how to restrict an export to this view
	TokenDoc string
	Weights  WeightChart
	Schemes  []SchemeRow
	Members  []MemberRow
	MoreNote string
}

// WeightChart is the histogram of parent totals under each scheme.
type WeightChart struct {
	Bins   []WeightBar
	Series []LegendBin
	Max    int
	Note   string
}

// WeightBar is one bin with one bar per scheme.
type WeightBar struct {
	Label string
	Bars  []Bar
}

// Bar is one bar of the weight histogram.
type Bar struct {
	Series int // 1, 2, 3: parent-normalized, per row, per token
	Value  int
	Title  string
}

// SchemeRow summarizes one weighting scheme.
type SchemeRow struct {
	Scheme    string
	Min       string
	Max       string
	TopDecile string
}

// MemberRow is one trajectory of a view with its weights.
type MemberRow struct {
	URL          string
	ExtID        string
	Parent       string
	Stage        string
	Tokens       string
	Weight       string
	RowWeight    string
	TokenWeight  string
	ParentStart  bool // first row of its parent
	ParentWeight string
}

// SelectionPageView is the selection simulator on a page of its own: the
// pool it is about and the way back to its coverage page.
type SelectionPageView struct {
	Pool    string
	Scale   string
	BackURL string
	Form    SelectionForm
}
