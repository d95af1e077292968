package grounding

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checkItemOptions checks the options a reply states for an item it names
// by id (ItemOptionsRule): "T-Shirt (Item ID: 3234800602, Color: Red,
// Size: L, Style: Crew Neck)" where the item's record gives its style as
// v-neck fails (vis.contradiction), pointing at the value in the record.
// Only "Name: Value" pairs count, in a list item that names one item, or
// inside the parentheses that hold the id: prose around several items
// ("the same color as your current one") is not read.
func (c *checker) checkItemOptions(d *DecisionResult, text string, msg int) int {
	if c.rt.itemOptions == nil || strings.IndexByte(text, ':') < 0 {
		return sevOK
	}
	r := c.rt.itemOptions
	sev := sevOK
	h0, h1 := -1, -1 // the lead-in of the list being read, in text
	lead := ""       // its lower-cased text
	for l0 := 0; l0 < len(text); {
		l1 := strings.IndexByte(text[l0:], '\n')
		if l1 < 0 {
			l1 = len(text)
		} else {
			l1 += l0
		}
		line := text[l0:l1]
		switch t := strings.TrimRight(line, " \t*"); {
		case listItem(line):
			if h0 >= 0 && sev < sevFail {
				if s := c.leadInItemOptions(d, r, text, lead, h0, h1, line, msg); s > sev {
					sev = s
				}
			}
		case strings.HasSuffix(t, ":"):
			h0, h1 = l0+leadInStart(t), l0+len(t)
			// Only a lead-in that says the items share its values:
			// "larger than your current 500ml", "stainless steel or
			// 1000ml" name values the items need not have.
			if h := text[h0:h1]; !wordFold(h, "same") || wordFold(h, "than") || wordFold(h, "or") || wordFold(h, "current") {
				h0 = -1
			} else {
				lead = asciiLower(h)
			}
		case strings.TrimSpace(line) != "":
			h0 = -1
		}
		if strings.IndexByte(line, ':') >= 0 && sev < sevFail {
			if s := c.lineItemOptions(d, r, text, l0, line, msg); s > sev {
				sev = s
			}
		}
		l0 = l1 + 1
	}
	return sev
}

// leadInStart is where the last sentence of a list's lead-in line t
// starts: "Your shirt is red. Here are the options:" leads in with its
// second sentence only.
func leadInStart(t string) int {
	for i := len(t) - 2; i > 0; i-- {
		if (t[i] == '.' || t[i] == '!' || t[i] == '?') && (t[i+1] == ' ' || t[i+1] == '\t') {
			return i + 2
		}
	}
	return 0
}

// leadInItemOptions checks a list item naming one item against the
// options its lead-in says the listed items share ("smaller sizes in the
// same color (red) and material (cotton) with a crew neck style:" over an
// item whose record gives style v-neck, retail task107; a lead-in without
// "same", or with "than", "or" or "current", is not read): a value of one
// of the item's options, among the values the same record's listing gives
// that option, said in the lead-in while the item's own value is not,
// fails (vis.contradiction). Values shorter than three letters ("S", "L")
// are not read: they are words of prose too.
func (c *checker) leadInItemOptions(d *DecisionResult, r *ItemOptionsRule, text, lead string, h0, h1 int, line string, msg int) int {
	id, _, m, opts := c.lineItem(r, line, msg)
	if id == "" || len(opts) == 0 {
		return sevOK
	}
	items := c.itemsOf(r, m)
	for k, own := range opts {
		if wordIn(lead, own) {
			continue
		}
		seen := map[string]bool{optionFold(own): true}
		for _, o := range items {
			v, ok := o[k]
			if !ok || len(v) < 3 || seen[optionFold(v)] {
				continue
			}
			seen[optionFold(v)] = true
			if !wordIn(lead, v) {
				continue
			}
			a := c.contradictedSpan(h0, text[h0:h1], "says the items it lists have "+k+" "+strconv.Quote(v)+", but item "+id+
				"'s record (message "+strconv.Itoa(m)+") gives "+k+" "+strconv.Quote(own))
			content := c.t.Messages[m].Content
			a.Where.Found, a.Where.Message = "visible", m
			if q := strings.Index(content, strconv.Quote(own)); q >= 0 {
				a.Where.Start, a.Where.End = q+1, q+1+len(own)
			}
			d.Args = append(d.Args, a)
			return sevFail
		}
	}
	return sevOK
}

