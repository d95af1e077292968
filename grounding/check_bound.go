package grounding

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The checks index every value of the history before a decision, and an
// index costs about a hundred times the text it holds: one 57 MB tool
// answer (under the import's 64 MiB record cap) took 60 s and 7 GB to
// check. So the checks index at most maxIndexedMessage bytes of one
// message and maxIndexedTrajectory bytes of the messages of one trajectory
// that are not the agent's own; the rest of such a message, its tail, is
// not indexed but searched for a value's literal text when nothing indexed
// supports the value. Real logs are far below these bounds (the largest
// τ-bench or SWE trajectory here holds under 1 MB), so their results do not
// depend on them.
const (
	maxIndexedMessage    = 4 << 20
	maxIndexedTrajectory = 16 << 20
)

// maxTailSearch bounds the bytes one trajectory's tail searches read; past
// it a value nothing indexed supports is ambiguous instead of searched for.
// A variable so that a test can spend it.
var maxTailSearch = 1 << 30

// tail is the part of a message the checks did not index.
type tail struct {
	msg  int32
	from int    // where the tail starts in the message's content
	text string // the message's whole content
}

// boundContent cuts the contents of the non-agent messages (up to the
// last decision) that exceed the bounds, on a copy of the trajectory's
// messages, and keeps their tails. The agent's own messages are decisions
// and are checked whole.
func (c *checker) boundContent() {
	c.tails = c.tails[:0]
	c.tailRead = 0
	t := c.t
	last := -1
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Role == RoleAssistant && !m.IsHidden() {
			last = i
		}
	}
	total, cut := 0, false
	for i := range t.Messages[:last+1] {
		m := &t.Messages[i]
		if m.Role == RoleAssistant && !m.IsHidden() {
			continue
		}
		n := len(m.Content)
		if n > maxIndexedMessage || total+n > maxIndexedTrajectory {
			cut = true
			break
		}
		total += n
	}
	if !cut {
		return
	}
	view := *t
	view.Messages = append([]Message(nil), t.Messages...)
	total = 0
	for i := range view.Messages[:last+1] {
		m := &view.Messages[i]
		if m.Role == RoleAssistant && !m.IsHidden() {
			continue
		}
		limit := min(maxIndexedMessage, max(maxIndexedTrajectory-total, 0))
		if len(m.Content) > limit {
			at := cutAtBoundary(m.Content, limit)
			c.tails = append(c.tails, tail{msg: int32(i), from: at, text: m.Content})
			m.Content = m.Content[:at]
		}
		total += len(m.Content)
	}
	c.t = &view
}

// cutAtBoundary returns where to cut s to at most limit bytes: after the
// last byte that cannot be part of a value within the last 4 KiB before
// limit, so that no value is split into a shorter one that would then be
// found; else at limit, on a rune boundary.
func cutAtBoundary(s string, limit int) int {
	if limit >= len(s) {
		return len(s)
	}
	if limit <= 0 {
		return 0
	}
	for i := limit; i > max(limit-4096, 0); i-- {
		if !valueByte(s[i-1]) {
			return i
		}
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return limit
}

// valueByte reports whether b may belong to a value's text: letters,
// digits and the joiners of identifiers and numbers.
func valueByte(b byte) bool {
	return wordByte(b) || b == '-' || b == '.' || b >= utf8.RuneSelf
}

// tailLiteral searches the tails of the visible messages before msg for s
// as a whole token (not part of a longer value). searched is false when
// the search budget was spent before every tail was read.
func (c *checker) tailLiteral(s string, msg int) (ev Evidence, found, searched bool) {
	if s == "" {
		return ev, false, true
	}
	for _, tl := range c.tails {
		if int(tl.msg) >= msg {
			break
		}
		if c.t.Messages[tl.msg].IsHidden() {
			continue
		}
		text := tl.text[tl.from:]
		if c.tailRead+len(text) > maxTailSearch {
			return ev, false, false
		}
		c.tailRead += len(text)
		for off := 0; ; {
			i := strings.Index(text[off:], s)
			if i < 0 {
				break
			}
			start := tl.from + off + i
			if tokenAt(tl.text, start, start+len(s)) {
				ev = nowhere()
				ev.Found = "visible"
				ev.Message, ev.Start, ev.End = int(tl.msg), start, start+len(s)
				ev.Note = "found by a plain search past the first " + strconv.Itoa(tl.from) +
					" bytes of this " + strconv.Itoa(len(tl.text)) + "-byte message, which the checks do not index"
				return ev, true, true
			}
			off += i + 1
		}
	}
	return ev, false, true
}

// tokenAt reports whether s[i:j] stands alone: not preceded or followed by
// a byte that would make it part of a longer value (a letter, a digit, _
// or -, or a . inside a number or a name).
func tokenAt(s string, i, j int) bool {
	if i > 0 {
		b := s[i-1]
		if wordByte(b) || b == '-' || b >= utf8.RuneSelf || (b == '.' && i > 1 && wordByte(s[i-2])) {
			return false
		}
	}
	if j < len(s) {
		b := s[j]
		if wordByte(b) || b == '-' || b >= utf8.RuneSelf || (b == '.' && j+1 < len(s) && wordByte(s[j+1])) {
			return false
		}
	}
	return true
}
