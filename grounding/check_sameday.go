package grounding

import (
	"slices"
	"strconv"
	"strings"
)

type sameDayRuntime struct {
	SameDayRule
	claims, none []string // lower-cased
	gate         uint64   // their bit in the reply gate
}

// dayRecords are the counted records with a date on one day.
type dayRecords struct {
	date string   // as the first record writes it (2024-05-17)
	ids  []string // in the order the records were read
	msgs []int    // the message of each record
}

// checkSameDay checks what a reply says about which of the user's records
// share a day (SameDayRule): a sentence that names the records of a day
// must name them all, and one that denies any shared day must find none.
func (c *checker) checkSameDay(d *DecisionResult, text string, msg int) int {
	if len(c.rt.sameDay) == 0 {
		return sevOK
	}
	low := c.textLower(text, msg)
	sev := sevOK
	for i := range c.rt.sameDay {
		r := &c.rt.sameDay[i]
		if !c.mayHold(text, msg, r.gate) || !containsAny(low, r.claims) && !containsAny(low, r.none) {
			continue
		}
		x := c.recordsBefore(r.Field, msg)
		if len(x.latest) < 2 {
			continue
		}
		days := c.recordDays(r, x)
		for s0, end := range sentences(low) {
			sent := low[s0:end]
			denies := containsAny(sent, r.none)
			if !denies && !containsAny(sent, r.claims) {
				continue
			}
			said := sentenceDays(sent)
			if denies {
				for _, k := range sortedKeys(days) {
					dr := days[k]
					if len(dr.ids) < 2 || len(said) > 0 && !slices.Contains(said, k) {
						continue
					}
					a := c.contradictedSpan(s0, text[s0:end], "the records "+recordList(dr)+" all have a date on "+dr.date)
					c.pointAtRecord(&a, dr.ids[1], dr.msgs[1])
					d.Args = c.argChunks.add(d.Args, a)
					sev = max(sev, sevFail)
					break
				}
				continue
			}
			if len(said) == 0 {
				continue
			}
			named := allNamed(text[s0:end], x)
			if len(named) == 0 && strings.HasSuffix(strings.TrimSpace(sent), ":") {
				// "You have two reservations with flights on May 22:"
				// introduces the list after it; its items are often set
				// apart by blank lines, so the rest of the reply counts
				// (naming more only makes the check more lenient).
				named = allNamed(text[min(end+1, len(text)):], x)
			}
			if len(named) == 0 {
				continue
			}
			for _, k := range said {
				dr, ok := days[k]
				if !ok {
					continue
				}
				j := slices.IndexFunc(dr.ids, func(id string) bool { return !slices.Contains(named, id) })
				if j < 0 {
					continue
				}
				a := c.unsupportedSpan(s0, text[s0:end], "names "+strings.Join(named, ", ")+" for "+dr.date+
					", but the record of "+dr.ids[j]+" (message "+strconv.Itoa(dr.msgs[j])+") has a date on that day too")
				c.pointAtRecord(&a, dr.ids[j], dr.msgs[j])
				d.Args = c.argChunks.add(d.Args, a)
				sev = max(sev, sevAmbiguous)
				break
			}
		}
	}
	return sev
}

// pointAtRecord points a's evidence at the id of the record of id read at
// message m.
func (c *checker) pointAtRecord(a *ArgEvidence, id string, m int) {
	ref := c.recordRef(id, m)
	a.Where.Found, a.Where.Message, a.Where.Record = "visible", m, ref
	if ref.Start >= 0 {
		a.Where.Start, a.Where.End = ref.Start, ref.End
	}
}

// recordDays groups the latest record of each id of x by the days (MM-DD)
// of its dates, leaving out closed records.
func (c *checker) recordDays(r *sameDayRuntime, x *recordIndex) map[string]*dayRecords {
	ids := make([]string, 0, len(x.latest))
	for id := range x.latest {
		ids = append(ids, id)
	}
	// In reading order, so notes name the records as the user saw them.
	slices.SortFunc(ids, func(a, b string) int { return int(x.latest[a]) - int(x.latest[b]) })
	days := map[string]*dayRecords{}
	for _, id := range ids {
		m := int(x.latest[id])
		rec := record(c.t.Messages[m].Content)
		if r.Status != "" {
			if st, ok := rec.str(r.Status); ok && slices.Contains(r.Closed, st) {
				continue
			}
		}
		recordValues(rec, r.Dates, func(v string) bool {
			_, mo, dd, ok := parseISODate(v)
			if !ok {
				return true
			}
			k := dayKey(mo, dd)
			dr := days[k]
			if dr == nil {
				dr = &dayRecords{date: v[:10]}
				days[k] = dr
			}
			if !slices.Contains(dr.ids, id) {
				dr.ids, dr.msgs = append(dr.ids, id), append(dr.msgs, m)
			}
			return true
		})
	}
	return days
}

func dayKey(month, day int) string {
	return string(appendPad(append(appendPad(nil, month, 2), '-'), day, 2))
}

// sentenceDays are the days (MM-DD) a lower-cased sentence names, as
// 2024-05-17 or as a month and a day ("may 17", "may 17th").
func sentenceDays(s string) []string {
	var out []string
	add := func(mo, d int) {
		if k := dayKey(mo, d); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	for i := 0; i < len(s); i++ {
		switch {
		case digitByte(s[i]) && (i == 0 || !digitByte(s[i-1])):
			if _, mo, d, ok := parseISODate(s[i:]); ok {
				add(mo, d)
				i += 9
			}
		case letterByte(s[i]) && (i == 0 || !letterByte(s[i-1])):
			j := i
			for j < len(s) && letterByte(s[j]) {
				j++
			}
			if mo := monthOf([]byte(s[i:j])); mo > 0 {
				k := j
				for k < len(s) && s[k] == ' ' {
					k++
				}
				n := k
				for n < len(s) && n-k < 3 && digitByte(s[n]) {
					n++
				}
				if d := digitsValue(s[k:n]); n > k && n-k <= 2 && d >= 1 && d <= 31 {
					add(mo, d)
				}
			}
			i = j - 1
		}
	}
	return out
}

// recordList names the records of dr: "A (message 7) and B (message 9)".
func recordList(dr *dayRecords) string {
	parts := make([]string, len(dr.ids))
	for i, id := range dr.ids {
		parts[i] = id + " (message " + strconv.Itoa(dr.msgs[i]) + ")"
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
