package grounding

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// This file holds the index of the visible history V(H<t). The checker walks
// a trajectory once; before each assistant message it looks argument values
// up in the index, after it adds the message. Each canonical key (see
// normalize.go) keeps its first occurrences by provenance, so a lookup says
// not only whether a value was visible but where it came from.

// src is where a visible occurrence came from.
type src uint8

const (
	srcSystem src = iota + 1
	srcUser
	srcTool
	srcAgent // the agent's own text or call arguments
	srcRequest
	srcSchema
)

// occ is one occurrence of a key in a visible message. Entries hold seven
// of them, so it is kept small: the JSON path is an index into the
// checker's path list (0: none; see checker.pathOf).
type occ struct {
	msg        int32 // message index; -1: none
	start, end int32 // byte span in the message content
	path       int32
	norm       normKind
	src        src
	whole      bool // the mention is the whole JSON value, not a word inside it
}

var noOcc = occ{msg: -1}

// newEntry is an entry with no occurrence yet, copied for every new key.
var newEntry = entry{sup: noOcc, user: noOcc, agent: noOcc, echo: noOcc, part: noOcc, confirmed: noOcc, confirmBy: -1, agentText: noOcc, partOf: -1}

func (o occ) ok() bool { return o.msg >= 0 }

// entry is what the index knows about one canonical key.
type entry struct {
	key string
	// sup is the best occurrence from a source other than the agent: the
	// system prompt, the user, a tool observation that is not an echo.
	sup occ
	// user is the first occurrence in a user message or the request.
	user occ
	// agent is the first occurrence in the agent's own messages; agentBad
	// says the agent introduced the value while nothing visible supported it
	// (unsupported, hidden-only, …): tool echoes of it support nothing.
	agent    occ
	agentBad bool
	// agentGuess says the agent introduced the value, in a call or a
	// reply, with outside knowledge (New York read as JFK): until the user
	// has answered, a reply or a call resting on a tool's echo of it rests
	// on the guess.
	agentGuess bool
	// echo is the first occurrence in an observation of a call whose own
	// arguments contained the value.
	echo occ
	// part is the first occurrence as the number part of a longer
	// identifier (4421486 in credit_card_4421486).
	part occ
	// confirmed is an agent text mention of the value that a later user
	// message accepted (confirmBy is that message).
	confirmed occ
	confirmBy int32
	// agentText is the latest agent text mention, pending is true while it
	// waits for the user's answer.
	agentText  occ
	pending    bool
	recentTurn int32 // c.turn+1 when listed in c.recent
	// partOf is the identifier this key is the number part of (-1).
	partOf int32
	// echoAt is 1 + the observation whose call had this key among its
	// arguments, while that observation is indexed (see indexMentions).
	echoAt int32
	// recordVal: the value was seen in the record of a chosen entity (the
	// observation of a read keyed by one); readKey: a successful read was
	// keyed by this entity.
	recordVal, readKey bool
	// hidden is set lazily: -2 unknown, -1 not in hidden context, else the
	// index into checker.hiddenOccs of the first hidden occurrence.
	small bool // a small integer
	// weak caches c.rt.weakTokens[key]: 0 not looked up yet, 1 weak, 2 not.
	weak int8
}

// weakToken is c.rt.weakTokens[e.key], looked up once per entry.
func (c *checker) weakToken(e *entry) bool {
	if e.weak == 0 {
		e.weak = 2
		if c.rt.weakTokens[e.key] {
			e.weak = 1
		}
	}
	return e.weak == 1
}

// candidate is one value of a kind listed by an observation, with the keys
// of its attributes (the other values of its JSON object).
type candidate struct {
	ent   int32
	msg   int32
	attrs []attr
	// listed: seen at a path of the kind's own lists (payment_methods.*),
	// not only through a reference anywhere (**.payment_id, a past payment
	// in a record).
	listed bool
}

type attr struct {
	ent int32
	key string // JSON key of the attribute ("last_four", "source")
}

// kindSet is the visible candidates of one kind, in order of appearance.
type kindSet struct {
	cands []candidate
	pos   map[int32]int // entry → index in cands
}

// numOcc is a number seen in a non-agent visible message, for derivations.
type numOcc struct {
	v          float64
	msg        int32
	start, end int32
}

// entryFor returns the entry of a key, if any visible message named it.
func (c *checker) entryFor(key []byte) (int32, bool) {
	h := hashKey(key)
	if id, ok := c.keys.getBytes(h, key); ok {
		return id, true
	}
	for _, b := range c.bases {
		if b.msg < c.pos {
			if _, ok := b.idx.get(h, string(key)); ok {
				return c.ensureEntryHashed(key, h), true
			}
		}
	}
	return -1, false
}

