package grounding

// scanMemo remembers, for one trajectory, the mentions that scanning a JSON
// object key or string value gave. Observations repeat their keys in every
// object ("flight_number", "price", "date") and many of their values
// ("economy", "MCO", "2024-05-26"); scanning one (trimming, date, clock and
// number shapes, the key, plurals, identifier parts) costs several times
// more than copying its mentions.
//
// What a scan gives depends only on the text and on the scanner's reference
// year and date and small-number bound, so the memo holds for one such
// state and forgets its texts when it changes. Templates also learn the
// index entry of their key the first time a mention of theirs is indexed,
// so replayed mentions skip the key lookup; entries live for the whole
// trajectory, so templates are only dropped when the next one starts. A scan that left a month/day
// waiting for a year is not remembered: replaying it would not queue the
// mention again. Templates keep only what the scan decided (kind,
// normalization, flags, number, key, span relative to the text); the JSON
// context (object, path, key flag) comes from the leaf being replayed.
type scanMemo struct {
	keys, vals keyTable  // text → index in recs
	recs       []memoRec // of this state's texts
	ms         []mention // templates; start, end relative to the text, k0, k1 into arena
	arena      []byte
	refYear    int
	refDate    [3]int
	smallAt    float64
}

// memoRec locates the templates of one text in scanMemo.ms.
type memoRec struct{ m0, m1 int32 }

func (sm *scanMemo) reset() {
	sm.keys.reset()
	sm.vals.reset()
	sm.recs = sm.recs[:0]
	sm.ms = sm.ms[:0]
	sm.arena = sm.arena[:0]
	sm.refYear, sm.refDate, sm.smallAt = 0, [3]int{}, 0
}

// sync forgets the texts when the scanner's state differs from the one the
// templates were made under. The templates stay: mentions made from them
// may still be waiting to be indexed and tell them their entry.
func (sm *scanMemo) sync(sc *textScanner) {
	if sm.refYear == sc.refYear && sm.refDate == sc.refDate && sm.smallAt == sc.smallAt {
		return
	}
	sm.keys.reset()
	sm.vals.reset()
	sm.recs = sm.recs[:0]
	sm.refYear, sm.refDate, sm.smallAt = sc.refYear, sc.refDate, sc.smallAt
}

// lookup returns the templates remembered for text s in t, or false and
// what remember needs to add them.
func (sm *scanMemo) lookup(t *keyTable, s string) (memoRec, uint64, int, bool) {
	h := hashKeyStr(s)
	i, slot, ok := t.find(h, s)
	if ok {
		return sm.recs[i], h, slot, true
	}
	return memoRec{}, h, slot, false
}

// remember adds the templates of text s to t at the slot lookup returned.
func (sm *scanMemo) remember(t *keyTable, s string, h uint64, slot int, rec memoRec) {
	t.insert(slot, h, s, int32(len(sm.recs)))
	sm.recs = append(sm.recs, rec)
}

// replay appends the mentions of rec, for text starting at base, to the
// scanner's buffer with the scanner's current context.
func (sm *scanMemo) replay(sc *textScanner, rec memoRec, base int) {
	out := sc.out
	for i := rec.m0; i < rec.m1; i++ {
		t := &sm.ms[i]
		m := sc.ctx
		m.kind, m.norm, m.small, m.isInt, m.wholeLeaf = t.kind, t.norm, t.small, t.isInt, t.wholeLeaf
		m.start, m.end = t.start+int32(base), t.end+int32(base)
		m.num = t.num
		m.ent, m.tpl = t.ent, i
		m.k0 = int32(len(out.arena))
		out.arena = append(out.arena, sm.arena[t.k0:t.k1]...)
		m.k1 = int32(len(out.arena))
		out.ms = append(out.ms, m)
	}
}

// record remembers the mentions the scanner added from index n0 on, for
// text starting at base.
func (sm *scanMemo) record(sc *textScanner, n0, base int) memoRec {
	out := sc.out
	rec := memoRec{m0: int32(len(sm.ms))}
	for i := n0; i < len(out.ms); i++ {
		m := &out.ms[i]
		t := mention{kind: m.kind, norm: m.norm, small: m.small, isInt: m.isInt, wholeLeaf: m.wholeLeaf,
			start: m.start - int32(base), end: m.end - int32(base), num: m.num, ent: -1, tpl: -1}
		t.k0 = int32(len(sm.arena))
		sm.arena = append(sm.arena, out.arena[m.k0:m.k1]...)
		t.k1 = int32(len(sm.arena))
		m.tpl = int32(len(sm.ms))
		sm.ms = append(sm.ms, t)
	}
	rec.m1 = int32(len(sm.ms))
	return rec
}
