package grounding

import "time"

// SWEInstanceSummary is one stored instance in a list: its reference files
// and the sizes of its evidence slices (ApproxTokens).
type SWEInstanceSummary struct {
	InstanceID  string
	Repo        string
	Files       []string // files the reference patch changes
	LOCTokens   int
	REPTokens   int
	PATCHTokens int
	SourceFile  string
	ImportedAt  time.Time
}

// TotalTokens is the size of the three evidence slices together.
func (s SWEInstanceSummary) TotalTokens() int { return s.LOCTokens + s.REPTokens + s.PATCHTokens }

// SWESubject is a stored SWE trajectory with what its diagnostics need: the
// whole trajectory, its instance's metadata (nil when none is stored) and
// its run's evaluation result (nil when none).
type SWESubject struct {
	ID         int64 // the trajectory's database id
	RunID      int64
	RunName    string
	Trajectory *Trajectory
	Instance   *SWEInstance
	Resolved   *bool
}