// mentionEntry is entryFor for a mention of an indexed buffer.
func (c *checker) mentionEntry(buf *mentionBuf, m *mention) int32 {
	if m.ent >= 0 {
		return m.ent
	}
	id, ok := c.entryFor(buf.key(m))
	if !ok {
		return -1
	}
	return id
}

// find is entryFor for a string key.
func (c *checker) find(k string) (int32, bool) {
	h := hashKeyStr(k)
	if id, ok := c.keys.get(h, k); ok {
		return id, true
	}
	for _, b := range c.bases {
		if b.msg < c.pos {
			if _, ok := b.idx.get(h, k); ok {
				// ensureEntryHashed reads the key and keeps a copy.
				return c.ensureEntryHashed(unsafe.Slice(unsafe.StringData(k), len(k)), h), true
			}
		}
	}
	return -1, false
}

// bytesView is b as a string without a copy, for lookups that read the
// key and keep nothing of it; b must not change while the string is used.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// findBytes is find for a key in a scratch buffer, which it does not keep
// (an entry it makes copies the key).
func (c *checker) findBytes(k []byte) (int32, bool) {
	if len(k) == 0 {
		return c.find("")
	}
	return c.find(unsafe.String(&k[0], len(k)))
}

// lookupEntry returns the entry of a key without making one.
func (c *checker) lookupEntry(k string) (int32, bool) { return c.keys.get(hashKeyStr(k), k) }

func (c *checker) ensureEntry(key []byte) int32 {
	return c.ensureEntryHashed(key, hashKey(key))
}

// ensureEntryIn is ensureEntry for a key that lives in buf's arena at
// [k0,k1).
func (c *checker) ensureEntryIn(key []byte, buf *mentionBuf, k0, k1 int32) int32 {
	return c.ensureEntryHashed(key, hashKey(key))
}

// ensureEntryHashed is ensureEntry for a key hashed to h (hashKey).
func (c *checker) ensureEntryHashed(key []byte, h uint64) int32 {
	// The lookup reads the key where it is (find keeps nothing); only a new
	// entry copies it, into the slab.
	id, slot, ok := c.keys.find(h, bytesView(key))
	if ok {
		return id
	}
	k := c.slab.cut(key)
	id = int32(len(c.ents))
	c.ents = append(c.ents, newEntry)
	c.ents[id].key = k
	c.keys.insert(slot, h, k, id)
	// Long system texts are indexed once per pool (baseIndex); their
	// occurrences join an entry when it is first needed.
	for _, b := range c.bases {
		if b.msg >= c.pos {
			continue
		}
		if i, ok := b.idx.get(h, k); ok {
			e := &c.ents[id]
			bo := &b.idx.occs[i]
			o := bo.o
			o.msg = int32(b.msg)
			if bo.path != "" {
				o.path = c.addPath(bo.path)
			}
			if bo.part {
				if !e.part.ok() {
					e.part = o
				}
			} else if !e.sup.ok() || (e.sup.norm != nkNone && o.norm == nkNone) {
				e.sup = o
			}
		}
	}
	return id
}

// baseIndex is the shared index of one long system text: every key's first
// occurrence (a literal one preferred), built once and read by all checks.
type baseIndex struct {
	occ  keyTable // key → index in occs
	occs []baseOcc
	// filter has two bits set per key, picked by its hash: a key whose
	// bits are not both set is not in occ. Most keys a trajectory indexes
	// are not in the policy, and the filter (a few KB) answers them
	// without a probe of occ's slots.
	filter    []uint64
	fmask     uint64
	low       string // the text lowered, for phrase searches
	upper     bool   // it has an ASCII upper-case letter
	ascii     bool   // it is all ASCII
	isJSON    bool
	pending   []pendingMD
	firstDate [3]int // first date written in full, zero when none
}

type baseOcc struct {
	o    occ // without its path, which is in path
	path string
	part bool
}

type baseRef struct {
	msg int
	idx *baseIndex
}

// filterBits are the two filter bits of a key hashed to h.
func (bi *baseIndex) filterBits(h uint64) (uint64, uint64) {
	return h & bi.fmask, (h >> 32) & bi.fmask
}

// get is occ.get behind the filter.
func (bi *baseIndex) get(h uint64, key string) (int32, bool) {
	a, b := bi.filterBits(h)
	if bi.filter[a>>6]&(1<<(a&63)) == 0 || bi.filter[b>>6]&(1<<(b&63)) == 0 {
		return -1, false
	}
	return bi.occ.get(h, key)
}

