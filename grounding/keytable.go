package grounding

import (
	"hash/maphash"
	"math"
	"math/bits"
)

// keyTable maps canonical keys to int32 values (entry ids, base occurrence
// indexes). It is an open-addressing table keyed by a 64-bit hash of the
// key bytes, the hash and key kept in the slot so a probe reads one slot and
// compares the key only on a hash match. It replaces map[string]int32 on the
// checker's hottest path for two reasons: a lookup that misses ends at the
// slot an insert fills, so lookup-or-insert hashes and probes once instead
// of twice; and every table hashes with one process-wide seed, so a key
// hashed for the entry index probes the base indexes (the policy) with the
// same hash.
type keyTable struct {
	slots []keySlot
	n     int
	// gen marks the slots in use: reset starts a new generation instead of
	// clearing the slots (tables are reset per trajectory, and clearing a
	// table sized for the largest one, with its string pointers, showed in
	// profiles).
	gen uint32
}

type keySlot struct {
	h   uint64
	key string
	val int32
	gen uint32 // the slot is in use when it equals the table's gen
}

// keySeed seeds every keyTable's hash.
var keySeed = maphash.MakeSeed()

func hashKey(key []byte) uint64    { return maphash.Bytes(keySeed, key) }
func hashKeyStr(key string) uint64 { return maphash.String(keySeed, key) }

// find returns the value of key (hashed to h), or false and the slot where
// key would be inserted.
func (t *keyTable) find(h uint64, key string) (int32, int, bool) {
	if len(t.slots) == 0 {
		return -1, -1, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.gen != t.gen {
			return -1, int(i), false
		}
		if s.h == h && s.key == key {
			return s.val, int(i), true
		}
	}
}

// findBytes is find for a key in a buffer: a string(key) argument would be
// copied to the heap when longer than the compiler's stack buffer, while
// the comparison below converts without copying.
func (t *keyTable) findBytes(h uint64, key []byte) (int32, int, bool) {
	if len(t.slots) == 0 {
		return -1, -1, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.gen != t.gen {
			return -1, int(i), false
		}
		if s.h == h && s.key == string(key) {
			return s.val, int(i), true
		}
	}
}

// getBytes is findBytes for the value alone.
func (t *keyTable) getBytes(h uint64, key []byte) (int32, bool) {
	v, _, ok := t.findBytes(h, key)
	return v, ok
}

// get is find for the value alone.
func (t *keyTable) get(h uint64, key string) (int32, bool) {
	v, _, ok := t.find(h, key)
	return v, ok
}

// insert adds key at the slot find returned for it (-1 when the table was
// empty). The key string is kept: it must not change.
func (t *keyTable) insert(slot int, h uint64, key string, val int32) {
	if slot < 0 || 2*(t.n+1) > len(t.slots) {
		t.grow()
		_, slot, _ = t.find(h, key)
	}
	t.slots[slot] = keySlot{h: h, key: key, val: val, gen: t.gen}
	t.n++
}

// set inserts or replaces the value of key.
func (t *keyTable) set(h uint64, key string, val int32) {
	if _, slot, ok := t.find(h, key); ok {
		t.slots[slot].val = val
	} else {
		t.insert(slot, h, key, val)
	}
}

