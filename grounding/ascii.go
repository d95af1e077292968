package grounding

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// Word-at-a-time (SWAR) helpers for the byte scans every message gets:
// "is it ASCII", "has it an upper-case ASCII letter", "lower its ASCII
// letters". Each handles eight bytes per step instead of one, with the
// exact byte-by-byte results of the plain loops.

const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// swarUpper returns 0x80 in each byte of w that is an ASCII upper-case
// letter ('A'..'Z'), 0 elsewhere. Bytes with the high bit set are never
// letters. The additions cannot carry from one byte into the next: each
// byte's low seven bits plus at most 0x3f stay below 0x100.
func swarUpper(w uint64) uint64 {
	h := w &^ swarHigh
	ge := h + (0x80-'A')*swarOnes   // high bit set where h >= 'A'
	gt := h + (0x80-'Z'-1)*swarOnes // high bit set where h > 'Z'
	return ge &^ gt &^ w & swarHigh
}

func load64(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// asciiInfo returns hasASCIIUpper(s) and isASCII(s) in one pass.
func asciiInfo(s string) (upper, ascii bool) {
	var hi, up uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		hi |= w
		up |= swarUpper(w)
	}
	upper, ascii = up != 0, hi&swarHigh == 0
	for ; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			ascii = false
		} else if c >= 'A' && c <= 'Z' {
			upper = true
		}
	}
	return upper, ascii
}

// lowerASCIIInPlace lowers the ASCII upper-case letters of b, leaving every
// other byte as it is (lowerByte for each byte).
func lowerASCIIInPlace(b []byte) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if u := swarUpper(w); u != 0 {
			binary.LittleEndian.PutUint64(b[i:], w|u>>2) // 0x80>>2 = 'a'-'A'
		}
	}
	for ; i < len(b); i++ {
		b[i] = lowerByte(b[i])
	}
}

// wordEnd returns the index of the first spaceByte in text at or after i,
// len(text) when none: the end of the word starting at i.
func wordEnd(text string, i int) int {
	for i+8 <= len(text) {
		w := load64(text, i)
		// 0x80 in the bytes below 0x21 (of those below 0x80); a borrow can
		// only flag bytes above a flagged one, so the lowest is exact.
		m := (w - 0x21*swarOnes) &^ w & swarHigh
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if spaceByte(text[i]) {
			return i
		}
		i++ // a control byte, not a space: the word goes on
	}
	for i < len(text) && !spaceByte(text[i]) {
		i++
	}
	return i
}

// appendLower appends strings.ToLower(s) to dst. For text that is not all
// ASCII, strings.ToLower maps every rune through unicode.ToLower by a
// function call (strings.Map): 2% of checking the real retail log, whose
// replies carry curly quotes and dashes. This lowers the ASCII bytes
// inline and maps only the other runes, with strings.Map's result: each
// rune as range decodes it (an invalid byte is utf8.RuneError) written as
// the UTF-8 of its unicode.ToLower. When nothing changes that is s itself.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		dst = utf8.AppendRune(dst, unicode.ToLower(r))
		i += w
	}
	return dst
}

// appendQuote is strconv.AppendQuote(b, s). Most strings the checks quote
// (paths' keys, ids, values found in text) are printable ASCII without a
// quote or backslash, which strconv quotes as written; strconv escapes
// rune by rune (appendEscapedRune for every byte: 1.5% of checking the
// real retail log), so those take a copy here.
func appendQuote(b []byte, s string) []byte {
	if !plainQuote(s) {
		return strconv.AppendQuote(b, s)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainQuote reports whether strconv.Quote(s) is s between quotes: every
// byte printable ASCII (' ' to '~'), none a quote or a backslash.
func plainQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