// newBaseIndex indexes a scanned buffer.
func newBaseIndex(b *mentionBuf, isJSON bool, pending []pendingMD) *baseIndex {
	bi := &baseIndex{isJSON: isJSON, pending: append([]pendingMD(nil), pending...)}
	for i := range b.ms {
		m := &b.ms[i]
		key := b.key(m)
		if len(key) <= 2 {
			continue
		}
		o := occ{start: m.start, end: m.end, norm: m.norm, src: srcSystem, whole: m.wholeLeaf}
		path := ""
		if m.p1 > m.p0 {
			path = string(b.path(m))
		}
		part := m.kind == mIDPart
		h := hashKey(key)
		i, slot, seen := bi.occ.findBytes(h, key)
		switch {
		case !seen:
			bi.occ.insert(slot, h, string(key), int32(len(bi.occs)))
			bi.occs = append(bi.occs, baseOcc{o: o, path: path, part: part})
		case !part && (bi.occs[i].part || bi.occs[i].o.norm != nkNone && m.norm == nkNone):
			bi.occs[i] = baseOcc{o: o, path: path, part: part}
		}
		if m.kind == mDate && m.norm == nkNone && bi.firstDate[0] == 0 {
			bi.firstDate = [3]int{digitsValue(string(key[2:6])), digitsValue(string(key[7:9])), digitsValue(string(key[10:12]))}
		}
	}
	// 16 bits per key (at least 64 bits): two bits a key make false
	// positives about 1 in 70.
	nbits := uint64(64)
	for nbits < 16*uint64(len(bi.occs)) {
		nbits *= 2
	}
	bi.filter, bi.fmask = make([]uint64, nbits/64), nbits-1
	for _, sl := range bi.occ.slots {
		if sl.gen == bi.occ.gen {
			a, b := bi.filterBits(sl.h)
			bi.filter[a>>6] |= 1 << (a & 63)
			bi.filter[b>>6] |= 1 << (b & 63)
		}
	}
	return bi
}

// indexMentions adds the mentions in c.buf, found in message msg from
// source s. echoKeys are the canonical keys of the arguments of the call the
// message answers (tool observations), whose reappearance is an echo.
func (c *checker) indexMentions(buf *mentionBuf, msg int, s src, echoKeys []string, agentBad map[string]bool) {
	// The entries of the echo keys are marked once (echoAt) rather than
	// every mention looking its key up in echoKeys; entries made while
	// indexing are checked as they are made.
	echoMark := int32(msg) + 1
	if echoKeys != nil {
		for _, k := range echoKeys {
			if id, ok := c.lookupEntry(k); ok {
				c.ents[id].echoAt = echoMark
			}
		}
	}
	lastWord, lastStart, lastEnd := int32(-1), int32(0), int32(0)
	for i := range buf.ms {
		m := &buf.ms[i]
		if m.k1-m.k0 <= 2 { // len(buf.key(m))
			m.ent = -1
			continue
		}
		id := m.ent // known when replayed from a scan memo template
		if id < 0 && m.tpl != -1 {
			// or learned since it was replayed: a value repeated within one
			// observation ("economy" in every flight of a search result)
			id = c.memo.learned(m.tpl)
		}
		if id < 0 {
			n := int32(len(c.ents))
			if m.tpl != -1 {
				// the template hashed its key when it was recorded
				id = c.ensureEntryHashed(buf.key(m), c.memo.keyHash(m.tpl))
			} else {
				id = c.ensureEntryIn(buf.key(m), buf, m.k0, m.k1)
			}
			if id >= n && echoKeys != nil && slices.Contains(echoKeys, c.ents[id].key) {
				c.ents[id].echoAt = echoMark
			}
			m.ent = id
			if m.tpl != -1 {
				c.memo.learn(m.tpl, id)
			}
		}
		if m.kind == mWord && m.norm == nkNone {
			lastWord, lastStart, lastEnd = id, m.start, m.end
		}
		e := &c.ents[id]
		if m.kind == mIDPart && e.partOf < 0 && lastWord >= 0 && m.start >= lastStart && m.end <= lastEnd {
			e.partOf = lastWord
		}
		if m.small {
			e.small = true
		}
		o := occ{msg: int32(msg), start: m.start, end: m.end, norm: m.norm, src: s}
		o.whole = m.wholeLeaf
		switch {
		case s == srcAgent:
			if !e.agent.ok() {
				o.path = c.pathIn(buf, m)
				e.agent = o
				if !e.sup.ok() && agentBad != nil && agentBad[e.key] {
					e.agentBad = true
				}
			}
			continue
		case m.kind == mIDPart:
			if !e.part.ok() {
				o.path = c.pathIn(buf, m)
				e.part = o
			}
			continue
		case echoKeys != nil && e.echoAt == echoMark:
			if !e.echo.ok() {
				o.path = c.pathIn(buf, m)
				e.echo = o
			}
			continue
		}
		if !e.sup.ok() || (e.sup.norm != nkNone && m.norm == nkNone) {
			o.path = c.pathIn(buf, m)
			e.sup = o
		}
		if (s == srcUser || s == srcRequest) && !e.user.ok() {
			if o.path == 0 {
				o.path = c.pathIn(buf, m)
			}
			e.user = o
		}
		if (m.kind == mNum || m.kind == mMoney) && s != srcSchema {
			c.nums = append(c.nums, numOcc{v: m.num, msg: int32(msg), start: m.start, end: m.end})
		}
	}
}

