package grounding

import (
	"slices"
	"strconv"
	"strings"
)

// This file holds the normalizations of the visibility check: how a piece of
// visible text or JSON becomes canonical keys that an argument value can be
// looked up by. Every key starts with a one-letter class and a colon:
//
//	s:credit_card_4421486   a string or word, lower-cased, runs of space,
//	                        '-' and '_' folded to one '_'
//	n:250                   a number (250, 250.0, "$250" and "250.00" all
//	                        give n:250)
//	d:2024-05-20            a calendar date (2024-05-20, "May 20th" with the
//	                        year the visible history states, 05/20/2024, …)
//	t:19:00                 a clock time ("19:00:00", "7:00 PM", "7pm")
//
// The scanners below never allocate per token: they write keys into a
// scratch buffer that the caller looks up (map lookups with string(b) do not
// allocate) and copies only when it inserts a new key.

// mkind is what a scanned mention is.
type mkind uint8

const (
	mWord   mkind = iota // a word or identifier-like token
	mNum                 // a bare number
	mMoney               // a $ amount
	mDate                // a calendar date
	mTime                // a clock time
	mIDPart              // one part of a snake_case identifier (credit_card_4421486 → 4421486)
)

// normKind says how a mention's text differs from its canonical key; it is
// rendered into evidence ("date May 20th with the year 2024 …").
type normKind uint8

const (
	nkNone       normKind = iota
	nkMoney               // "$250" → n:250
	nkDate                // "May 20, 2024", "05/20/2024" → d:2024-05-20
	nkDateYear            // "May 20th" → d:2024-05-20 with the year the history states
	nkToday               // "today" → the current date the history states
	nkTomorrow            // "tomorrow"
	nkClock12             // "7:00 PM" → t:19:00
	nkTimestamp           // the time part of 2024-05-15T15:00:00
	nkOrdinal             // "20th" → n:20
	nkNumberWord          // "three" → n:3
	nkPlural              // "certificates" → s:certificate
	nkIDPart              // "4421486" inside credit_card_4421486
	nkDigits              // "7447" as the string s:7447
)

// mention is one value found in text or JSON. Its key and JSON path live in
// the mention buffer's arena.
type mention struct {
	kind       mkind
	norm       normKind
	small      bool // a small integer (see Profile.Weak)
	isInt      bool
	isKey      bool // a JSON object key (maps keyed by id: payment_methods)
	wholeLeaf  bool // the mention is a whole JSON value or key, not a word inside one
	kIn        kArena
	k0, k1     int32 // canonical key, in the arena kIn names
	p0, p1     int32 // JSON path ("" for text)
	start, end int32 // byte span in the message content
	obj        int32 // innermost enclosing JSON object, -1 for text
	valObj     int32 // for a key: the object that is its value, else -1
	num        float64
	// jk is 1 + the index in the buffer's keys of the last object key on
	// the path, 0 for text and array items at the top (mentionBuf.jsonKey).
	// An index, not the string, keeps a mention free of pointers: the
	// buffers of mentions are neither scanned by the collector nor written
	// through its barriers.
	jk int32
	// ent is the index entry of the key, set when the buffer is indexed
	// (checker.indexMentions), so later passes over the same buffer do not
	// look the key up again; -1 when not indexed.
	ent int32
	// tpl is the scanMemo template the mention was replayed from or
	// recorded as, -1 none: indexing it tells the template its entry.
	tpl int32
}

// kArena says which arena holds a mention's key: the buffer's own, or,
// for a mention replayed from a scan memo template, the arena of the
// template's region, which the mention reads in place instead of copying.
type kArena uint8

const (
	kInBuf kArena = iota
	kInMemoKeys
	kInMemoVals
)

// jobj is one JSON object of a scanned document: the mentions inside it are
// buf.ms[m0:m1] (depth-first order keeps them contiguous).
type jobj struct {
	m0, m1 int32
	parent int32
}

