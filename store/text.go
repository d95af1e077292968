package store

import (
	"strings"
	"unicode/utf8"
)

// Postgres text and jsonb cannot hold U+0000 or invalid UTF-8, and logs of
// shell sessions (cat of a binary file) do contain them. Rather than fail a
// whole import there, the store replaces them with U+FFFD in message
// content, requests and JSON columns, in both dialects, so SQLite and
// Postgres return the same text.

// cleanText returns s with invalid UTF-8 and NUL replaced by U+FFFD.
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return s
}

// cleanJSON does the same for JSON text, where NUL can only appear as the
// escape \u0000 inside a string (a raw control character is not valid
// JSON). An escaped backslash followed by u0000 is text, not an escape, and
// is kept.
func cleanJSON(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if !strings.Contains(s, `\u0000`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		if strings.HasPrefix(s[i+1:], "u0000") {
			b.WriteString(`\ufffd`)
			i += 5
			continue
		}
		b.WriteByte(c)
		b.WriteByte(s[i+1]) // the escaped character, a backslash included
		i++
	}
	return b.String()
}