// pathIn returns a mention's JSON path as an occurrence path (an index
// into c.paths). Mentions of one leaf share their path, so the last one
// added is reused.
func (c *checker) pathIn(buf *mentionBuf, m *mention) int32 {
	if m.p1 <= m.p0 {
		return 0
	}
	if m.p0 != buf.lastP0 || m.p1 != buf.lastP1 || buf.lastPath == 0 {
		buf.lastP0, buf.lastP1 = m.p0, m.p1
		buf.lastPath = c.addPath(c.slab.cut(buf.path(m)))
	}
	return buf.lastPath
}

// addPath adds a JSON path to c.paths and returns its index.
func (c *checker) addPath(p string) int32 {
	c.paths = append(c.paths, p)
	return int32(len(c.paths) - 1)
}

// pathOf returns an occurrence's JSON path, "" when none.
func (c *checker) pathOf(o occ) string { return c.paths[o.path] }

// keptPath is pathOf copied for a result to keep.
func (c *checker) keptPath(o occ) string {
	if p := c.paths[o.path]; p != "" {
		return c.out.cutString(p)
	}
	return ""
}

// strSlab cuts strings that results keep (argument paths, evidence paths)
// out of shared allocations. A strings.Builder only ever appends, so the
// strings cut from it stay valid and never change; when it is full a new one
// is started, twice the size up to slabSize (a trajectory's result keeps a
// few hundred bytes of paths: a fixed 4 KB was most of what checking
// allocated), and the old one's bytes live as long as strings cut from them.
type strSlab struct {
	b    strings.Builder
	next int // size of the next chunk
}

const (
	slabFirst = 256
	slabSize  = 4 << 10
)

func (s *strSlab) room(n int) {
	if s.b.Cap()-s.b.Len() >= n {
		return
	}
	size := max(s.next, slabFirst)
	s.next = min(2*size, slabSize)
	s.b = strings.Builder{}
	s.b.Grow(max(size, n))
}

func (s *strSlab) cut(p []byte) string {
	s.room(len(p))
	off := s.b.Len()
	s.b.Write(p)
	return s.b.String()[off:]
}

// cutString is cut for a string.
func (s *strSlab) cutString(p string) string {
	s.room(len(p))
	off := s.b.Len()
	s.b.WriteString(p)
	return s.b.String()[off:]
}

// reset starts a new slab, leaving the strings cut so far to their owners.
func (s *strSlab) reset() { *s = strSlab{} }

// scratchSlab cuts the strings that live only while one trajectory is
// checked (entry keys, occurrence paths: a trajectory makes hundreds of each)
// out of chunks that the pooled checker reuses for the next trajectory, so
// checking allocates none of them once warm. Nothing cut from it may reach a
// Result: TestCheckGolden re-reads every result after thousands of later
// checks to prove it.
type scratchSlab struct {
	chunks [][]byte // each at its full length
	cur    int      // chunk being filled
	// buf is chunks[cur] and n the bytes of it in use: cutting a string
	// writes only the integer n, no slice header (a pointer store, with its
	// write barrier check, on a path every new entry key takes).
	buf []byte
	n   int
}

const scratchChunk = 16 << 10

func (s *scratchSlab) cut(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	if len(s.buf)-s.n < len(p) {
		s.nextChunk(len(p))
	}
	copy(s.buf[s.n:], p)
	out := unsafe.String(&s.buf[s.n], len(p))
	s.n += len(p)
	return out
}