// mentionBuf collects the mentions of one message (or one argument list)
// before they are indexed. It is reused across messages.
type mentionBuf struct {
	arena []byte
	ms    []mention
	objs  []jobj
	keys  []string // object keys named by mention.jk
	// memo holds the keys of the mentions replayed from its templates
	// (mention.kIn); its arenas only grow while a trajectory is checked.
	memo *scanMemo
	// the last path added to the checker's paths (checker.pathIn), 0: none
	lastP0, lastP1 int32
	lastPath       int32
}

func (b *mentionBuf) reset() {
	b.lastP0, b.lastP1, b.lastPath = -1, -1, 0
	b.arena = b.arena[:0]
	b.ms = b.ms[:0]
	b.objs = b.objs[:0]
	b.keys = b.keys[:0]
}

// jsonKey is the last object key on m's path, "" when none.
func (b *mentionBuf) jsonKey(m *mention) string {
	if m.jk == 0 {
		return ""
	}
	return b.keys[m.jk-1]
}

// addKey adds an object key for mentions to name; it returns their jk.
func (b *mentionBuf) addKey(k string) int32 {
	b.keys = append(b.keys, k)
	return int32(len(b.keys))
}

func (b *mentionBuf) key(m *mention) []byte {
	switch m.kIn {
	case kInBuf:
		return b.arena[m.k0:m.k1]
	case kInMemoKeys:
		return b.memo.keys.arena[m.k0:m.k1:m.k1]
	default:
		return b.memo.vals.arena[m.k0:m.k1:m.k1]
	}
}

func (b *mentionBuf) path(m *mention) []byte { return b.arena[m.p0:m.p1] }

// monthOf returns the month a lower-case word names, or 0. A switch keeps
// the per-token cost below a map lookup.
func monthOf(w []byte) int {
	if len(w) < 3 || len(w) > 9 || !monthInitial[w[0]] {
		return 0
	}
	switch string(w) {
	case "january", "jan":
		return 1
	case "february", "feb":
		return 2
	case "march", "mar":
		return 3
	case "april", "apr":
		return 4
	case "may":
		return 5
	case "june", "jun":
		return 6
	case "july", "jul":
		return 7
	case "august", "aug":
		return 8
	case "september", "sep", "sept":
		return 9
	case "october", "oct":
		return 10
	case "november", "nov":
		return 11
	case "december", "dec":
		return 12
	}
	return 0
}

// monthInitial marks the first letters of the month names monthOf knows.
var monthInitial = byteSet("jfmasond")

// numberWord returns the value of a spelled-out small number.
func numberWord(w []byte) (int, bool) {
	if len(w) < 3 || len(w) > 6 {
		return 0, false
	}
	switch string(w) {
	case "zero":
		return 0, true
	case "one", "single":
		return 1, true
	case "two", "couple":
		return 2, true
	case "three":
		return 3, true
	case "four":
		return 4, true
	case "five":
		return 5, true
	case "six":
		return 6, true
	case "seven":
		return 7, true
	case "eight":
		return 8, true
	case "nine":
		return 9, true
	case "ten":
		return 10, true
	case "eleven":
		return 11, true
	case "twelve":
		return 12, true
	}
	return 0, false
}

// spaceByte reports the bytes that separate words. Most bytes of text are
// above ' ', which one comparison rules out.
func spaceByte(c byte) bool { return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r') }

func digitByte(c byte) bool { return c >= '0' && c <= '9' }

func letterByte(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func onlyDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !digitByte(s[i]) {
			return false
		}
	}
	return true
}

// appendStringKey appends the canonical string key of s: lower-cased, with
// each run of space, '-' and '_' folded to a single '_', trimmed.
func appendStringKey(b []byte, s string) []byte {
	// The key is never longer than "s:" and s: every '_' written stands for
	// at least one separator dropped. Growing once and writing by index
	// keeps this per-token loop free of append's capacity checks.
	b = slices.Grow(b, len(s)+2)
	b = append(b, 's', ':')
	start := len(b)
	n := start
	b = b[:start+len(s)]
	sep := false
	for i := 0; i < len(s); i++ {
		c := keyByte[s[i]]
		if c == keyByteSep {
			sep = true
			continue
		}
		if sep && n > start {
			b[n] = '_'
			n++
		}
		sep = false
		b[n] = byte(c)
		n++
	}
	return b[:n]
}

