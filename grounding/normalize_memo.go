package grounding

// scanMemo remembers the mentions that scanning a JSON object key or string
// value gave. Observations repeat their keys in every object
// ("flight_number", "price", "date") and many of their values ("economy",
// "MCO", "2024-05-26"); scanning one (trimming, date, clock and number
// shapes, the key, plurals, identifier parts) costs several times more than
// copying its mentions.
//
// What a scan gives depends only on the text and on the scanner's reference
// year and date and small-number bound, so the memo holds for one such
// state and forgets its texts when it changes. A scan that left a month/day
// waiting for a year is not remembered: replaying it would not queue the
// mention again. Templates keep only what the scan decided (kind,
// normalization, flags, number, key, span relative to the text); the JSON
// context (object, path, key flag) comes from the leaf being replayed.
//
// Object keys and values are remembered across the trajectories a checker
// checks: keys are the vocabulary of the tools' outputs, which a pool
// repeats in every trajectory, and many values recur too (cabins, statuses,
// airports, dates). Both regions start over when they grow past a bound, as
// ids, which never recur, accumulate.
//
// Templates also learn the index entry of their key the first time a
// mention of theirs is indexed in a trajectory, so replayed mentions skip
// the key lookup. Mentions point back at their template (mention.tpl:
// value templates from 0 up, key templates from -2 down, -1 none); a
// region's templates are therefore dropped only between trajectories, when
// no mention is waiting to be indexed.
type scanMemo struct {
	keys memoRegion // object keys
	vals memoRegion // string values
	// gen counts trajectories: a template's entry holds while its entGen
	// is the current one.
	gen      uint32
	keyText  strSlab // copies of the remembered keys (they outlive their trajectory)
	valText  strSlab // and of the remembered values
	valBytes int     // bytes of the values in valText
	refYear  int
	refDate  [3]int
	smallAt  float64
}

// memoRegion is one set of remembered texts and their templates.
type memoRegion struct {
	table keyTable  // text → index in recs
	recs  []memoRec // of this state's texts
	ms    []mention // templates; start, end relative to the text, k0, k1 into arena
	ents  []tplEnt  // the entry each template learned, by index in ms
	arena []byte
}

// tplEnt is the entry a template's key was indexed to in trajectory gen,
// and the key's hash (hashKey), made once for every mention replayed from
// the template.
type tplEnt struct {
	ent int32
	gen uint32
	h   uint64
}

// memoRec locates the templates of one text in memoRegion.ms. plain, for
// an object key, is plainKey of the key (it renders bare in a path).
type memoRec struct {
	m0, m1 int32
	plain  bool
}

// maxKeyTemplates bounds the key region; past it the region starts over at
// the next trajectory (keys that are really ids, map keys such as
// "credit_card_7815826", would otherwise accumulate).
const maxKeyTemplates = 1 << 14

// maxValTemplates and maxValBytes bound the value region likewise, by
// templates and by the bytes of the values kept.
const (
	maxValTemplates = 1 << 14
	maxValBytes     = 1 << 20
)

func (r *memoRegion) forgetTexts() {
	r.table.reset()
	r.recs = r.recs[:0]
}

func (r *memoRegion) reset() {
	r.forgetTexts()
	r.ms = r.ms[:0]
	r.ents = r.ents[:0]
	r.arena = r.arena[:0]
}

// newTrajectory prepares the memo for the next trajectory.
func (sm *scanMemo) newTrajectory() {
	sm.gen++
	if len(sm.vals.ms) > maxValTemplates || sm.valBytes > maxValBytes {
		sm.vals.reset()
		sm.valText.reset()
		sm.valBytes = 0
	}
	if len(sm.keys.ms) > maxKeyTemplates {
		sm.keys.reset()
		sm.keyText.reset()
	}
}

// sync forgets the texts when the scanner's state differs from the one the
// templates were made under. The templates stay: mentions made from them
// may still be waiting to be indexed and tell them their entry.
func (sm *scanMemo) sync(sc *textScanner) {
	if sm.refYear == sc.refYear && sm.refDate == sc.refDate && sm.smallAt == sc.smallAt {
		return
	}
	sm.keys.forgetTexts()
	sm.vals.forgetTexts()
	sm.refYear, sm.refDate, sm.smallAt = sc.refYear, sc.refDate, sc.smallAt
}