// nextChunk moves on to the next chunk with room for n bytes, making
// one when there is none.
func (s *scratchSlab) nextChunk(n int) {
	if s.buf != nil {
		s.cur++
	}
	for ; s.cur < len(s.chunks); s.cur++ {
		if len(s.chunks[s.cur]) >= n {
			s.buf, s.n = s.chunks[s.cur], 0
			return
		}
	}
	s.chunks = append(s.chunks, make([]byte, max(scratchChunk, n)))
	s.cur = len(s.chunks) - 1
	s.buf, s.n = s.chunks[s.cur], 0
}

// cutString is cut for a string.
func (s *scratchSlab) cutString(p string) string {
	return s.cut(unsafe.Slice(unsafe.StringData(p), len(p)))
}

// cutLower is cutString of p with its ASCII letters lowered (asciiLower).
func (s *scratchSlab) cutLower(p string) string {
	out := s.cutString(p)
	if out == "" {
		return out
	}
	lowerASCIIInPlace(unsafe.Slice(unsafe.StringData(out), len(out))) // the slab's bytes, not yet read by anyone
	return out
}

// resultBytes cuts the byte values results keep (the JSON of the values
// found in text) out of shared chunks, as strSlab does for strings: each
// value is capped, so an append to it copies instead of running into the
// next one, and a full chunk is left to the results that hold its values.
type resultBytes struct {
	b    []byte
	next int
}

// quote appends s as json.Marshal quotes it and returns that value.
func (r *resultBytes) quote(s string) json.RawMessage {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // rare: escapes to write
			return b
		}
	}
	n := len(s) + 2
	if cap(r.b)-len(r.b) < n {
		size := max(r.next, slabFirst)
		r.next = min(2*size, slabSize)
		r.b = make([]byte, 0, max(size, n))
	}
	off := len(r.b)
	r.b = append(append(append(r.b, '"'), s...), '"')
	return r.b[off:len(r.b):len(r.b)]
}

// chunk hands out the slices results keep (decisions' ArgEvidence and
// reasons) from shared allocations: each slice is capped at what it was
// asked for, so appending past it with the built-in append reallocates that
// decision's slice alone.
type chunk[T any] struct{ a []T }

const chunkLen = 64

func (ch *chunk[T]) take(n int) []T {
	if cap(ch.a)-len(ch.a) < n {
		ch.a = make([]T, 0, max(chunkLen, n))
	}
	off := len(ch.a)
	ch.a = ch.a[:off+n]
	return ch.a[off : off : off+n]
}

// add appends a to s, a slice of one decision. A full slice that is the
// chunk's latest handout grows in place (a call's checks append after the
// evidence of its arguments, typically with nothing taken in between); any
// other moves into the chunk. The built-in append would reallocate the
// slice on the heap at twice its size: a pool pass appended past the cap of
// every write's evidence (the confirmation rule's finding), and reasons
// were appended one at a time, one allocation each.
func (ch *chunk[T]) add(s []T, a ...T) []T {
	if cap(s)-len(s) < len(a) {
		s = ch.grow(s, len(a))
	}
	return append(s, a...)
}

// grow returns s with room for n more items, cut from the chunk.
func (ch *chunk[T]) grow(s []T, n int) []T {
	need := len(s) + n - cap(s)
	if k := len(ch.a); cap(s) > 0 && k >= cap(s) && cap(ch.a)-k >= need && &ch.a[k-1] == &s[:cap(s)][cap(s)-1] {
		// s ends where the chunk's free part starts: extend it.
		off := k - cap(s)
		ch.a = ch.a[:k+need]
		return ch.a[off : off+len(s) : k+need]
	}
	return append(ch.take(len(s)+n), s...)
}

// rewind makes every chunk free again: the strings cut so far must be dead.
func (s *scratchSlab) rewind() {
	s.cur, s.buf, s.n = 0, nil, 0
	if len(s.chunks) > 0 {
		s.buf = s.chunks[0]
	}
}