// keySep marks the separators that fold to '_' in a string key: space,
// '-', '_', tab, newline, CR.
var keySep = [256]bool{' ': true, '-': true, '_': true, '\t': true, '\n': true, '\r': true}

// keyByte is what appendStringKey writes for a byte: keyByteSep for a
// separator (keySep), else the byte lowered (lowerByte). One load replaces
// both tests.
var keyByte = func() (t [256]uint16) {
	for i := range t {
		t[i] = uint16(lowerByte(byte(i)))
		if keySep[i] {
			t[i] = keyByteSep
		}
	}
	return t
}()

const keyByteSep = 0x100

// stringKey returns the canonical key of a string value.
func stringKey(s string) string { return string(appendStringKey(nil, s)) }

// appendNumberKey appends the canonical key of a number.
func appendNumberKey(b []byte, f float64) []byte {
	b = append(b, 'n', ':')
	if f == 0 {
		return append(b, '0') // no "-0"
	}
	if f >= -1e15 && f <= 1e15 && f == float64(int64(f)) {
		// what AppendFloat gives for an integer, without its general path
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func numberKey(f float64) string { return string(appendNumberKey(nil, f)) }

func appendDateKey(b []byte, y, m, d int) []byte {
	b = append(b, 'd', ':')
	b = appendPad(b, y, 4)
	b = append(b, '-')
	b = appendPad(b, m, 2)
	b = append(b, '-')
	return appendPad(b, d, 2)
}

func appendTimeKey(b []byte, h, m int) []byte {
	b = append(b, 't', ':')
	b = appendPad(b, h, 2)
	b = append(b, ':')
	return appendPad(b, m, 2)
}

func appendPad(b []byte, v, width int) []byte {
	var tmp [8]byte
	s := strconv.AppendInt(tmp[:0], int64(v), 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// parseISODate reads YYYY-MM-DD at the start of s.
func parseISODate(s string) (y, m, d int, ok bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, false
	}
	for _, i := range [...]int{0, 1, 2, 3, 5, 6, 8, 9} {
		if !digitByte(s[i]) {
			return 0, 0, 0, false
		}
	}
	y = digitsValue(s[0:4])
	m = digitsValue(s[5:7])
	d = digitsValue(s[8:10])
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	if len(s) > 10 && (digitByte(s[10]) || letterByte(s[10]) && s[10] != 'T') {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

// parseClock reads H:MM or HH:MM[:SS] at the start of s and returns the
// hour, minute and the length consumed.
func parseClock(s string) (h, m, n int, ok bool) {
	i := 0
	for i < len(s) && i < 2 && digitByte(s[i]) {
		i++
	}
	if i == 0 || i >= len(s) || s[i] != ':' || i+3 > len(s) || !digitByte(s[i+1]) || !digitByte(s[i+2]) {
		return 0, 0, 0, false
	}
	h = digitsValue(s[:i])
	m = digitsValue(s[i+1 : i+3])
	n = i + 3
	if n+3 <= len(s) && s[n] == ':' && digitByte(s[n+1]) && digitByte(s[n+2]) {
		n += 3
	}
	if h > 24 || m > 59 {
		return 0, 0, 0, false
	}
	return h, m, n, true
}

func digitsValue(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		v = v*10 + int(s[i]-'0')
	}
	return v
}

// parseNumber reads a plain number with optional sign, thousands commas and
// decimals ("1,234.50", "-6594", "250.0"). The whole string must be used.
func parseNumber(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	i := 0
	if s[0] == '-' || s[0] == '+' {
		i++
	}
	if i >= len(s) || !digitByte(s[i]) {
		return 0, false
	}
	hasComma := false
	for j := i; j < len(s); j++ {
		c := s[j]
		if c == ',' {
			hasComma = true
			continue
		}
		if !digitByte(c) && c != '.' {
			return 0, false
		}
	}
	if hasComma {
		// Only well-formed thousands groups: 1,234 or 12,345,678.
		var buf [40]byte
		b := buf[:0]
		dot := strings.IndexByte(s, '.')
		intPart := s
		if dot >= 0 {
			intPart = s[:dot]
		}
		groups := strings.Split(intPart[i:], ",")
		if len(groups[0]) == 0 || len(groups[0]) > 3 {
			return 0, false
		}
		for _, g := range groups[1:] {
			if len(g) != 3 {
				return 0, false
			}
		}
		b = append(b, s[:i]...)
		for _, g := range groups {
			b = append(b, g...)
		}
		if dot >= 0 {
			b = append(b, s[dot:]...)
		}
		f, err := strconv.ParseFloat(string(b), 64)
		return f, err == nil
	}
	if strings.Count(s, ".") > 1 || s[len(s)-1] == '.' {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// textScanner finds mentions in free text and appends them to out. refYear
// resolves dates written without a year; refDate resolves "today".
type textScanner struct {
	out     *mentionBuf
	refYear int
	refDate [3]int // y, m, d; zero when unknown
	smallAt float64
	// ctx is copied into every mention: the JSON leaf a string belongs to.
	ctx mention
	// pending month/day mentions seen before any year was known; the
	// indexer resolves them once a year shows up.
	pendingMD []pendingMD
}

type pendingMD struct {
	month, day int
	start, end int32
}

// trimProse removes the punctuation that surrounds words in prose and
// markdown (quotes, brackets, bold markers, trailing full stops).
func trimProse(s string, start int) (string, int) {
	for len(s) > 0 && proseLead[s[0]] {
		s = s[1:]
		start++
	}
	for len(s) > 0 && proseTrail[s[len(s)-1]] {
		s = s[:len(s)-1]
	}
	if len(s) > 2 && strings.HasSuffix(s, "'s") {
		s = s[:len(s)-2]
	} else if len(s) > 4 && strings.HasSuffix(s, "’s") {
		s = s[:len(s)-len("’s")]
	}
	return s, start
}

// proseLead and proseTrail are the bytes trimProse removes before and
// after a word.
var (
	proseLead  = byteSet(`"'([{*<` + "`" + `|>~`)
	proseTrail = byteSet(`"')]}*,.;:!?>([` + "`" + `|~`)
)

func byteSet(chars string) (t [256]bool) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

// scan reports the mentions of text, whose first byte is at offset base of
// the message content.
func (sc *textScanner) scan(text string, base int) {
	i := 0
	prevMonth := 0 // month number of the previous token, 0 if not a month
	prevMonthStart := 0
	prevDay := 0 // day number of a recent token ("20th of May")
	prevDayStart := 0
	for i < len(text) {
		for i < len(text) && spaceByte(text[i]) {
			i++
		}
		if i >= len(text) {
			break
		}
		j := wordEnd(text, i)
		raw, st := trimProse(text[i:j], base+i)
		i = j
		if raw == "" {
			prevMonth, prevDay = 0, 0
			continue
		}
		month, day := 0, 0
		wi := lookupWord(raw)
		of := wi.ofThe()
		if mo := wi.month(); mo > 0 && (len(raw) > 3 || raw[0] >= 'A' && raw[0] <= 'Z') {
			month = mo
			if prevDay > 0 {
				// "20 May", "20th of May": the day was reported as a number
				// already; mark it part of the date.
				for k := len(sc.out.ms) - 1; k >= 0 && sc.out.ms[k].start >= int32(prevDayStart); k-- {
					if sc.out.ms[k].kind == mNum && sc.out.ms[k].start == int32(prevDayStart) {
						sc.out.ms[k].norm = nkOrdinal
					}
				}
				sc.monthDay(mo, prevDay, prevDayStart, st+len(raw))
				prevDay, month = 0, 0
			}
		}
		if month == 0 && digitByte(raw[0]) { // a day number starts with a digit
			if d, ok := dayNumber(raw); ok {
				day = d
			}
		}
		if day > 0 && prevMonth > 0 {
			// "May 20", "May 20th", "May 20, 2024"
			k := i
			for k < len(text) && spaceByte(text[k]) {
				k++
			}
			e := k
			for e < len(text) && !spaceByte(text[e]) {
				e++
			}
			ny, nst := trimProse(text[k:e], base+k)
			if len(ny) == 4 && onlyDigits(ny) && (ny[:2] == "19" || ny[:2] == "20") {
				sc.date(digitsValue(ny), prevMonth, day, prevMonthStart, nst+4, nkDate)
				i = e
			} else {
				sc.monthDay(prevMonth, day, prevMonthStart, st+len(raw))
			}
			prevMonth, prevDay = 0, 0
			continue
		}
		sc.tokenWord(raw, wi, st, &i, text, base)
		if month > 0 {
			prevMonth, prevMonthStart = month, st
		} else {
			prevMonth = 0
		}
		if day > 0 {
			prevDay, prevDayStart = day, st
		} else if !(of && prevDay > 0) {
			prevDay = 0
		}
	}
}

// dayNumber accepts "20", "20th", "1st", "22nd", "3rd" as a day of month.
func dayNumber(s string) (int, bool) {
	if len(s) >= 3 {
		a, b := lowerByte(s[len(s)-2]), lowerByte(s[len(s)-1])
		if a == 's' && b == 't' || a == 'n' && b == 'd' || a == 'r' && b == 'd' || a == 't' && b == 'h' {
			s = s[:len(s)-2]
		}
	}
	if len(s) == 0 || len(s) > 2 || !onlyDigits(s) {
		return 0, false
	}
	d := digitsValue(s)
	if d < 1 || d > 31 {
		return 0, false
	}
	return d, true
}

// add appends a mention with the scanner's context and returns it so the
// caller can write its key into the arena.
func (sc *textScanner) add(kind mkind, start, end int, norm normKind) *mention {
	b := sc.out
	b.ms = append(b.ms, sc.ctx)
	m := &b.ms[len(b.ms)-1]
	m.kind, m.norm = kind, norm
	m.ent, m.tpl = -1, -1
	m.start, m.end = int32(start), int32(end)
	m.k0 = int32(len(b.arena))
	return m
}

func (sc *textScanner) done(m *mention) { m.k1 = int32(len(sc.out.arena)) }

func (sc *textScanner) date(y, mo, d, start, end int, norm normKind) {
	m := sc.add(mDate, start, end, norm)
	sc.out.arena = appendDateKey(sc.out.arena, y, mo, d)
	sc.done(m)
}

func (sc *textScanner) monthDay(mo, d, start, end int) {
	if sc.refYear == 0 {
		sc.pendingMD = append(sc.pendingMD, pendingMD{mo, d, int32(start), int32(end)})
		return
	}
	sc.date(sc.refYear, mo, d, start, end, nkDateYear)
}

func (sc *textScanner) clock(h, mi, start, end int, norm normKind) {
	m := sc.add(mTime, start, end, norm)
	sc.out.arena = appendTimeKey(sc.out.arena, h, mi)
	sc.done(m)
}

func (sc *textScanner) number(f float64, kind mkind, start, end int, norm normKind) {
	m := sc.add(kind, start, end, norm)
	sc.out.arena = appendNumberKey(sc.out.arena, f)
	m.num = f
	m.isInt = f == float64(int64(f))
	m.small = m.isInt && f >= -sc.smallAt && f <= sc.smallAt
	sc.done(m)
}

// stopWord reports the function words of English prose, which no argument
// is ever grounded in and which would only crowd the index.
func stopWord(s string) bool {
	if len(s) > 6 {
		return false
	}
	var buf [6]byte
	for i := 0; i < len(s); i++ {
		buf[i] = lowerByte(s[i])
	}
	return stopWordLower(buf[:len(s)])
}

// stopWordLower is stopWord for a word already lower-cased.
func stopWordLower(w []byte) bool {
	if len(w) == 0 || len(w) > 6 {
		return false
	}
	// The word packed in an integer is looked up in an open-addressing set
	// of the stop words packed alike: no string comparison per word.
	v := packWord(w)
	for i := stopSlot(v); ; i = (i + 1) & (len(stopSet) - 1) {
		switch stopSet[i] {
		case v:
			return true
		case 0:
			return false
		}
	}
}

// packWord packs a word of at most 7 bytes and its length into an integer;
// distinct words give distinct integers, and none gives 0.
func packWord(w []byte) uint64 {
	v := uint64(len(w)) << 56
	for i, c := range w {
		v |= uint64(c) << (8 * i)
	}
	return v
}

func stopSlot(v uint64) int { return int((v * 0x9E3779B97F4A7C15) >> 56) }

// stopWords are the words stopWordLower reports.
var stopWords = []string{"the", "a", "an", "and", "or", "of", "to", "in", "for", "on", "is", "are", "was", "were", "be", "been",
	"you", "your", "i", "it", "its", "this", "that", "with", "as", "at", "by", "from", "if", "can", "will",
	"me", "my", "we", "our", "us", "they", "their", "them", "he", "she", "his", "her", "has", "have", "had",
	"do", "does", "did", "not", "but", "so", "than", "then", "there", "these", "those", "what", "which",
	"who", "when", "where", "how", "all", "any", "each", "may", "must", "would", "could", "should", "also",
	"into", "about", "after", "only", "just", "more", "most", "other", "such", "same", "like", "please"}

// stopSet holds the stop words packed by packWord, at most a third full.
var stopSet = func() (t [256]uint64) {
	for _, w := range stopWords {
		v := packWord([]byte(w))
		i := stopSlot(v)
		for t[i] != 0 {
			i = (i + 1) & (len(t) - 1)
		}
		t[i] = v
	}
	return t
}()

func (sc *textScanner) word(s string, start, end int, kind mkind, norm normKind) {
	if sc.ctx.p1 == sc.ctx.p0 && kind == mWord && stopWord(s) {
		return // prose, not a JSON value
	}
	sc.wordStop(s, false, start, end, kind, norm)
}

// wordStop is word for s whose stopWord is stop (the token classification
// has it already).
func (sc *textScanner) wordStop(s string, stop bool, start, end int, kind mkind, norm normKind) {
	if sc.ctx.p1 == sc.ctx.p0 && kind == mWord && stop {
		return // prose, not a JSON value
	}
	m := sc.add(kind, start, end, norm)
	sc.out.arena = appendStringKey(sc.out.arena, s)
	sc.done(m)
	if m.k1-m.k0 <= 2 { // "s:" alone: nothing left after folding
		sc.out.arena = sc.out.arena[:m.k0]
		sc.out.ms = sc.out.ms[:len(sc.out.ms)-1]
	}
}

// ampm reads "am", "pm", "a.m.", "p.m." (any case).
func ampm(s string) (pm bool, ok bool) {
	s = strings.TrimRight(s, ".,;:!?)")
	if len(s) == 2 || len(s) == 3 && s[1] == '.' {
		a, b := lowerByte(s[0]), lowerByte(s[len(s)-1])
		if b == 'm' && (a == 'a' || a == 'p') {
			return a == 'p', true
		}
	}
	return false, false
}

func to24(h int, pm bool) int {
	if pm && h < 12 {
		return h + 12
	}
	if !pm && h == 12 {
		return 0
	}
	return h
}

// peekAMPM looks at the token after position i for "AM"/"PM". skip is
// where scanning resumes; end is where the mention ends (without a
// sentence's closing punctuation).
func peekAMPM(text string, i int) (pm bool, skip, end int, ok bool) {
	k := i
	for k < len(text) && spaceByte(text[k]) {
		k++
	}
	e := k
	for e < len(text) && !spaceByte(text[e]) {
		e++
	}
	pm, ok = ampm(text[k:e])
	if !ok {
		return false, 0, 0, false
	}
	end = k + 2
	if e-k >= 4 && text[k+1] == '.' {
		end = k + 4 // "p.m."
	}
	return pm, e, end, true
}

// token classifies one trimmed token. i points after the token in text and
// is advanced when the token swallows the next one ("7:00 PM").
func (sc *textScanner) token(s string, start int, i *int, text string, base int) {
	sc.tokenWord(s, lookupWord(s), start, i, text, base)
}

// tokenWord is token for s whose lookupWord is wi.
func (sc *textScanner) tokenWord(s string, wi wordInfo, start int, i *int, text string, base int) {
	end := start + len(s)
	// $ amounts
	if s[0] == '$' || (len(s) > 1 && s[0] == '-' && s[1] == '$') {
		neg := s[0] == '-'
		body := strings.TrimLeft(s, "-$")
		if k := strings.IndexByte(body, '/'); k > 0 { // "$30/passenger"
			body = body[:k]
		}
		if f, ok := parseNumber(body); ok {
			if neg {
				f = -f
			}
			sc.number(f, mMoney, start, end, nkMoney)
		}
		return
	}
	// Dates and clock times start with a digit; words skip their parsers.
	if digitByte(s[0]) {
		// ISO dates, optionally with a time: 2024-05-15, 2024-05-15T15:00:00
		if y, mo, d, ok := parseISODate(s); ok {
			sc.date(y, mo, d, start, start+10, nkNone)
			if len(s) > 11 && (s[10] == 'T' || s[10] == ' ') {
				if h, mi, n, ok := parseClock(s[11:]); ok {
					sc.clock(h, mi, start+11, start+11+n, nkTimestamp)
				}
			}
			return
		}
		// clock times: 15:00, 15:00:00, 7:00 PM, 03:00:00+1
		if h, mi, n, ok := parseClock(s); ok {
			rest := s[n:]
			if rest == "" || rest == "+1" {
				if pm, skip, e, ok := peekAMPM(text, *i); ok && h <= 12 {
					sc.clock(to24(h, pm), mi, start, base+e, nkClock12)
					*i = skip
					return
				}
				sc.clock(h, mi, start, end, nkNone)
				return
			}
			if pm, ok := ampm(rest); ok && h <= 12 {
				sc.clock(to24(h, pm), mi, start, end, nkClock12)
			}
			return
		}
	}
	// US dates (5/20, 05/20/2024) and slash-joined tokens (HAT136/HAT039)
	if k := indexByteShort(s, '/'); k > 0 {
		if y, mo, d, ok := parseUSDate(s); ok {
			if y == 0 {
				sc.monthDay(mo, d, start, end)
			} else {
				sc.date(y, mo, d, start, end, nkDate)
			}
			return
		}
		off := 0
		for off <= len(s) {
			e := strings.IndexByte(s[off:], '/')
			if e < 0 {
				e = len(s)
			} else {
				e += off
			}
			if p, ps := trimProse(s[off:e], start+off); p != "" {
				sc.token(p, ps, i, text, base)
			}
			off = e + 1
		}
		return
	}
	// numbers: 250, 1,234.50, 20%, 11am, 7pm, 20th
	if digitByte(s[0]) || (len(s) > 1 && (s[0] == '-' || s[0] == '+') && digitByte(s[1])) {
		body := strings.TrimSuffix(s, "%")
		if f, ok := parseNumber(body); ok {
			if f == float64(int64(f)) && f >= 1 && f <= 12 {
				if pm, skip, e, ok := peekAMPM(text, *i); ok {
					sc.clock(to24(int(f), pm), 0, start, base+e, nkClock12)
					*i = skip
					return
				}
			}
			sc.number(f, mNum, start, end, nkNone)
			if onlyDigits(s) {
				sc.word(s, start, end, mWord, nkDigits)
			}
			return
		}
		if len(s) > 2 {
			if pm, ok := ampm(s[len(s)-2:]); ok {
				if h, ok := parseNumber(s[:len(s)-2]); ok && h >= 1 && h <= 12 && h == float64(int(h)) {
					sc.clock(to24(int(h), pm), 0, start, end, nkClock12)
					return
				}
			}
		}
		if d, ok := dayNumber(s); ok {
			sc.number(float64(d), mNum, start, end, nkOrdinal)
			return
		}
	}
	// words and identifiers
	if wi.num() > 0 {
		sc.number(float64(wi.num()-1), mNum, start, end, nkNumberWord)
		return
	}
	if sc.refDate[0] != 0 {
		switch wi.day() {
		case dayToday:
			sc.date(sc.refDate[0], sc.refDate[1], sc.refDate[2], start, end, nkToday)
		case dayTomorrow:
			y, mo, d := addDays(sc.refDate, 1)
			sc.date(y, mo, d, start, end, nkTomorrow)
		}
	}
	sc.wordStop(s, wi.stop(), start, end, mWord, nkNone)
	// Plural words also stand for their singular ("certificates").
	if len(s) > 4 && (s[len(s)-1] == 's' || s[len(s)-1] == 'S') && letterByte(s[len(s)-2]) && onlyLetters(s) {
		sc.word(s[:len(s)-1], start, end, mWord, nkPlural)
	}
	// The parts of snake_case and dashed identifiers, for prose that names
	// them by their number ("certificate 7504069").
	for k := 0; k < len(s); k++ {
		if s[k] == '_' || s[k] == '-' {
			sc.idParts(s, start)
			break
		}
	}
}

// indexByteShort is strings.IndexByte for the short strings of tokens,
// where a loop beats the call.
func indexByteShort(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func onlyLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !letterByte(s[i]) {
			return false
		}
	}
	return true
}

// idParts reports the all-digit parts (3+ digits) of a snake_case or dashed
// identifier, so prose that names it by its number still finds it.
func (sc *textScanner) idParts(s string, start int) {
	k := 0
	for k < len(s) {
		for k < len(s) && (s[k] == '_' || s[k] == '-') {
			k++
		}
		e := k
		for e < len(s) && s[e] != '_' && s[e] != '-' {
			e++
		}
		if e-k >= 3 && onlyDigits(s[k:e]) && (k > 0 || e < len(s)) {
			m := sc.add(mIDPart, start+k, start+e, nkIDPart)
			sc.out.arena = append(sc.out.arena, "s:"...)
			sc.out.arena = append(sc.out.arena, s[k:e]...)
			sc.done(m)
			if e-k >= 6 {
				// "Gift Card ending in 6644" for gift_card_6276644
				m := sc.add(mIDPart, start+e-4, start+e, nkIDPart)
				sc.out.arena = append(sc.out.arena, "s:"...)
				sc.out.arena = append(sc.out.arena, s[e-4:e]...)
				sc.done(m)
			}
		}
		k = e
	}
}

// parseUSDate reads M/D or M/D/YYYY (or /YY). y is 0 without a year.
func parseUSDate(s string) (y, m, d int, ok bool) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, 0, 0, false
	}
	for _, p := range parts {
		if !onlyDigits(p) {
			return 0, 0, 0, false
		}
	}
	if len(parts[0]) > 2 || len(parts[1]) > 2 {
		return 0, 0, 0, false
	}
	m, d = digitsValue(parts[0]), digitsValue(parts[1])
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, false
	}
	if len(parts) == 3 {
		switch len(parts[2]) {
		case 4:
			y = digitsValue(parts[2])
		case 2:
			y = 2000 + digitsValue(parts[2])
		default:
			return 0, 0, 0, false
		}
	}
	return y, m, d, true
}

var monthDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func addDays(ref [3]int, n int) (int, int, int) {
	y, m, d := ref[0], ref[1], ref[2]
	for ; n > 0; n-- {
		d++
		md := monthDays[m]
		if m == 2 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
			md = 28
		}
		if d > md {
			d = 1
			m++
			if m > 12 {
				m = 1
				y++
			}
		}
	}
	return y, m, d
}
