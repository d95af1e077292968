package grounding

import (
	"encoding/json"
	"math/bits"
	"strconv"
)

// jsonSeg is one step of a JSON path: an object key, or an array index when
// key is "" and index >= 0.
type jsonSeg struct {
	key   string
	index int
}

// jsonWalker scans a JSON document and appends a mention for every scalar
// and every object key, with its path, to the scanner's buffer. String values
// are also scanned as text, so dates, times and ids inside them are found
// ("2024-05-15T15:00:00", "Flight HAT136 ..."). It is a small hand-written
// parser because the checker walks every observation and encoding/json into
// interface values would dominate the run time.
type jsonWalker struct {
	src string
	pos int
	// segs is the kept part of the current path: at most maxPathSegs
	// segments rendering to at most maxPathBytes (segBytes). over counts the
	// deeper segments left out; while it is not 0 the path renders with
	// pathCut after the kept part. depth is the container nesting.
	segs     []jsonSeg
	segBytes int
	over     int
	depth    int
	// segLen is the rendered length of each kept segment, so pop drops a
	// segment without rendering it again.
	segLen []int32
	// path is segs rendered (see appendPath), kept up to date as segments
	// are pushed and popped while scanning (not in leaf mode): a leaf copies
	// the path, at most maxPathBytes+len(pathCut) bytes, instead of
	// rendering it from the root.
	path []byte
	// scratch renders one segment (push, pop).
	scratch []byte
	// lastP0 and lastP1 locate the path the last leaf wrote into the arena,
	// which the next leaf reuses while no segment was pushed or popped (an
	// object key and its scalar value share their path); lastP0 < 0: none.
	lastP0, lastP1 int32
	sc             *textScanner
	bad            bool
	// memo, when set, remembers the scans of keys and string values.
	memo *scanMemo
	// onLeaf, when set, receives every scalar instead of the scanner:
	// kind is 's' (string), 'n' (number), 'b' (true/false) or 'z' (null);
	// [start,end) is the raw value in src (strings with their quotes).
	onLeaf func(w *jsonWalker, kind byte, s string, f float64, start, end int)
}

// walkLeaves calls onLeaf for every scalar of src; false when src is not
// one complete JSON value.
func (w *jsonWalker) walkLeaves(src string, onLeaf func(w *jsonWalker, kind byte, s string, f float64, start, end int)) bool {
	w.src, w.pos, w.bad, w.onLeaf = src, 0, false, onLeaf
	w.segs, w.segLen, w.segBytes, w.over, w.depth = w.segs[:0], w.segLen[:0], 0, 0, 0
	w.value(-1, 0)
	w.ws()
	w.onLeaf = nil
	return !w.bad && w.pos == len(src)
}

// walkJSON scans src (a whole message content, or a call's arguments) into
// sc.out. It reports false, leaving sc.out as it was, when src is not one
// complete JSON value.
func (w *jsonWalker) walkJSON(src string, sc *textScanner) bool {
	out := sc.out
	nm, na, no, nk := len(out.ms), len(out.arena), len(out.objs), len(out.keys)
	w.src, w.pos, w.sc, w.bad = src, 0, sc, false
	w.segs, w.segLen, w.segBytes, w.over, w.depth = w.segs[:0], w.segLen[:0], 0, 0, 0
	w.path = w.path[:0]
	w.lastP0 = -1
	if w.memo != nil {
		// The scanner's state (reference dates) is the same for the whole
		// document: the memo checks it once, not per key and value.
		w.memo.sync(sc)
	}
	w.value(-1, 0)
	w.ws()
	if w.bad || w.pos != len(src) {
		out.ms, out.arena, out.objs, out.keys = out.ms[:nm], out.arena[:na], out.objs[:no], out.keys[:nk]
		return false
	}
	return true
}

func (w *jsonWalker) ws() {
	for w.pos < len(w.src) && spaceByte(w.src[w.pos]) {
		w.pos++
	}
}

// wildIndex marks an index segment rendered as [*] (groups of siblings).
const wildIndex = -7