// grow doubles the table (at least 64 slots), keeping it at most half full.
func (t *keyTable) grow() {
	if t.gen == 0 {
		t.gen = 1 // a zero slot is never in use
	}
	old := t.slots
	t.slots = make([]keySlot, max(64, 2*len(old)))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.gen != t.gen {
			continue
		}
		i := s.h & mask
		for t.slots[i].gen == t.gen {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// reset empties the table, keeping its size.
func (t *keyTable) reset() {
	t.n = 0
	t.gen++
	if t.gen == 0 { // wrapped: old slots could look current again
		clear(t.slots)
		t.gen = 1
	}
}

// pairSet is a set of (int32, int32) pairs: open addressing over the pairs
// packed in a uint64, reset by generation like keyTable. It holds the
// checker's record pairs, inserted for every value of every read's
// observation.
type pairSet struct {
	slots []pairSlot
	n     int
	gen   uint32
}

type pairSlot struct {
	v   uint64
	gen uint32
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func (ps *pairSet) slot(v uint64) uint64 {
	return (v * 0x9E3779B97F4A7C15) >> 32 & uint64(len(ps.slots)-1)
}

// has reports whether (a, b) is in the set.
func (ps *pairSet) has(a, b int32) bool {
	if len(ps.slots) == 0 {
		return false
	}
	v := pairKey(a, b)
	mask := uint64(len(ps.slots) - 1)
	for i := ps.slot(v); ; i = (i + 1) & mask {
		s := &ps.slots[i]
		if s.gen != ps.gen {
			return false
		}
		if s.v == v {
			return true
		}
	}
}

// add inserts (a, b).
func (ps *pairSet) add(a, b int32) {
	if 2*(ps.n+1) > len(ps.slots) {
		ps.grow()
	}
	v := pairKey(a, b)
	mask := uint64(len(ps.slots) - 1)
	for i := ps.slot(v); ; i = (i + 1) & mask {
		s := &ps.slots[i]
		if s.gen != ps.gen {
			*s = pairSlot{v: v, gen: ps.gen}
			ps.n++
			return
		}
		if s.v == v {
			return
		}
	}
}

func (ps *pairSet) grow() {
	if ps.gen == 0 {
		ps.gen = 1
	}
	old := ps.slots
	ps.slots = make([]pairSlot, max(64, 2*len(old)))
	ps.n = 0
	for _, s := range old {
		if s.gen == ps.gen {
			ps.add(int32(s.v>>32), int32(uint32(s.v)))
		}
	}
}

// reset empties the set, keeping its size.
func (ps *pairSet) reset() {
	ps.n = 0
	ps.gen++
	if ps.gen == 0 {
		clear(ps.slots)
		ps.gen = 1
	}
}

// floatTable maps float64 values to sumRefs: open addressing over the
// values' bits, reset by generation like keyTable. It holds the checker's
// group sums (every total and subset sum of every observation's groups),
// where a map[float64] cost two hashed probes per insert-if-absent. Keys
// are compared by their bits, so a caller must fold -0 into 0, and NaN is
// never inserted (a map never finds it either).
type floatTable struct {
	slots []floatSlot
	shift uint // 64 - log2(len(slots)): slots are picked by the hash's top bits
	n     int
	gen   uint32
}

type floatSlot struct {
	bits uint64
	gen  uint32
	r    sumRef
}

func (ft *floatTable) slot(bits uint64) uint64 {
	// The top bits of the product depend on every bit of the value (the low
	// bits of a small integer's float are all zero).
	return (bits * 0x9E3779B97F4A7C15) >> ft.shift
}

// get returns the sumRef of v.
func (ft *floatTable) get(v float64) (sumRef, bool) {
	if len(ft.slots) == 0 || v != v {
		return sumRef{}, false
	}
	bits := math.Float64bits(v)
	mask := uint64(len(ft.slots) - 1)
	for i := ft.slot(bits); ; i = (i + 1) & mask {
		s := &ft.slots[i]
		if s.gen != ft.gen {
			return sumRef{}, false
		}
		if s.bits == bits {
			return s.r, true
		}
	}
}

// addIfAbsent keeps r for v unless v has one already.
func (ft *floatTable) addIfAbsent(v float64, r sumRef) {
	if 2*(ft.n+1) > len(ft.slots) {
		ft.grow()
	}
	bits := math.Float64bits(v)
	mask := uint64(len(ft.slots) - 1)
	for i := ft.slot(bits); ; i = (i + 1) & mask {
		s := &ft.slots[i]
		if s.gen != ft.gen {
			*s = floatSlot{bits: bits, gen: ft.gen, r: r}
			ft.n++
			return
		}
		if s.bits == bits {
			return
		}
	}
}

func (ft *floatTable) grow() {
	if ft.gen == 0 {
		ft.gen = 1
	}
	old := ft.slots
	ft.slots = make([]floatSlot, max(64, 2*len(old)))
	ft.shift = uint(64 - bits.TrailingZeros(uint(len(ft.slots))))
	ft.n = 0
	for _, s := range old {
		if s.gen == ft.gen {
			ft.addIfAbsent(math.Float64frombits(s.bits), s.r)
		}
	}
}

// reset empties the table, keeping its size.
func (ft *floatTable) reset() {
	ft.n = 0
	ft.gen++
	if ft.gen == 0 {
		clear(ft.slots)
		ft.gen = 1
	}
}
