package grounding

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Selection methods a view can be saved from.
const (
	MethodStructured = "structured"
	MethodRandom     = "random"
)

// CoverageView is a saved selection: a named set of parents of one or more
// runs, chosen by structured (or seeded random) selection for a scale and a
// budget. Its name is unique within each of its runs. Exports can be
// restricted to a view.
type CoverageView struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Scale  Scale  `json:"scale"`
	Budget int    `json:"budget"`
	Method string `json:"method"`
	Seed   uint64 `json:"seed,omitempty"` // random selection only
	// Runs are the runs the view selects from, by id, ascending.
	Runs []int64 `json:"runs"`
	// Parents and Trajectories count the selected parents and their
	// certified trajectories at save time (the members).
	Parents       int       `json:"parents"`
	Trajectories  int       `json:"trajectories"`
	CreatedBy     int64     `json:"created_by,omitempty"`
	CreatedByName string    `json:"created_by_name,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
}

// ViewMember is one trajectory of a view: a certified trajectory of a
// selected parent, and the stage that picked the parent. Tokens are its
// certified target tokens now (they move with verdicts).
type ViewMember struct {
	TrajectoryID int64  `json:"trajectory_id"`
	RunID        int64  `json:"run_id"`
	ExtID        string `json:"ext_id,omitempty"`
	Parent       string `json:"parent"`
	Stage        string `json:"stage"`
	Tokens       int    `json:"tokens"`
}

// MaxViewName is the longest view name.
const MaxViewName = 80

// ValidateViewName returns an error wrapping ErrInvalid unless name is 1 to
// 80 characters without control characters or slashes (it ends up in file
// names and URLs), after trimming spaces.
func ValidateViewName(name string) error {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return fmt.Errorf("a view needs a name: %w", ErrInvalid)
	case len([]rune(name)) > MaxViewName:
		return fmt.Errorf("view name is longer than %d characters: %w", MaxViewName, ErrInvalid)
	}
	for _, r := range name {
		if unicode.IsControl(r) || r == '/' || r == '\\' {
			return fmt.Errorf("view name %q may not contain control characters or slashes: %w", name, ErrInvalid)
		}
	}
	return nil
}

// ViewMembers lists the members of a view saved from selection sel of pool
// p: every certified trajectory of each selected parent, in pick order.
func ViewMembers(p *Pool, sel Selection) []ViewMember {
	var out []ViewMember
	for k, pi := range sel.Parents {
		par := &p.Parents[pi]
		for _, ti := range par.Certified {
			t := &p.Trajectories[ti]
			out = append(out, ViewMember{TrajectoryID: t.ID, RunID: t.Run, ExtID: t.ExtID, Parent: par.ID, Stage: sel.Stages[k], Tokens: t.Tokens})
		}
	}
	return out
}

// MemberWeights returns the WeightRows of members, one per member, keyed by
// run and parent so parents of different runs never merge.
func MemberWeights(members []ViewMember) []WeightRow {
	rows := make([]WeightRow, len(members))
	for i, m := range members {
		rows[i] = WeightRow{Parent: ParentKey(m.RunID, m.Parent), Tokens: m.Tokens}
	}
	return rows
}