// kindCandidates registers the candidates of every kind that the JSON
// observation in c.buf lists, and the record pairs of a read.
func (c *checker) kindCandidates(msg int, echoKeys []string, recordEnts []int32) {
	buf := &c.buf
	if len(recordEnts) > 0 {
		for i := range buf.ms {
			m := &buf.ms[i]
			if !m.wholeLeaf || m.isKey {
				continue
			}
			id := c.mentionEntry(buf, m)
			if id < 0 {
				continue
			}
			for _, r := range recordEnts {
				c.records.add(r, id)
				if r >= 0 {
					c.ents[id].recordVal = true
				}
			}
		}
	}
	if len(c.rt.kindList) == 0 {
		return
	}
	for i := range buf.ms {
		m := &buf.ms[i]
		if m.p1 <= m.p0 || !m.wholeLeaf || m.kind == mIDPart {
			continue
		}
		// A key is a candidate only as the key of a map of entities
		// (payment_methods: {"credit_card_1": {…}}), not as a field name.
		if m.isKey && m.valObj < 0 {
			continue
		}
		var kinds []*kindRuntime
		if m.isKey {
			kinds = c.rt.keyKinds
		} else {
			kinds = c.rt.tailKinds(buf.jsonKey(m))
		}
		if len(kinds) == 0 && len(c.rt.wildKinds) == 0 {
			continue
		}
		path := buf.path(m)
		for n := 0; n < len(kinds)+len(c.rt.wildKinds); n++ {
			var k *kindRuntime
			if n < len(kinds) {
				k = kinds[n]
			} else {
				k = c.rt.wildKinds[n-len(kinds)]
			}
			if !k.matches(path, buf.jsonKey(m)) {
				continue
			}
			key := buf.key(m)
			id := m.ent
			if id < 0 {
				if echoKeys != nil && slices.Contains(echoKeys, string(key)) {
					continue
				}
				id = c.ensureEntryIn(key, buf, m.k0, m.k1)
			} else if echoKeys != nil && c.ents[id].echoAt == int32(msg)+1 {
				continue // marked by indexMentions
			}
			ks := &c.kindSets[k.idx]
			if j, seen := ks.pos[id]; seen && !ks.cands[j].listed && k.listedAt(path) {
				ks.cands[j].listed = true
			} else if !seen {
				cand := candidate{ent: id, msg: int32(msg), listed: k.listedAt(path)}
				o := m.obj
				if m.isKey {
					o = m.valObj
				} else if len(path) > 0 && path[len(path)-1] == ']' {
					o = -1 // an array item (reservations[2]) has no attributes
				}
				a0 := len(c.attrBuf)
				if o >= 0 && int(o) < len(buf.objs) {
					ob := buf.objs[o]
					for j := ob.m0; j < ob.m1; j++ {
						a := &buf.ms[j]
						if int(j) == i || a.isKey || a.kind == mIDPart {
							continue
						}
						ak := buf.key(a)
						if len(ak) <= 2 || string(ak) == string(key) {
							continue
						}
						aid := a.ent
						if aid < 0 {
							aid = c.ensureEntryIn(ak, buf, a.k0, a.k1)
						}
						c.attrBuf = append(c.attrBuf, attr{ent: aid, key: buf.jsonKey(a)})
					}
				}
				cand.attrs = c.attrBuf[a0:len(c.attrBuf):len(c.attrBuf)]
				ks.pos[id] = len(ks.cands)
				ks.cands = append(ks.cands, cand)
			}
		}
	}
}

// kindSet returns the visible candidates of a kind, nil while there are
// none. The sets are kept per checker and emptied per trajectory.
func (c *checker) kindSet(name string) *kindSet {
	kr := c.rt.kinds[name]
	if kr == nil {
		return nil
	}
	return c.kindSetOf(kr)
}

func (c *checker) kindSetOf(kr *kindRuntime) *kindSet {
	if ks := &c.kindSets[kr.idx]; len(ks.cands) > 0 {
		return ks
	}
	return nil
}

// resetKinds sizes and empties the candidate sets for the profile's kinds.
func (c *checker) resetKinds() {
	n := len(c.rt.kindList)
	c.kindSets = slices.Grow(c.kindSets[:0], n)[:n]
	for i := range c.kindSets {
		ks := &c.kindSets[i]
		clear(ks.cands) // drop the old trajectory's attributes
		ks.cands = ks.cands[:0]
		if ks.pos == nil {
			ks.pos = map[int32]int{}
		}
		clear(ks.pos)
	}
}

// matches reports whether a rendered JSON path (a.b[0].c, ["x y"].d) matches
// one of the kind's patterns. last is the last object key on the path
// (mentionBuf.jsonKey): when the path does not end in ']' its last segment
// is that key written bare, and a pattern **.X is decided by comparing X
// with it instead of reading the path back (this runs for every leaf of
// every observation, and most patterns are of that form).
func (k *kindRuntime) matches(path []byte, last string) bool {
	if pathIsCut(path) {
		return false // the cut part may hold any key
	}
	bare := len(path) > 0 && path[len(path)-1] != ']'
	for i, pat := range k.patterns {
		if t := k.tailOf[i]; t != "" && bare {
			if t == last {
				return true
			}
			continue
		}
		if matchPath(pat, path) {
			return true
		}
	}
	return false
}

