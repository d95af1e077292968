package grounding

import "slices"

// wordInfo is what the text scanner needs to know of a word beyond its
// shape, looked up once per token instead of by a lowering copy and four
// tests (monthOf, numberWord, stopWordLower, "today"/"tomorrow", "of"/"the").
type wordInfo struct {
	month uint8 // monthOf of the lowered word
	num   uint8 // 1 + numberWord of the lowered word, 0 when none
	day   uint8 // dayToday, dayTomorrow or 0
	stop  bool  // stopWord
	ofThe bool  // the lowered word is "of" or "the"
}

const (
	dayToday = 1 + iota
	dayTomorrow
)

// lookupWord returns the wordInfo of s, its ASCII letters lowered (lowerByte):
// the zero wordInfo for any word none of the tests accepts.
func lookupWord(s string) wordInfo {
	v, ok := packLower(s)
	return lookupPacked(s, v, ok)
}

// lookupPacked is lookupWord for s packed by packLower into v, ok.
func lookupPacked(s string, v uint64, ok bool) wordInfo {
	if !ok {
		if len(s) == len("september") && equalLower(s, "september") {
			return wordInfo{month: 9}
		}
		return wordInfo{}
	}
	// wordTable is collision-free: a word is in its one slot or nowhere.
	if e := &wordTable[wordSlot(v)]; e.key == v {
		return e.info
	}
	return wordInfo{}
}

// packLower packs s lowered into an integer, one byte per byte. It fails
// for words longer than 8 bytes or holding a zero byte; for the others the
// packing is one to one, and never 0.
func packLower(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 8 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		v |= uint64(lowerTab[s[i]]) << (8 * i)
	}
	// A zero byte among the word's: fill the bytes past it with 0xff and
	// look for a zero byte in the word (the exact haszero test).
	t := v | ^uint64(0)<<(8*len(s)-1)<<1
	if (t-swarOnes)&^t&swarHigh != 0 {
		return 0, false
	}
	return v, true
}

// lowerTab is lowerByte as a table.
var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = lowerByte(byte(i))
	}
	return t
}()

// equalLower reports whether s lowered (lowerByte) is low.
func equalLower(s, low string) bool {
	if len(s) != len(low) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lowerByte(s[i]) != low[i] {
			return false
		}
	}
	return true
}

func wordSlot(v uint64) int { return int((v * wordMul) >> (64 - wordBits)) }

const wordBits = 10

// wordMul is the hash multiplier that gives every packed word of wordWords
// a slot of its own (see wordTable).
var wordMul uint64

type wordEntry struct {
	key  uint64
	info wordInfo
}

// wordWords are the words some wordInfo test accepts: every case of
// monthOf, numberWord and stopWordLower, and the day and "of"/"the" words.
var wordWords = append([]string{
	"january", "jan", "february", "feb", "march", "mar", "april", "apr", "may", "june", "jun", "july", "jul",
	"august", "aug", "september", "sep", "sept", "october", "oct", "november", "nov", "december", "dec",
	"zero", "one", "single", "two", "couple", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
	"eleven", "twelve", "today", "tonight", "tomorrow", "of", "the",
}, stopWords...)

// wordInfoOf computes a word's wordInfo with the tests themselves.
func wordInfoOf(low string) wordInfo {
	var wi wordInfo
	wi.month = uint8(monthOf([]byte(low)))
	if v, ok := numberWord([]byte(low)); ok {
		wi.num = uint8(v + 1)
	}
	switch low {
	case "today", "tonight":
		wi.day = dayToday
	case "tomorrow":
		wi.day = dayTomorrow
	}
	wi.stop = stopWordLower([]byte(low))
	wi.ofThe = low == "of" || low == "the"
	return wi
}

// wordTable holds wordWords (but "september", which is too long to pack)
// by their packLower, each in its own slot: the multiplier is the first of
// a fixed sequence that gives no two words the same slot.
var wordTable = func() *[1 << wordBits]wordEntry {
	var keys []uint64
	for _, w := range wordWords {
		if v, ok := packLower(w); ok && !slices.Contains(keys, v) {
			keys = append(keys, v)
		}
	}
	for m := uint64(0x9E3779B97F4A7C15); ; m += 0x6A09E667F3BCC908 {
		wordMul = m | 1
		t := new([1 << wordBits]wordEntry)
		ok := true
		for _, v := range keys {
			e := &t[wordSlot(v)]
			if e.key != 0 {
				ok = false
				break
			}
			*e = wordEntry{key: v, info: wordInfoOf(unpackWord(v))}
		}
		if ok {
			return t
		}
	}
}()

// unpackWord is the word packLower packed into v.
func unpackWord(v uint64) string {
	var b []byte
	for ; v != 0; v >>= 8 {
		b = append(b, byte(v))
	}
	return string(b)
}