// wordFold reports whether s holds w (lower-case ASCII) as a word, in
// any case, without lowering s: most lines a reply ends with a colon are
// headings whose lead-in is never read.
func wordFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if (i > 0 && (letterByte(s[i-1]) || digitByte(s[i-1]))) || !strings.EqualFold(s[i:i+len(w)], w) {
			continue
		}
		if e := i + len(w); e == len(s) || !letterByte(s[e]) && !digitByte(s[e]) {
			return true
		}
	}
	return false
}

// wordIn reports whether low (lower-cased) says the option value v as
// words (containsWord), spaces and hyphens alike ("crew neck",
// "crew-neck").
func wordIn(low, v string) bool {
	lv := asciiLower(v)
	return containsWord(low, lv) || containsWord(low, strings.ReplaceAll(lv, " ", "-")) || containsWord(low, strings.ReplaceAll(lv, "-", " "))
}

// lineItemOptions checks one line of a reply (starting at byte l0).
func (c *checker) lineItemOptions(d *DecisionResult, r *ItemOptionsRule, text string, l0 int, line string, msg int) int {
	id, at, m, opts := c.lineItem(r, line, msg)
	if id == "" || len(opts) == 0 {
		return sevOK
	}
	scope, s0 := line, 0
	if !listItem(line) {
		a := strings.LastIndexByte(line[:at], '(')
		b := strings.IndexByte(line[at:], ')')
		if a < 0 || b < 0 {
			return sevOK
		}
		scope, s0 = line[a:at+b+1], a
	}
	low := asciiLower(scope)
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	// Longer names first, so "screen size" is not read as "size".
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	var taken [][2]int
	for _, k := range keys {
		lk := asciiLower(k)
		for p := range occurrences(low, lk) {
			off := p + len(lk)
			if p > 0 && (letterByte(low[p-1]) || digitByte(low[p-1])) || overlaps(taken, p, off) {
				continue
			}
			v0, v1, ok := optionValueAfter(scope, off)
			if !ok {
				continue
			}
			taken = append(taken, [2]int{p, v1})
			said, own := scope[v0:v1], opts[k]
			if optionFold(said) == optionFold(own) {
				continue
			}
			a := c.contradictedSpan(l0+s0+p, scope[p:v1], "states "+k+" "+strconv.Quote(said)+" for item "+id+
				", but its record (message "+strconv.Itoa(m)+") gives "+k+" "+strconv.Quote(own))
			content := c.t.Messages[m].Content
			a.Where.Found, a.Where.Message = "visible", m
			if q := strings.Index(content, strconv.Quote(own)); q >= 0 {
				a.Where.Start, a.Where.End = q+1, q+1+len(own)
			}
			d.Args = c.argChunks.add(d.Args, a)
			return sevFail
		}
	}
	return sevOK
}

// lineItem is the one visible item a line names by id: the id, where it
// is in the line, the message of its record and its options; "" when the
// line names none or several (whose options the line states is not
// clear).
func (c *checker) lineItem(r *ItemOptionsRule, line string, msg int) (id string, at, m int, opts map[string]string) {
	at, m = -1, -1
	for i := 0; i < len(line); {
		if !digitByte(line[i]) || i > 0 && (letterByte(line[i-1]) || digitByte(line[i-1])) {
			i++
			continue
		}
		j := i
		for j < len(line) && digitByte(line[j]) {
			j++
		}
		if j-i >= 6 && (j == len(line) || !letterByte(line[j])) {
			cand := line[i:j]
			if cand != id {
				o, om := c.itemOptionsOf(r, cand, msg)
				if om >= 0 {
					if id != "" {
						return "", -1, -1, nil
					}
					id, at, m, opts = cand, i, om, o
				}
			}
		}
		i = j
	}
	return id, at, m, opts
}

