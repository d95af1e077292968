package handlers

import (
	"encoding/json"
	"strconv"
	"strings"

	"groundwork/grounding"
	"groundwork/views"
)

// trajectoryCheck formats the trajectory-level check of the header.
func trajectoryCheck(hd grounding.TrajectoryHeader) *views.TrajectoryCheck {
	c := &views.TrajectoryCheck{
		R:        "0",
		Workflow: hd.WorkflowOK,
		Reasons:  hd.FlowReasons,
		Profile:  hd.Profile,
		Engine:   hd.EngineVersion,
		Checked:  dateTime(hd.CheckedAt),
	}
	if hd.Success {
		c.R = "1"
	}
	for _, v := range hd.Violations {
		scope := "decision"
		if v.Trajectory {
			scope = "trajectory"
		}
		c.Violations = append(c.Violations, v.Code+" at decision "+strconv.Itoa(v.Decision+1)+
			" (message "+strconv.Itoa(v.Message)+", zeroes the "+scope+"): "+v.Detail)
	}
	counts := count(hd.Pass) + " pass · " + count(hd.Fail) + " fail · " + count(hd.Ambiguous) + " ambiguous"
	if hd.Queued > 0 {
		counts += " (" + count(hd.Queued) + " queued)"
	}
	c.Counts = counts + " · " + count(hd.Supervised) + " supervised"
	return c
}

// checkView formats one decision's stored check and argument evidence.
func checkView(hd grounding.TrajectoryHeader, d grounding.StoredDecision, msgs map[int]grounding.Message) *views.CheckView {
	c := &views.CheckView{
		Verdict:     string(d.Verdict),
		Human:       d.HumanVerdict != "",
		AutoVerdict: string(d.AutoVerdict),
		E:           strconv.Itoa(d.E),
		V:           strconv.Itoa(d.V),
		W:           "0",
		R:           "0",
		Mask:        strconv.Itoa(d.Mask),
		Queued:      d.Queued,
		Reasons:     d.Reasons,
		Detail:      d.Detail,
		Action:      d.Action,
	}
	if d.FlowOK {
		c.W = "1"
	}
	if hd.Success {
		c.R = "1"
	}
	if d.Verdict == grounding.VerdictAmbiguous {
		c.V = "?"
		if d.Queued {
			c.MaskNote = "(0 until adjudicated)"
		}
	}
	for _, a := range d.Args {
		c.Args = append(c.Args, argView(a, msgs))
	}
	return c
}

// argView explains where one argument's value came from and tells the page
// script what to highlight: a span of a visible message, or a hidden item.
func argView(a grounding.ArgEvidence, msgs map[int]grounding.Message) views.ArgView {
	v := views.ArgView{
		Path:     a.Path,
		Value:    valueText(a.Value),
		Role:     a.Role,
		Status:   a.Status,
		Tone:     tone(a.Status),
		Evidence: a.Where.String(),
	}
	switch {
	case a.Where.Found == "visible" && a.Where.Message < 0:
		// Free text as a whole: no place to point at.
	case a.Where.Found == "visible":
		v.Msg = strconv.Itoa(a.Where.Message)
		v.Needle = v.Value
		// The exact span of the source text, when that message is loaded:
		// for a normalized match it differs from the value ("7447").
		if m, ok := msgs[a.Where.Message]; ok && a.Where.Start >= 0 && a.Where.End > a.Where.Start && a.Where.End <= len(m.Content) {
			v.Needle = m.Content[a.Where.Start:a.Where.End]
		}
	case a.Where.Found == "hidden":
		if a.Where.HiddenMessage >= 0 && strings.HasPrefix(a.Where.Hidden, "hidden message") {
			v.HiddenMsg = strconv.Itoa(a.Where.HiddenMessage)
		} else if a.Where.HiddenEntry >= 0 {
			v.HiddenEntry = strconv.Itoa(a.Where.HiddenEntry)
		}
	}
	return v
}

// valueText shows a JSON value compactly: strings without their quotes.
func valueText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// tone colours an evidence status: supported, needs a human, or not inferable.
func tone(status string) string {
	switch status {
	case grounding.StatusLiteral, grounding.StatusNormalized, grounding.StatusDerived, grounding.StatusEnum, grounding.StatusFreeText:
		return "ok"
	case grounding.StatusHiddenOnly, grounding.StatusUnsupported, grounding.StatusContradiction, grounding.StatusEcho:
		return "bad"
	default:
		return "warn"
	}
}
