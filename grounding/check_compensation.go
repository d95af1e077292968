package grounding

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// compensationRuntime is a CompensationRule prepared for checking.
type compensationRuntime struct {
	CompensationRule
	tools map[string]bool
}

// compensationFor is the compensation rule whose Amount argument the leaf
// at path of a call to tool is, nil when none.
func (c *checker) compensationFor(tool, path string) *compensationRuntime {
	for i := range c.rt.compensations {
		r := &c.rt.compensations[i]
		if r.tools[tool] && r.Amount == path {
			return r
		}
	}
	return nil
}

// compRecord is a visible record a compensation may be for.
type compRecord struct {
	id    string
	rec   record
	msg   int
	heads int
}

// compensation checks a call's amount against the policy's compensations
// (see CompensationRule). With ok: f is the amount's finding when a case
// and a record give it (derived, its arithmetic), else f.status is ""
// and the amount is checked as any other; pol, when not nil, is the
// policy finding that makes the call ambiguous or failed (a case whose
// change or eligibility is missing, or no case), on the path "policy",
// citing the record. ok is false when the rule says nothing: the call
// names no owner, or no record of the owner is visible.
func (c *checker) compensation(r *compensationRuntime, args string, amount float64, msg int) (f finding, pol *ArgEvidence, ok bool) {
	call := record(args)
	owner, found := call.str(r.Owner)
	if !found || owner == "" {
		return finding{}, nil, false
	}
	recs := c.ownerRecords(r, owner, msg)
	if len(recs) == 0 {
		return finding{}, nil, false
	}
	recs = c.namedRecords(recs, msg)
	unmet, contradicted := "", false
	var fit finding // the amount's derivation by the first unmet case
	fitID, fitMsg := "", -1
	for _, rc := range recs {
		for k := range r.Cases {
			cs := &r.Cases[k]
			if !sameAmount(cs.Unit*float64(rc.heads), amount) {
				continue
			}
			sum := formatAmount(cs.Unit) + " × " + countOf(rc.heads, r.Per) + " = " + formatAmount(amount)
			where := r.Record + " " + rc.id + " at message " + strconv.Itoa(rc.msg)
			elig, why, seenAll := c.eligible(r, rc, owner, msg)
			after := len(cs.After) == 0 || c.succeededBefore(msg, func(n, args string) bool {
				return slices.Contains(cs.After, n) && record(args).is(r.Record, rc.id)
			})
			if elig && after {
				ev := nowhere()
				ev.Found, ev.Derivation = "derived", sum
				ev.Note = "the policy's compensation for " + cs.Name + ": " + where
				if why != "" {
					ev.Note += "; " + why
				}
				return finding{status: StatusDerived, reason: ReasonDerived, ev: ev, ent: -1}, nil, true
			}
			if unmet != "" {
				continue
			}
			fit = finding{status: StatusDerived, reason: ReasonDerived, ev: nowhere(), ent: -1}
			fit.ev.Found, fit.ev.Derivation = "derived", sum
			fit.ev.Note = "the policy's compensation for " + cs.Name + ": " + where + " (its conditions: see policy)"
			fitID, fitMsg = rc.id, rc.msg
			unmet = sum + " is the policy's compensation for " + cs.Name + " (" + where + "), but "
			switch {
			case !elig:
				unmet += why
				contradicted = seenAll
			default:
				unmet += "it is given once the " + r.Record + " was changed (" + strings.Join(cs.After, " or ") + "), and no such call on " + rc.id + " succeeded before it"
			}
		}
	}
	note := unmet
	if note == "" {
		var seen []string
		for i, rc := range recs {
			if i == 4 {
				seen = append(seen, "…")
				break
			}
			seen = append(seen, rc.id+" "+countOf(rc.heads, r.Per)+" (message "+strconv.Itoa(rc.msg)+")")
		}
		var units []string
		for _, cs := range r.Cases {
			units = append(units, formatAmount(cs.Unit)+" for "+cs.Name)
		}
		note = formatAmount(amount) + " is no compensation the policy gives (" + strings.Join(units, ", ") + ", per " +
			strings.TrimSuffix(r.Per, "s") + ") for any " + r.Record + " of " + owner + " seen: " + strings.Join(seen, ", ")
	}
	if r.Rule != "" {
		note += "; the policy: " + r.Rule
	}
	ev := againstPolicy(note)
	val := formatAmount(amount)
	if fitMsg >= 0 {
		ev.Record, val = c.recordRef(fitID, fitMsg), fitID
	}
	pol = &ArgEvidence{Path: "policy", Value: c.vals.quote(val), Role: RoleFreeText,
		Status: StatusUnsupported, Reason: ReasonUnsupported, Where: ev}
	if contradicted {
		// The records say the customer is not eligible: no reading of
		// the policy grants it.
		pol.Status, pol.Reason = StatusContradiction, ReasonContradiction
	}
	return fit, pol, true
}

