package grounding

import (
	"strings"
	"testing"
)

func TestRunNameProblem(t *testing.T) {
	for _, name := range []string{"airline-gpt4o", "café run", "50%", "a/b", "x%41", strings.Repeat("é", 100)} {
		if p := RunNameProblem(name); p != "" {
			t.Errorf("RunNameProblem(%q) = %q; want none", name, p)
		}
	}
	for name, says := range map[string]string{
		"":                             "cannot be empty",
		"  ":                           "cannot be empty",
		strings.Repeat("r", 201):       "at most 200 bytes",
		"bad\xffrun":                   "valid UTF-8",
		"nul\x00name":                  "control characters",
		"tab\there":                    "control characters",
		"evil\u202Etxt.lmth":           "text-direction",
		"iso\u2066late\u2069":          "text-direction",
		"line\nbreak":                  "control characters",
		"del\x7f":                      "control characters",
		strings.Repeat("é", 100) + "x": "at most 200 bytes",
	} {
		if p := RunNameProblem(name); !strings.Contains(p, says) {
			t.Errorf("RunNameProblem(%q) = %q; want it to say %q", name, p, says)
		}
	}
}

func TestCleanFileNameAndRunNameFrom(t *testing.T) {
	if got := CleanFileName("x\xffy\x00z\u202E.jsonl"); got != "x\uFFFDy\uFFFDz\uFFFD.jsonl" {
		t.Errorf("CleanFileName = %q", got)
	}
	if got := CleanFileName(strings.Repeat("é", 200)); len(got) > 255 || !strings.HasPrefix(got, "éé") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("a long name is cut at a rune boundary: %d bytes, %q…", len(got), got[:10])
	}
	if got := RunNameFrom("f\xffname", "imported"); got != "f_name" || RunNameProblem(got) != "" {
		t.Errorf("RunNameFrom = %q (%s)", got, RunNameProblem(got))
	}
	if got := RunNameFrom(strings.Repeat("r", 300), "imported"); len(got) != MaxRunName {
		t.Errorf("RunNameFrom of 300 bytes = %d bytes", len(got))
	}
	if got := RunNameFrom("\x00\x01", "imported"); got != "__" {
		t.Errorf("RunNameFrom of controls = %q", got)
	}
	if got := RunNameFrom("  ", "imported"); got != "imported" {
		t.Errorf("RunNameFrom of blanks = %q", got)
	}
}