// Bounds on hostile documents. A document nested deeper than maxJSONDepth
// (encoding/json's own limit) is not read as JSON: the walker recurses once
// per level, and a log of 24 MB of "[" overflowed the stack, which kills
// the process. A path keeps at most maxPathSegs segments and maxPathBytes
// bytes, whole segments only; a deeper or longer path is cut there and
// marked with pathCut, so what one leaf costs is bounded (every leaf copies
// its path: 5,000 levels of {"a": around many values took 9 GB). Real logs
// nest a few levels, their paths are exact.
const (
	maxJSONDepth = 10000
	maxPathSegs  = 64
	maxPathBytes = 256
	pathCut      = "…"
)

// pathIsCut reports whether a rendered path was cut (see maxPathSegs).
func pathIsCut(p []byte) bool {
	return len(p) >= len(pathCut) && string(p[len(p)-len(pathCut):]) == pathCut
}

// appendPath renders the current path: payment_methods.credit_card_1.id,
// [0][1].flight_number, flights[0].price; odd keys are quoted: ["a b"].
// A path past the bounds ends in pathCut.
func (w *jsonWalker) appendPath(b []byte) []byte {
	for i, s := range w.segs {
		b = appendSeg(b, i, s)
	}
	if w.over > 0 {
		b = append(b, pathCut...)
	}
	return b
}

// pathCutOff reports whether the path is cut (has segments left out).
func (w *jsonWalker) pathCutOff() bool { return w.over > 0 }

// appendSeg renders segment i of a path.
func appendSeg(b []byte, i int, s jsonSeg) []byte {
	if s.key == "" && s.index == wildIndex {
		return append(b, "[*]"...)
	}
	if s.key == "" && s.index >= 0 {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(s.index), 10)
		return append(b, ']')
	}
	if plainKey(s.key) {
		if i > 0 {
			b = append(b, '.')
		}
		return append(b, s.key...)
	}
	b = append(b, '[')
	b = appendQuote(b, s.key)
	return append(b, ']')
}

// push and pop add and drop the innermost path segment. A segment past
// the bounds is only counted (over); the path then ends in pathCut. The
// segments themselves (segs) are kept in leaf mode only, whose callers read
// them; a walk needs only the rendered path and the segments' lengths.
func (w *jsonWalker) push(s jsonSeg) {
	if w.onLeaf == nil {
		w.pushRendered(s, s.key != "" && plainKey(s.key))
		return
	}
	if w.over == 0 && len(w.segLen) < maxPathSegs && len(s.key) <= maxPathBytes {
		// In leaf mode only the segment's rendered length is needed.
		w.scratch = appendSeg(w.scratch[:0], len(w.segLen), s)
		if n := len(w.scratch); w.segBytes+n <= maxPathBytes {
			w.segs = append(w.segs, s)
			w.segLen = append(w.segLen, int32(n))
			w.segBytes += n
			return
		}
	}
	w.over++
}

// pushKey is push of an object key outside leaf mode, whose plainKey the
// caller knows (the key memo remembers it).
func (w *jsonWalker) pushKey(k string, plain bool) {
	w.pushRendered(jsonSeg{key: k, index: -1}, plain)
}

// pushRendered is push outside leaf mode: the segment is rendered straight
// onto the path, and cut off again when it does not fit. plain is whether
// s is a key written bare (plainKey).
func (w *jsonWalker) pushRendered(s jsonSeg, plain bool) {
	if w.over == 0 && len(w.segLen) < maxPathSegs && len(s.key) <= maxPathBytes {
		p0 := len(w.path)
		if plain {
			if len(w.segLen) > 0 {
				w.path = append(w.path, '.')
			}
			w.path = append(w.path, s.key...)
		} else {
			w.path = appendSeg(w.path, len(w.segLen), s)
		}
		if n := len(w.path) - p0; w.segBytes+n <= maxPathBytes {
			w.segLen = append(w.segLen, int32(n))
			w.segBytes += n
			w.lastP0 = -1
			return
		}
		w.path = w.path[:p0]
	}
	if w.over == 0 {
		w.path = append(w.path, pathCut...)
		w.lastP0 = -1
	}
	w.over++
}