// ownerRecords are the latest visible records before msg, by Record id,
// that list Per and whose Owner field (when they have one) holds owner,
// latest first.
func (c *checker) ownerRecords(r *compensationRuntime, owner string, msg int) []compRecord {
	x := c.recordsBefore(r.Record, msg)
	var out []compRecord
	for id, i := range x.latest {
		rec := record(c.t.Messages[i].Content)
		if o, ok := rec.str(r.Owner); ok && o != owner {
			continue
		}
		arr, _ := topLevelValue(string(rec), r.Per)
		n, ok := arrayLen(arr)
		if !ok {
			continue
		}
		out = append(out, compRecord{id: id, rec: rec, msg: int(i), heads: n})
	}
	slices.SortFunc(out, func(a, b compRecord) int {
		return cmp.Or(cmp.Compare(b.msg, a.msg), cmp.Compare(a.id, b.id))
	})
	return out
}

// namedRecords narrows recs to those the conversation is about: the ones
// named in the latest visible user message or reply before msg that names
// any (a reply saying "your reservation WUNA5K"). With none named, all.
func (c *checker) namedRecords(recs []compRecord, msg int) []compRecord {
	for i := msg - 1; i >= 0; i-- {
		m := &c.t.Messages[i]
		if m.IsHidden() || m.Role != RoleUser && m.Role != RoleAssistant || m.Content == "" {
			continue
		}
		var named []compRecord
		for _, rc := range recs {
			if strings.Contains(m.Content, rc.id) {
				named = append(named, rc)
			}
		}
		if len(named) > 0 {
			return named
		}
	}
	return recs
}

// eligible reports whether one of the rule's Eligible fields holds for the
// record, says what was seen, and whether every field was (so that a
// false is the records' word, not a gap).
func (c *checker) eligible(r *compensationRuntime, rc compRecord, owner string, msg int) (ok bool, why string, seenAll bool) {
	if len(r.Eligible) == 0 {
		return true, "", true
	}
	var seen, want []string
	for _, e := range r.Eligible {
		val, at := "", -1
		if e.Of == "owner" {
			val, at = c.ownerField(r.Owner, owner, e.Field, msg)
		} else if v, ok := rc.rec.str(e.Field); ok {
			val, at = v, rc.msg
		}
		want = append(want, e.Field+" "+strings.Join(e.Values, " or "))
		if at < 0 {
			continue
		}
		said := e.Field + " " + val + " at message " + strconv.Itoa(at)
		if slices.ContainsFunc(e.Values, func(v string) bool { return strings.EqualFold(v, val) }) {
			return true, said, true
		}
		seen = append(seen, said)
	}
	why = "it needs " + strings.Join(want, ", or ")
	if len(seen) > 0 {
		why += ", and the records show " + strings.Join(seen, ", ")
	} else {
		why += ", and none of these is visible"
	}
	return false, why, len(seen) == len(r.Eligible)
}

// sameAmount compares amounts to the cent.
func sameAmount(a, b float64) bool {
	d := a - b
	return d < 0.005 && d > -0.005
}

// formatAmount writes an amount without trailing zeros.
func formatAmount(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// countOf writes n items: "1 passenger", "2 passengers".
func countOf(n int, plural string) string {
	if n == 1 {
		return "1 " + strings.TrimSuffix(plural, "s")
	}
	return strconv.Itoa(n) + " " + plural
}