// listedAt reports whether path matches one of the kind's patterns that is
// anchored (does not start with **): the kind's own lists, not references.
func (k *kindRuntime) listedAt(path []byte) bool {
	for _, pat := range k.patterns {
		if len(pat) > 0 && pat[0] != "**" && matchPath(pat, path) {
			return true
		}
	}
	return false
}

// matchPath matches pattern segments against a rendered path (see
// jsonWalker.appendPath), from the end and without allocating.
func matchPath(pat []string, path []byte) bool {
	end := len(path)
	for i := len(pat) - 1; i >= 0; i-- {
		if pat[i] == "**" {
			return true
		}
		if end <= 0 {
			return false
		}
		var seg []byte
		start := 0
		if path[end-1] == ']' {
			k := end - 2
			if k >= 0 && path[k] == '"' {
				// quoted key ["a b"]: its raw (escaped) text
				q := k - 1
				for q > 0 && !(path[q] == '"' && path[q-1] == '[') {
					q--
				}
				if q <= 0 {
					return false
				}
				seg, start = path[q+1:k], q-1
			} else {
				for k >= 0 && path[k] != '[' {
					k--
				}
				if k < 0 {
					return false
				}
				seg, start = path[k+1:end-1], k
			}
		} else {
			k := end - 1
			for k >= 0 && path[k] != '.' && path[k] != ']' {
				k--
			}
			seg, start = path[k+1:end], k+1
		}
		if pat[i] != "*" && string(seg) != pat[i] {
			return false
		}
		end = start
		if end > 0 && path[end-1] == '.' {
			end--
		}
	}
	return end == 0
}

// affirmative reports whether a user message, trimmed and lowered, contains
// a yes phrase; it accepts what was proposed when it does and does not open
// with a no phrase (refusal).
func (c *checker) affirmative(lowTrim string) bool {
	if !c.rt.yesSet.containsWord(lowTrim) {
		return false
	}
	// "How can we proceed?" asks; it accepts nothing. A yes phrase counts
	// in a sentence that is no wh-question.
	for s0, end := range sentences(lowTrim) {
		if s := lowTrim[s0:end]; c.rt.yesSet.containsWord(s) && !(end < len(lowTrim) && lowTrim[end] == '?' && whQuestion(s)) {
			return true
		}
	}
	return false
}

// whWords open a question that asks for information, not for approval.
var whWords = []string{"how", "what", "where", "when", "why", "which", "who"}

// whQuestion reports whether the lowered sentence s opens with a wh-word.
func whQuestion(s string) bool {
	s = strings.TrimLeft(s, " \t\"'*-")
	return slices.ContainsFunc(whWords, func(w string) bool { return hasWordPrefix(s, w) })
}

// selection reports whether a user message (lowered) picks one of the
// listed options.
func (c *checker) selection(low string) bool { return c.rt.pickSet.containsWord(low) }

// refusal reports whether a user message, trimmed and lowered, opens with a
// no phrase.
func (c *checker) refusal(lowTrim string) bool {
	for _, n := range c.rt.no {
		if hasWordPrefix(lowTrim, n) {
			return true
		}
	}
	return false
}

// hasWordPrefix reports whether s starts with the phrase p as whole words.
func hasWordPrefix(s, p string) bool {
	if !strings.HasPrefix(s, p) {
		return false
	}
	return len(s) == len(p) || !wordByte(s[len(p)])
}

// containsWord reports whether s contains the phrase p on word boundaries.
func containsWord(s, p string) bool {
	off := 0
	for {
		k := strings.Index(s[off:], p)
		if k < 0 {
			return false
		}
		k += off
		before := k == 0 || !wordByte(s[k-1])
		after := k+len(p) == len(s) || !wordByte(s[k+len(p)])
		if before && after {
			return true
		}
		off = k + 1
	}
}

func wordByte(c byte) bool { return letterByte(c) || digitByte(c) || c == '_' || c == '\'' }

// phraseIn reports where the words of phrase occur in text as whole words,
// case-insensitively and with runs of space, '-' and '_' equivalent; a
// trailing plural "s" on the last word is accepted.
func phraseIn(text, phrase string) (int, int, bool) {
	low := text
	if hasASCIIUpper(text) {
		low = strings.ToLower(text)
	}
	return phraseInWords(low, phraseWords(phrase))
}