// itemOptsMemo is what itemOptionsOf found for one id in the messages
// before upTo: the options and their message (-1: none).
type itemOptsMemo struct {
	opts map[string]string
	m    int
	upTo int
}

// itemOptionsOf reads the options of item id from the latest visible tool
// result before msg that details it (an object whose r.ID field is id,
// with an r.Options object): the options and the message, -1 when none.
// Each message is read once per id as the walk moves forward.
func (c *checker) itemOptionsOf(r *ItemOptionsRule, id string, msg int) (map[string]string, int) {
	if c.itemOpts == nil {
		c.itemOpts = map[string]itemOptsMemo{}
	}
	memo, ok := c.itemOpts[id]
	if !ok || msg < memo.upTo {
		memo = itemOptsMemo{m: -1}
	}
	quoted, key := c.quoteTmp(id), c.quoteTmp(r.Options) // searched for only
	for i := msg - 1; i >= memo.upTo; i-- {
		m := &c.t.Messages[i]
		if m.Role != RoleTool || m.IsHidden() || c.isError(m) || !strings.Contains(m.Content, quoted) || !strings.Contains(m.Content, key) {
			continue
		}
		if o, ok := c.itemsOf(r, i)[id]; ok {
			// Shared with itemsOf's index, which nothing writes once made:
			// the checks only read options.
			memo.opts, memo.m = o, i
			break
		}
	}
	memo.upTo = msg
	c.itemOpts[id] = memo
	return memo.opts, memo.m
}

// itemsOf is the options of every item tool result i details (an object
// with a string r.ID and an r.Options object), by id, keeping the options
// whose value is a string: decoded once, for every id a reply names (a
// product listing details dozens of items, and decoding it per id was most
// of checking a retail log). Plain results are read by scanItemOptions
// without decoding the rest; the others are decoded by encoding/json.
func (c *checker) itemsOf(r *ItemOptionsRule, i int) map[string]map[string]string {
	if items, ok := c.itemIdx[i]; ok {
		return items
	}
	content := c.t.Messages[i].Content
	items, ok := scanItemOptions(content, r)
	if !ok {
		items = nil
		var v any
		if json.Unmarshal([]byte(content), &v) == nil {
			items = map[string]map[string]string{}
			findOptions(v, r, items)
		}
	}
	if c.itemIdx == nil {
		c.itemIdx = map[int]map[string]map[string]string{}
	}
	c.itemIdx[i] = items
	return items
}

// findOptions adds to items the string options of the objects in a
// decoded JSON value whose r.ID is a string and whose r.Options is an
// object. For an id held by several, the first one a depth-first walk
// meets counts, as when the walk looked for one id.
func findOptions(v any, r *ItemOptionsRule, items map[string]map[string]string) {
	walkObjects(v, func(o map[string]any) bool {
		if id, ok := o[r.ID].(string); ok {
			if opts, ok := o[r.Options].(map[string]any); ok {
				if _, seen := items[id]; !seen {
					so := make(map[string]string, len(opts))
					for k, x := range opts {
						if s, ok := x.(string); ok {
							so[k] = s
						}
					}
					items[id] = so
				}
			}
		}
		return true
	})
}

// scanItemOptions is what json.Unmarshal and findOptions give for s, read
// without decoding: ok is false, and the caller decodes, unless s is
// valid JSON by the grammar of RFC 8259 (as json.Valid checks it) in valid
// UTF-8 with no backslash (so every string is its bytes), no number with
// an exponent or over 300 bytes (so every number fits a float64), no
// nesting deeper than 1000, no object with a repeated key (whose earlier
// value json.Unmarshal drops) and no id held by two objects (where
// findOptions' walk order decides).
func scanItemOptions(s string, r *ItemOptionsRule) (map[string]map[string]string, bool) {
	if strings.IndexByte(s, '\\') >= 0 || !utf8.ValidString(s) {
		return nil, false
	}
	sc := optScanner{s: s, r: r, items: map[string]map[string]string{}, ok: true}
	sc.value()
	sc.space()
	if !sc.ok || sc.i != len(s) {
		return nil, false
	}
	return sc.items, true
}