// lookup returns the templates remembered for text s in r, or false and
// what remember needs to add them.
func (r *memoRegion) lookup(s string) (memoRec, uint64, int, bool) {
	h := hashKeyStr(s)
	i, slot, ok := r.table.find(h, s)
	if ok {
		return r.recs[i], h, slot, true
	}
	return memoRec{}, h, slot, false
}

// remember adds the templates of text s (kept as is: it must live as long
// as the region) at the slot lookup returned.
func (r *memoRegion) remember(s string, h uint64, slot int, rec memoRec) {
	r.table.insert(slot, h, s, int32(len(r.recs)))
	r.recs = append(r.recs, rec)
}

// tplRef encodes template i of a region in mention.tpl.
func tplRef(keys bool, i int) int32 {
	if keys {
		return -2 - int32(i)
	}
	return int32(i)
}

// learn records the entry the mention of template tpl (mention.tpl, not
// -1) was indexed to.
func (sm *scanMemo) learn(tpl, ent int32) {
	var te *tplEnt
	if tpl <= -2 {
		te = &sm.keys.ents[-2-tpl]
	} else {
		te = &sm.vals.ents[tpl]
	}
	te.ent, te.gen = ent, sm.gen
}

// keyHash returns hashKey of the key of template tpl (mention.tpl, not -1).
func (sm *scanMemo) keyHash(tpl int32) uint64 {
	if tpl <= -2 {
		return sm.keys.ents[-2-tpl].h
	}
	return sm.vals.ents[tpl].h
}

// learned returns the entry template tpl (mention.tpl, not -1) learned in
// this trajectory, -1 when none.
func (sm *scanMemo) learned(tpl int32) int32 {
	var te tplEnt
	if tpl <= -2 {
		te = sm.keys.ents[-2-tpl]
	} else {
		te = sm.vals.ents[tpl]
	}
	if te.gen != sm.gen {
		return -1
	}
	return te.ent
}

// replay appends the mentions of rec, for text starting at base, to the
// scanner's buffer with the scanner's current context.
func (sm *scanMemo) replay(sc *textScanner, keys bool, rec memoRec, base int) {
	r, kIn := &sm.vals, kInMemoVals
	if keys {
		r, kIn = &sm.keys, kInMemoKeys
	}
	out := sc.out
	if out.memo != sm {
		out.memo = sm
	}
	for i := rec.m0; i < rec.m1; i++ {
		t := &r.ms[i]
		m := sc.ctx
		m.kind, m.norm, m.small, m.isInt, m.wholeLeaf = t.kind, t.norm, t.small, t.isInt, t.wholeLeaf
		m.start, m.end = t.start+int32(base), t.end+int32(base)
		m.num = t.num
		m.ent = -1
		if te := r.ents[i]; te.gen == sm.gen {
			m.ent = te.ent
		}
		m.tpl = tplRef(keys, int(i))
		// The key stays in the region's arena (see kArena).
		m.kIn, m.k0, m.k1 = kIn, t.k0, t.k1
		out.ms = append(out.ms, m)
	}
}

// record remembers the mentions the scanner added from index n0 on, for
// text starting at base.
func (sm *scanMemo) record(sc *textScanner, keys bool, n0, base int) memoRec {
	r := &sm.vals
	if keys {
		r = &sm.keys
	}
	out := sc.out
	rec := memoRec{m0: int32(len(r.ms))}
	for i := n0; i < len(out.ms); i++ {
		m := &out.ms[i]
		t := mention{kind: m.kind, norm: m.norm, small: m.small, isInt: m.isInt, wholeLeaf: m.wholeLeaf,
			start: m.start - int32(base), end: m.end - int32(base), num: m.num}
		t.k0 = int32(len(r.arena))
		r.arena = append(r.arena, out.key(m)...)
		t.k1 = int32(len(r.arena))
		m.tpl = tplRef(keys, len(r.ms))
		r.ms = append(r.ms, t)
		r.ents = append(r.ents, tplEnt{ent: -1, h: hashKey(r.arena[t.k0:t.k1])})
	}
	rec.m1 = int32(len(r.ms))
	return rec
}