// phraseWords splits a phrase into the lower-case words phraseIn matches.
func phraseWords(phrase string) []string {
	return strings.FieldsFunc(strings.ToLower(phrase), func(r rune) bool { return r == ' ' || r == '-' || r == '_' || r == '\t' || r == '\n' })
}

func isASCII(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if load64(s, i)&swarHigh != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func hasASCIIUpper(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if swarUpper(load64(s, i)) != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// phraseInMsg is phraseIn over the content of message msg, for the words
// of a phrase (phraseWords): the lowered content is made once per message.
func (c *checker) phraseInMsg(msg int32, words []string) (int, int, bool) {
	return phraseInWords(c.phraseText(int(msg)), words)
}

// phraseInWords is phraseIn for the text as phraseIn lowers it and the
// phrase's words.
func phraseInWords(low string, words []string) (int, int, bool) {
	if len(words) == 0 {
		return 0, 0, false
	}
	off := 0
	for off < len(low) {
		k := strings.Index(low[off:], words[0])
		if k < 0 {
			return 0, 0, false
		}
		k += off
		off = k + 1
		if k > 0 && wordByte(low[k-1]) {
			continue
		}
		p := k + len(words[0])
		ok := true
		for _, w := range words[1:] {
			q := p
			for q < len(low) && (low[q] == ' ' || low[q] == '-' || low[q] == '_' || low[q] == '\t' || low[q] == '\n') {
				q++
			}
			if q == p || !strings.HasPrefix(low[q:], w) {
				ok = false
				break
			}
			p = q + len(w)
		}
		if !ok {
			continue
		}
		if p < len(low) && low[p] == 's' && (p+1 == len(low) || !wordByte(low[p+1])) {
			p++
		}
		if p < len(low) && wordByte(low[p]) {
			continue
		}
		return k, p, true
	}
	return 0, 0, false
}

// lowText is what checks that search a message's content in lower case
// need, made once per message and trajectory.
type lowText struct {
	low    string // strings.ToLower(content)
	upper  bool   // content has an ASCII upper-case letter
	ascii  bool   // content is all ASCII
	done   bool
	fold   string // content with only its ASCII letters lowered, made on demand
	folded bool
}

// foldOf returns asciiLower(content) of the message lt is for: for ASCII
// text that is what strings.ToLower made. Like low, a fold is read only by
// this trajectory's checks: it is cut from the scratch slab.
func (lt *lowText) foldOf(content string, slab *scratchSlab) string {
	if !lt.folded {
		switch {
		case lt.ascii:
			lt.fold = lt.low
		case lt.upper:
			lt.fold = slab.cutLower(content)
		default:
			lt.fold = content
		}
		lt.folded = true
	}
	return lt.fold
}

// textLower is text with ASCII lower-cased, which keeps its offsets: the
// cached fold of message msg's content when text is that content.
func (c *checker) textLower(text string, msg int) string {
	if text == c.t.Messages[msg].Content {
		return c.lowOf(msg).foldOf(text, &c.slab)
	}
	return asciiLower(text)
}

func (c *checker) lowOf(msg int) *lowText {
	lt := &c.lows[msg]
	if !lt.done {
		content := c.t.Messages[msg].Content
		lt.done = true
		for _, b := range c.bases {
			if b.msg == msg {
				lt.low, lt.upper, lt.ascii = b.idx.low, b.idx.upper, b.idx.ascii
				return lt
			}
		}
		lt.upper, lt.ascii = asciiInfo(content)
		if lt.upper && lt.ascii {
			// Only this trajectory's checks read it: lower it into the
			// scratch slab rather than a string of its own.
			lt.low = c.slab.cutLower(content)
		} else if lt.ascii {
			lt.low = content // nothing to lower
		} else {
			// strings.ToLower, into the scratch slab as above; content
			// itself when nothing changes.
			c.lowBuf = appendLower(c.lowBuf[:0], content)
			if lt.low = content; string(c.lowBuf) != content {
				lt.low = c.slab.cut(c.lowBuf)
			}
		}
	}
	return lt
}

// lowerContent is strings.ToLower of message msg's content.
func (c *checker) lowerContent(msg int) string { return c.lowOf(msg).low }

// phraseText is message msg's content as phraseIn searches it: lowered
// when it has an ASCII upper-case letter, else as written.
func (c *checker) phraseText(msg int) string {
	if lt := c.lowOf(msg); lt.upper {
		return lt.low
	}
	return c.t.Messages[msg].Content
}