// scanLastFour is what json.Unmarshal and findLastFour give for s and id
// (found: an object's "id" is id; four: its "last_four" when a string),
// read without decoding; ok is false, and the caller decodes, on the same
// grounds as scanItemOptions, or when two objects have the id.
func scanLastFour(s, id string) (four string, found, ok bool) {
	if strings.IndexByte(s, '\\') >= 0 || !utf8.ValidString(s) {
		return "", false, false
	}
	sc := optScanner{s: s, ok: true, lastFour: true, wantID: id}
	sc.value()
	sc.space()
	if !sc.ok || sc.i != len(s) {
		return "", false, false
	}
	return sc.four, sc.fourN == 1, true
}

// optScanner reads a JSON text for scanItemOptions; ok turns false at
// the first thing it does not accept.
type optScanner struct {
	s     string
	i     int
	r     *ItemOptionsRule
	items map[string]map[string]string
	keys  []string // the keys of the objects being read, innermost last
	depth int
	ok    bool
	plain bool // only read values: add no items

	// With lastFour set, the scanner looks for the objects whose "id" is
	// wantID instead of items (scanLastFour): how many, and the last one's
	// "last_four" when a string.
	lastFour bool
	wantID   string
	fourN    int
	four     string
}

func (sc *optScanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.i++
		default:
			return
		}
	}
}

// next is the byte at sc.i, 0 at the end.
func (sc *optScanner) next() byte {
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// str reads the string at sc.i (a quote) and returns its text.
func (sc *optScanner) str() string {
	j := strings.IndexByte(sc.s[sc.i+1:], '"')
	if j < 0 {
		sc.ok = false
		return ""
	}
	t := sc.s[sc.i+1 : sc.i+1+j]
	for k := 0; k < len(t); k++ {
		if t[k] < 0x20 {
			sc.ok = false
			return ""
		}
	}
	sc.i += j + 2
	return t
}

// digits reads the digits at sc.i and reports whether there was one.
func (sc *optScanner) digits() bool {
	i0 := sc.i
	for sc.i < len(sc.s) && digitByte(sc.s[sc.i]) {
		sc.i++
	}
	return sc.i > i0
}

// value reads the value at sc.i (after spaces).
func (sc *optScanner) value() {
	sc.space()
	if !sc.ok {
		return
	}
	switch c := sc.next(); c {
	case '{':
		sc.object()
	case '[':
		sc.array()
	case '"':
		sc.str()
	case 't', 'f', 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if strings.HasPrefix(sc.s[sc.i:], lit) {
				sc.i += len(lit)
				return
			}
		}
		sc.ok = false
	default:
		i0 := sc.i
		if c == '-' {
			sc.i++
		}
		if sc.next() == '0' {
			sc.i++
		} else if !sc.digits() {
			sc.ok = false
			return
		}
		if sc.next() == '.' {
			sc.i++
			if !sc.digits() {
				sc.ok = false
				return
			}
		}
		if c := sc.next(); c == 'e' || c == 'E' || sc.i-i0 > 300 {
			sc.ok = false // might not fit a float64
		}
	}
}

// array reads the array at sc.i.
func (sc *optScanner) array() {
	if sc.depth++; sc.depth > 1000 {
		sc.ok = false
		return
	}
	defer func() { sc.depth-- }()
	sc.i++
	sc.space()
	if sc.next() == ']' {
		sc.i++
		return
	}
	for sc.ok {
		sc.value()
		sc.space()
		switch sc.next() {
		case ']':
			sc.i++
			return
		case ',':
			sc.i++
		default:
			sc.ok = false
		}
	}
}

