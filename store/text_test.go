package store

import "testing"

func TestCleanText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a\x00b", "a\uFFFDb"},
		{"bad \xff utf8", "bad \uFFFD utf8"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := cleanText(tt.in); got != tt.want {
			t.Errorf("cleanText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":"x"}`, `{"a":"x"}`},
		{`{"a":"x\u0000y"}`, `{"a":"x\ufffdy"}`},
		{`["\\u0000"]`, `["\\u0000"]`},             // an escaped backslash, then text
		{`["\\\u0000"]`, `["\\\ufffd"]`},           // an escaped backslash, then NUL
		{`["\"\u0000\n"]`, `["\"\ufffd\n"]`},       // other escapes are kept
		{`{"\u0000":1}`, `{"\ufffd":1}`},           // keys too
		{"[\"\xff\"]", "[\"\uFFFD\"]"},             // invalid UTF-8
		{`["\u00001"]`, `["\ufffd1"]`},             // only four hex digits belong to the escape
		{`["\u0000\u0000"]`, `["\ufffd\ufffd"]`},   // repeated
		{`"trailing \\"`, `"trailing \\"`},         // ends on an escape
		{`["\u00e9 \u0000"]`, `["\u00e9 \ufffd"]`}, // other \u escapes are kept
	}
	for _, tt := range tests {
		if got := cleanJSON(tt.in); got != tt.want {
			t.Errorf("cleanJSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
