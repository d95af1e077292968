package handlers

import (
	"encoding/json"
	"slices"
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
	// The workflow rules it broke, in the engine's words, so the card says
	// why a decision whose values are all found still fails ("no agent
	// message listing this action was followed by the user's yes").
	for _, v := range hd.Violations {
		if v.Decision == d.Ordinal {
			line := v.Code + ": " + v.Detail
			if v.Trajectory {
				line += " (zeroes every decision of the trajectory)"
			}
			c.Flow = append(c.Flow, line)
		}
	}
	for _, a := range d.Args {
		c.Args = append(c.Args, argView(a, msgs))
	}
	// What decided the verdict first: the failing arguments, then the
	// doubtful ones, each group in the call's own order. A booking's one
	// contradicted count is then the first line under the header, not the
	// sixteenth.
	slices.SortStableFunc(c.Args, func(a, b views.ArgView) int { return toneRank(a.Tone) - toneRank(b.Tone) })
	return c
}

// toneRank orders argument tones for display: bad, warn, ok.
func toneRank(tone string) int {
	switch tone {
	case "bad":
		return 0
	case "warn":
		return 1
	}
	return 2
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
	case a.Where.Found == "policy" && a.Where.Record != nil && a.Where.Record.Message >= 0:
		// The record the finding read: the page highlights its id there,
		// and the line says where to look before what the record shows.
		r := a.Where.Record
		v.Msg = strconv.Itoa(r.Message)
		v.Needle = r.ID
		if m, ok := msgs[r.Message]; ok && r.Start >= 0 && r.End > r.Start && r.End <= len(m.Content) {
			v.Needle = m.Content[r.Start:r.End]
		}
		v.Record, v.Evidence = v.Msg, policyNote(a.Where)
	case a.Where.Found == "hidden":
		if a.Where.HiddenMessage >= 0 && strings.HasPrefix(a.Where.Hidden, "hidden message") {
			v.HiddenMsg = strconv.Itoa(a.Where.HiddenMessage)
		} else if a.Where.HiddenEntry >= 0 {
			v.HiddenEntry = strconv.Itoa(a.Where.HiddenEntry)
		}
	}
	return v
}

// evidenceMessage is the visible message evidence points at: where a
// visible value was found, or the record a policy finding cites; -1 when
// none (free text as a whole, hidden or nowhere, a policy statement, a
// policy finding stored before findings named their record).
func evidenceMessage(e grounding.Evidence) int {
	switch {
	case e.Found == "visible":
		return e.Message
	case e.Found == "policy" && e.Record != nil:
		return e.Record.Message
	}
	return -1
}

// policyLine is the evidence line of a policy finding that cites a record,
// for plain text: "against the policy — see the record in message 7; …".
// Other evidence reads as grounding writes it.
func policyLine(e grounding.Evidence) string {
	if e.Found != "policy" || e.Record == nil || e.Record.Message < 0 {
		return e.String()
	}
	line := "against the policy — see the record in message " + strconv.Itoa(e.Record.Message)
	if n := policyNote(e); n != "" {
		line += "; " + n
	}
	return line
}

// policyNote is what a policy finding's note says after the pointer to its
// record, without repeating the record's message index: "the record of
// NO6JO3 shows …" (the note names it "(message 7)").
func policyNote(e grounding.Evidence) string {
	if e.Record == nil {
		return e.Note
	}
	return strings.Replace(e.Note, " (message "+strconv.Itoa(e.Record.Message)+")", "", 1)
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