func (w *jsonWalker) pop() {
	if w.over > 0 {
		w.over--
		if w.over == 0 && w.onLeaf == nil {
			w.path = w.path[:len(w.path)-len(pathCut)]
			w.lastP0 = -1
		}
		return
	}
	last := len(w.segLen) - 1
	n := int(w.segLen[last])
	w.segLen = w.segLen[:last]
	w.segBytes -= n
	if w.onLeaf == nil {
		w.path = w.path[:len(w.path)-n]
		w.lastP0 = -1
		return
	}
	w.segs = w.segs[:last]
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !plainKeyByte[k[i]] {
			return false
		}
	}
	return true
}

// plainKeyByte marks the bytes a key may have and still be written bare
// in a path (letters, digits, '_', '-', '$', '#'): one table load per byte
// of every key pushed.
var plainKeyByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		t[c] = letterByte(b) || digitByte(b) || b == '_' || b == '-' || b == '$' || b == '#'
	}
	return t
}()

// leafCtx sets the scanner context for a leaf at the current path.
func (w *jsonWalker) leafCtx(obj int32, key int32) {
	if w.lastP0 < 0 {
		out := w.sc.out
		w.lastP0 = int32(len(out.arena))
		out.arena = append(out.arena, w.path...)
		w.lastP1 = int32(len(out.arena))
	}
	w.sc.ctx = mention{obj: obj, valObj: -1, p0: w.lastP0, p1: w.lastP1, jk: key}
}

func (w *jsonWalker) value(obj int32, key int32) {
	w.ws()
	if w.pos >= len(w.src) {
		w.bad = true
		return
	}
	switch c := w.src[w.pos]; {
	case c == '{' || c == '[':
		// Too deep to be JSON (see maxJSONDepth): the caller reads it as
		// text, and the recursion stays bounded.
		if w.depth >= maxJSONDepth {
			w.bad = true
			return
		}
		w.depth++
		if c == '{' {
			w.object(obj)
		} else {
			w.array(obj, key)
		}
		w.depth--
	case c == '"':
		start := w.pos + 1
		s, ok := w.str()
		if !ok {
			return
		}
		if w.onLeaf != nil {
			w.onLeaf(w, 's', s, 0, start-1, w.pos)
			return
		}
		w.leafCtx(obj, key)
		w.stringLeaf(s, start, w.pos-1)
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range [...]string{"true", "false", "null"} {
			if len(w.src)-w.pos >= len(lit) && w.src[w.pos:w.pos+len(lit)] == lit {
				start := w.pos
				w.pos += len(lit)
				if w.onLeaf != nil {
					k := byte('b')
					if lit == "null" {
						k = 'z'
					}
					w.onLeaf(w, k, lit, 0, start, w.pos)
					return
				}
				if lit != "null" {
					w.leafCtx(obj, key)
					w.sc.ctx.wholeLeaf = true
					w.sc.word(lit, start, w.pos, mWord, nkNone)
				}
				return
			}
		}
		w.bad = true
	default:
		start := w.pos
		for w.pos < len(w.src) {
			c := w.src[w.pos]
			if digitByte(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				w.pos++
				continue
			}
			break
		}
		f, err := strconv.ParseFloat(w.src[start:w.pos], 64)
		if err != nil || start == w.pos {
			w.bad = true
			return
		}
		if w.onLeaf != nil {
			w.onLeaf(w, 'n', w.src[start:w.pos], f, start, w.pos)
			return
		}
		w.leafCtx(obj, key)
		w.sc.ctx.wholeLeaf = true
		w.sc.number(f, mNum, start, w.pos, nkNone)
	}
}

// stringLeaf reports a JSON string value at [start,end) of the source: as
// text (its words, dates, ids) and, when it has several words, as a whole.
func (w *jsonWalker) stringLeaf(s string, start, end int) {
	sm := w.memo
	if sm == nil || end-start != len(s) {
		w.scanString(s, start, end)
		return
	}
	sc := w.sc
	rec, h, slot, ok := sm.vals.lookup(s)
	if ok {
		sm.replay(sc, false, rec, start)
		return
	}
	n0, pend := len(sc.out.ms), len(sc.pendingMD)
	w.scanString(s, start, end)
	if len(sc.pendingMD) == pend {
		// The value is kept across trajectories: copy it out of this one's text.
		rec := sm.record(sc, false, n0, start)
		sm.valBytes += len(s)
		sm.vals.remember(sm.valText.cutString(s), h, slot, rec)
	}
}