// object reads the object at sc.i and, when it details an item, adds the
// item's string options.
func (sc *optScanner) object() {
	if sc.depth++; sc.depth > 1000 {
		sc.ok = false
		return
	}
	k0 := len(sc.keys)
	defer func() { sc.keys, sc.depth = sc.keys[:k0], sc.depth-1 }()
	sc.i++
	id, hasID := "", false
	opts := -1 // where the r.Options object starts
	match, four := false, ""
	sc.space()
	if sc.next() == '}' {
		sc.i++
		return
	}
	for sc.ok {
		sc.space()
		if sc.next() != '"' {
			sc.ok = false
			return
		}
		k := sc.str()
		if !sc.ok || slices.Contains(sc.keys[k0:], k) {
			sc.ok = false
			return
		}
		sc.keys = append(sc.keys, k)
		sc.space()
		if sc.next() != ':' {
			sc.ok = false
			return
		}
		sc.i++
		sc.space()
		switch c := sc.next(); {
		case sc.plain:
		case sc.lastFour:
			if c == '"' && (k == "id" || k == "last_four") {
				v := sc.s[sc.i+1 : sc.i+1+max(strings.IndexByte(sc.s[sc.i+1:], '"'), 0)]
				if k == "id" {
					match = v == sc.wantID
				} else {
					four = v
				}
			}
		case k == sc.r.ID && c == '"':
			id, hasID = sc.s[sc.i+1:sc.i+1+max(strings.IndexByte(sc.s[sc.i+1:], '"'), 0)], true
		case k == sc.r.Options && c == '{':
			opts = sc.i
		}
		sc.value()
		sc.space()
		switch sc.next() {
		case '}':
			sc.i++
			if sc.ok && sc.lastFour && match {
				if sc.fourN++; sc.fourN > 1 {
					sc.ok = false // findLastFour's walk order would decide
				}
				sc.four = four
				return
			}
			if sc.ok && !sc.plain && !sc.lastFour && hasID && opts >= 0 {
				if _, seen := sc.items[id]; seen {
					sc.ok = false // findOptions' walk order would decide
					return
				}
				sc.items[id] = sc.stringMembers(opts)
			}
			return
		case ',':
			sc.i++
		default:
			sc.ok = false
		}
	}
}

// stringMembers is the members with a string value of the object at p,
// which object has already read (valid, no repeated key).
func (sc *optScanner) stringMembers(p int) map[string]string {
	sub := optScanner{s: sc.s, i: p + 1, ok: true, plain: true}
	m := map[string]string{}
	sub.space()
	if sub.next() == '}' {
		return m
	}
	for {
		sub.space()
		k := sub.str()
		sub.space()
		sub.i++
		sub.space()
		if sub.next() == '"' {
			m[k] = sub.str()
		} else {
			sub.value()
		}
		sub.space()
		c := sub.next()
		sub.i++
		if c == '}' {
			return m
		}
	}
}

// listItem reports whether a line is an item of a list ("- ", "* ", "1. ").
func listItem(line string) bool {
	s := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") || strings.HasPrefix(s, "• ") {
		return true
	}
	i := 0
	for i < len(s) && digitByte(s[i]) {
		i++
	}
	return i > 0 && i+1 < len(s) && s[i] == '.' && s[i+1] == ' '
}

// optionValueAfter reads the value of a "Name: Value" pair whose name ends
// at off: after markdown stars, spaces and a colon, up to a comma,
// semicolon, parenthesis, star or " - ". ok is false when no colon follows
// the name.
func optionValueAfter(s string, off int) (start, end int, ok bool) {
	i := off
	for i < len(s) && (s[i] == '*' || s[i] == ' ') {
		i++
	}
	if i >= len(s) || s[i] != ':' {
		return 0, 0, false
	}
	i++
	for i < len(s) && (s[i] == '*' || s[i] == ' ') {
		i++
	}
	j := i
	for j < len(s) && !strings.ContainsRune(",;()*\n", rune(s[j])) && !strings.HasPrefix(s[j:], " - ") {
		j++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '.') {
		j--
	}
	return i, j, j > i
}

// optionFold is an option value as compared: lower case, without spaces
// and hyphens ("Crew Neck", "crew-neck").
func optionFold(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '-' {
			continue
		}
		b = append(b, lowerByte(s[i]))
	}
	return string(b)
}

func overlaps(spans [][2]int, a, b int) bool {
	for _, s := range spans {
		if a < s[1] && s[0] < b {
			return true
		}
	}
	return false
}
