package views_test

import (
	"testing"

	"groundwork/views"
)

// TestSWEBarAccessible: the bar is a labelled list and every cell names its
// step and stage, so the timeline reads without colors.
func TestSWEBarAccessible(t *testing.T) {
	p := views.SWERunPage{RunName: "base", CompareURL: "/swe", RunURL: "/runs/1", Rows: []views.SWETimelineRow{{
		ExtID: "a__b-1", URL: "/swe/trajectories/7", Instance: "a__b-1",
		Bar: views.SWEBar{Label: "stage timeline of a__b-1, 2 steps", DetailID: "swe-detail-7", Cells: []views.SWECell{
			{Stage: "loc", Letter: "L", Title: "step 1: LOC", URL: "/swe/trajectories/7?step=0#step-0", FragmentURL: "/swe/trajectories/7/steps/0"},
			{Stage: "rep", Letter: "R", Fallback: true, Title: "step 2: REP (fall-back)", URL: "/swe/trajectories/7?step=1#step-1", FragmentURL: "/swe/trajectories/7/steps/1"},
		}},
	}}}
	doc, _ := renderDoc(t, views.SWERun(p))
	bar := doc.Find("[data-testid=swe-bar]")
	if bar.AttrOr("role", "") != "list" || bar.AttrOr("aria-label", "") != "stage timeline of a__b-1, 2 steps" {
		t.Errorf("bar role/label = %q / %q", bar.AttrOr("role", ""), bar.AttrOr("aria-label", ""))
	}
	cells := bar.Find("a")
	if cells.Length() != 2 {
		t.Fatalf("%d cells", cells.Length())
	}
	c := cells.Eq(1)
	if c.AttrOr("aria-label", "") != "step 2: REP (fall-back)" || c.AttrOr("title", "") != "step 2: REP (fall-back)" ||
		!c.HasClass("swe-fallback") || c.AttrOr("hx-target", "") != "#swe-detail-7" || c.Text() != "R" {
		t.Errorf("cell = %v", c.Nodes[0].Attr)
	}
	if doc.Find("#swe-detail-7").Length() != 1 || doc.Find("[data-testid=swe-legend]").Length() != 1 {
		t.Error("no detail target or legend")
	}
}
