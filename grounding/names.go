package grounding

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxRunName is the longest run name, in bytes (the import form's limit).
const MaxRunName = 200

// maxFileName is the longest file name kept for an import, in bytes.
const maxFileName = 255

// RunNameProblem says what is wrong with a run name, "" when nothing. A run
// name is shown in every list and page title and is part of export URLs, so
// it must be valid UTF-8 without control characters (a NUL, which Postgres
// cannot store; a tab or newline) or text-direction controls, with which
// "evil‮txt.lmth" displays as another run's name.
func RunNameProblem(name string) string {
	switch {
	case strings.TrimSpace(name) == "":
		return "A run name cannot be empty."
	case len(name) > MaxRunName:
		return "A run name is at most 200 bytes."
	case !utf8.ValidString(name):
		return "A run name must be valid UTF-8 text."
	}
	for _, r := range name {
		if unicode.IsControl(r) || isBidiControl(r) {
			return "A run name cannot contain control characters or text-direction controls."
		}
	}
	return ""
}

// CleanFileName makes an uploaded or given file name safe to store and
// show: invalid UTF-8, control characters and text-direction controls
// become U+FFFD, and it is cut to 255 bytes.
func CleanFileName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(name, "\uFFFD") {
		if unicode.IsControl(r) || isBidiControl(r) {
			r = utf8.RuneError
		}
		if b.Len()+utf8.RuneLen(r) > maxFileName {
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RunNameFrom makes a run name of any text (a file's base name): cleaned
// like a file name, cut to MaxRunName bytes, fallback when nothing is left.
func RunNameFrom(s, fallback string) string {
	var b strings.Builder
	for _, r := range CleanFileName(s) {
		if r == utf8.RuneError {
			r = '_'
		}
		if b.Len()+utf8.RuneLen(r) > MaxRunName {
			break
		}
		b.WriteRune(r)
	}
	if strings.TrimSpace(b.String()) == "" {
		return fallback
	}
	return b.String()
}

// isBidiControl: the Unicode text-direction embeddings, overrides,
// isolates and marks.
func isBidiControl(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C
}