// scanString is stringLeaf without the memo.
func (w *jsonWalker) scanString(s string, start, end int) {
	sc := w.sc
	n0 := len(sc.out.ms)
	escaped := end-start != len(s)
	if escaped {
		// Spans inside an unescaped string no longer match the source;
		// point every mention at the whole string.
		n := len(sc.out.ms)
		sc.scan(s, 0)
		for i := n; i < len(sc.out.ms); i++ {
			sc.out.ms[i].start, sc.out.ms[i].end = int32(start), int32(end)
		}
	}
	multi := false
	for i := 0; i < len(s); i++ {
		if spaceByte(s[i]) {
			multi = true
			break
		}
	}
	if !escaped {
		if multi {
			sc.scan(s, start)
		} else if raw, st := trimProse(s, start); raw != "" {
			// A single token (an id, a code, a date): classify it directly.
			i := len(s)
			sc.token(raw, st, &i, s, start)
		}
	}
	if multi && len(s) <= 200 {
		sc.word(s, start, end, mWord, nkNone)
	}
	markWhole(sc.out, n0, start, end)
}

// markWhole flags the mentions from index n0 on that span [start,end): the
// whole JSON value rather than a word inside it.
func markWhole(b *mentionBuf, n0, start, end int) {
	for i := n0; i < len(b.ms); i++ {
		m := &b.ms[i]
		if int(m.start) == start && int(m.end) == end && m.kind != mIDPart && m.norm != nkPlural {
			m.wholeLeaf = true
		}
	}
}

