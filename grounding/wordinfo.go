package grounding

// wordInfo is what the text scanner needs to know of a word beyond its
// shape, looked up once per token instead of by a lowering copy and four
// tests (monthOf, numberWord, stopWordLower, "today"/"tomorrow", "of"/"the").
// It is packed in one integer: the month (bits 0-7), 1 + the number word's
// value (8-15, 0 when none), the day word (16-17), the stop-word flag (18)
// and the of/the flag (19).
type wordInfo uint32

func (wi wordInfo) month() int  { return int(wi & 0xff) }
func (wi wordInfo) num() int    { return int(wi >> 8 & 0xff) }
func (wi wordInfo) day() int    { return int(wi >> 16 & 3) }
func (wi wordInfo) stop() bool  { return wi&(1<<18) != 0 }
func (wi wordInfo) ofThe() bool { return wi&(1<<19) != 0 }

func makeWordInfo(month, num, day int, stop, ofThe bool) wordInfo {
	wi := wordInfo(month) | wordInfo(num)<<8 | wordInfo(day)<<16
	if stop {
		wi |= 1 << 18
	}
	if ofThe {
		wi |= 1 << 19
	}
	return wi
}

const (
	dayToday = 1 + iota
	dayTomorrow
)

// lookupWord returns the wordInfo of s, its ASCII letters lowered (lowerByte):
// 0 for any word none of the tests accepts.
func lookupWord(s string) wordInfo {
	if v, ok := packLower(s); ok {
		// wordTable is collision-free: a word is in its one slot or nowhere.
		if e := &wordTable[wordSlot(v)]; e.key == v {
			return e.info
		}
		return 0
	}
	if len(s) == len("september") && equalLower(s, "september") {
		return septemberInfo
	}
	return 0
}

var septemberInfo = makeWordInfo(9, 0, 0, false, false)

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

// wordMul is a hash multiplier that gives every packed word of wordWords a
// slot of its own; wordTable checks that it does.
const wordMul = 0x700597af0e83198d

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
	month := monthOf([]byte(low))
	num := 0
	if v, ok := numberWord([]byte(low)); ok {
		num = v + 1
	}
	day := 0
	switch low {
	case "today", "tonight":
		day = dayToday
	case "tomorrow":
		day = dayTomorrow
	}
	return makeWordInfo(month, num, day, stopWordLower([]byte(low)), low == "of" || low == "the")
}

// wordTable holds wordWords (but "september", which is too long to pack)
// by their packLower, each in a slot of its own.
var wordTable = func() (t [1 << wordBits]wordEntry) {
	for _, w := range wordWords {
		v, ok := packLower(w)
		if !ok {
			continue
		}
		e := &t[wordSlot(v)]
		if e.key != 0 && e.key != v {
			panic("grounding: wordMul puts two words in one slot")
		}
		*e = wordEntry{key: v, info: wordInfoOf(unpackWord(v))}
	}
	return t
}()

// unpackWord is the word packLower packed into v.
func unpackWord(v uint64) string {
	var b []byte
	for ; v != 0; v >>= 8 {
		b = append(b, byte(v))
	}
	return string(b)
}
