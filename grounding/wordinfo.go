package grounding

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
	if !ok {
		if len(s) == len("september") && equalLower(s, "september") {
			return wordInfo{month: 9}
		}
		return wordInfo{}
	}
	for i := wordSlot(v); ; i = (i + 1) & (len(wordTable) - 1) {
		e := &wordTable[i]
		if e.key == v {
			return e.info
		}
		if e.key == 0 {
			return wordInfo{}
		}
	}
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
		c := s[i]
		if c == 0 {
			return 0, false
		}
		v |= uint64(lowerByte(c)) << (8 * i)
	}
	return v, true
}

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

func wordSlot(v uint64) int { return int((v * 0x9E3779B97F4A7C15) >> 55) }

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
// by their packLower, at most a quarter full.
var wordTable = func() (t [512]wordEntry) {
	for _, w := range wordWords {
		v, ok := packLower(w)
		if !ok {
			continue
		}
		i := wordSlot(v)
		for t[i].key != 0 && t[i].key != v {
			i = (i + 1) & (len(t) - 1)
		}
		t[i] = wordEntry{key: v, info: wordInfoOf(w)}
	}
	return t
}()