// str reads a JSON string at w.pos (on the opening quote) and returns its
// value. Strings without escapes are returned as slices of the source.
func (w *jsonWalker) str() (string, bool) {
	i := w.pos + 1
	esc := false
	for i < len(w.src) {
		// Most bytes of a string are none of the three this loop stops at:
		// skip them eight at a time.
		for i+8 <= len(w.src) {
			if m := strStops(load64(w.src, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(w.src) {
			break
		}
		c := w.src[i]
		if c == '\\' {
			esc = true
			i += 2
			continue
		}
		if c == '"' {
			break
		}
		if c < 0x20 {
			w.bad = true
			return "", false
		}
		i++
	}
	if i >= len(w.src) {
		w.bad = true
		return "", false
	}
	raw := w.src[w.pos : i+1]
	w.pos = i + 1
	if !esc {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		w.bad = true
		return "", false
	}
	return s, true
}

// strStops returns 0x80 in the lowest byte of w that is '"', '\\' or a
// control byte (below 0x20), and possibly in bytes above it; 0 when there
// is none. Each test is exact in its lowest flagged byte (a borrow only
// flags bytes above a flagged one), so the lowest flag of the three is.
func strStops(w uint64) uint64 {
	q := w ^ ('"' * swarOnes)
	b := w ^ ('\\' * swarOnes)
	return ((q-swarOnes)&^q | (b-swarOnes)&^b | (w-0x20*swarOnes)&^w) & swarHigh
}

func (w *jsonWalker) object(parent int32) {
	if w.onLeaf != nil {
		w.objectLeaves()
		return
	}
	out := w.sc.out
	id := int32(len(out.objs))
	out.objs = append(out.objs, jobj{m0: int32(len(out.ms)), parent: parent})
	w.pos++ // {
	w.ws()
	if w.pos < len(w.src) && w.src[w.pos] == '}' {
		w.pos++
		out.objs[id].m1 = int32(len(out.ms))
		return
	}
	for !w.bad {
		w.ws()
		if w.pos >= len(w.src) || w.src[w.pos] != '"' {
			w.bad = true
			return
		}
		kstart := w.pos + 1
		k, ok := w.str()
		if !ok {
			return
		}
		kend := w.pos - 1
		// A key written without escapes is looked up in the memo first: a
		// remembered key also tells whether it is written bare in a path.
		raw := kend-kstart == len(k)
		sm := w.memo
		var rec memoRec
		var h uint64
		slot, hit := -1, false
		if sm != nil && raw {
			rec, h, slot, hit = sm.keys.lookup(k)
		}
		plain := rec.plain
		if !hit {
			plain = k != "" && plainKey(k)
		}
		w.pushKey(k, plain)
		ki := out.addKey(k)
		// The key itself is a value: maps keyed by id (payment_methods),
		// airport tables ({"JFK": "New York"}).
		w.leafCtx(id, ki)
		w.sc.ctx.isKey = true
		nk := len(out.ms)
		switch {
		case hit:
			sm.replay(w.sc, true, rec, kstart)
		case raw:
			w.scanKey(k, kstart, kend, h, slot, plain)
		default:
			w.sc.word(k, kstart, kend, mWord, nkNone)
			markWhole(out, nk, kstart, kend)
		}
		w.sc.ctx.isKey = false
		w.ws()
		if w.pos >= len(w.src) || w.src[w.pos] != ':' {
			w.bad = true
			return
		}
		w.pos++
		w.ws()
		if w.pos < len(w.src) && w.src[w.pos] == '{' {
			for i := nk; i < len(out.ms); i++ {
				out.ms[i].valObj = int32(len(out.objs))
			}
		}
		w.value(id, ki)
		w.pop()
		w.ws()
		if w.pos >= len(w.src) {
			w.bad = true
			return
		}
		if w.src[w.pos] == ',' {
			w.pos++
			continue
		}
		if w.src[w.pos] == '}' {
			w.pos++
			out.objs[id].m1 = int32(len(out.ms))
			return
		}
		w.bad = true
	}
}

// scanKey scans an object key written without escapes, at [kstart,kend),
// that the key memo (if any) does not have: h and slot are what its lookup
// returned, plain is plainKey(k).
func (w *jsonWalker) scanKey(k string, kstart, kend int, h uint64, slot int, plain bool) {
	sc := w.sc
	sm := w.memo
	nk, pend := len(sc.out.ms), len(sc.pendingMD)
	sc.scan(k, kstart)
	markWhole(sc.out, nk, kstart, kend)
	if sm != nil && len(sc.pendingMD) == pend {
		// The key is kept across trajectories: copy it out of this one's text.
		rec := sm.record(sc, true, nk, kstart)
		rec.plain = plain
		sm.keys.remember(sm.keyText.cutString(k), h, slot, rec)
	}
}

// objectLeaves walks an object in leaf mode: no mentions, only paths.
func (w *jsonWalker) objectLeaves() {
	w.pos++ // {
	w.ws()
	if w.pos < len(w.src) && w.src[w.pos] == '}' {
		w.pos++
		return
	}
	for !w.bad {
		w.ws()
		if w.pos >= len(w.src) || w.src[w.pos] != '"' {
			w.bad = true
			return
		}
		k, ok := w.str()
		if !ok {
			return
		}
		w.ws()
		if w.pos >= len(w.src) || w.src[w.pos] != ':' {
			w.bad = true
			return
		}
		w.pos++
		w.push(jsonSeg{key: k, index: -1})
		w.value(-1, 0)
		w.pop()
		w.ws()
		if w.pos >= len(w.src) {
			w.bad = true
			return
		}
		if w.src[w.pos] == ',' {
			w.pos++
			continue
		}
		if w.src[w.pos] == '}' {
			w.pos++
			return
		}
		w.bad = true
	}
}

func (w *jsonWalker) array(obj int32, key int32) {
	w.pos++ // [
	w.ws()
	if w.pos < len(w.src) && w.src[w.pos] == ']' {
		w.pos++
		return
	}
	for i := 0; !w.bad; i++ {
		w.push(jsonSeg{index: i})
		w.value(obj, key)
		w.pop()
		w.ws()
		if w.pos >= len(w.src) {
			w.bad = true
			return
		}
		if w.src[w.pos] == ',' {
			w.pos++
			continue
		}
		if w.src[w.pos] == ']' {
			w.pos++
			return
		}
		w.bad = true
	}
}

// looksJSON reports whether content may be a JSON document worth walking:
// an object, an array or a bare number ("255.0" from a calculator).
func looksJSON(s string) bool {
	i := 0
	for i < len(s) && spaceByte(s[i]) {
		i++
	}
	if i >= len(s) {
		return false
	}
	c := s[i]
	return c == '{' || c == '[' || c == '-' || digitByte(c)
}
