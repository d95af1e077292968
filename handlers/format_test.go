package handlers

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"groundwork/grounding"
)

// TestIndentedSizeBoundsIndent: the estimate never falls below what
// json.Indent makes, so the cap in pretty holds.
func TestIndentedSizeBoundsIndent(t *testing.T) {
	for _, raw := range []string{
		`{}`, `[]`, `[1,2,3]`, `{"a":{"b":[1,{"c":"x,y:[z]"}]},"d":"\"]}"}`,
		`{"flights":[{"flight_number":"HAT045","date":"2024-05-15"},{"flight_number":"HAT046","date":null}]}`,
		strings.Repeat("[", 40) + strings.Repeat("]", 40),
		strings.Repeat(`{"k":`, 30) + `"v"` + strings.Repeat("}", 30),
		`[` + strings.Repeat(`[[0,0],[0,0]],`, 50) + `0]`,
	} {
		var buf bytes.Buffer
		if err := json.Indent(&buf, []byte(raw), "", "  "); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := indentedSize([]byte(raw), 1<<30); got < buf.Len() {
			t.Errorf("indentedSize(%.40s…) = %d < %d, what json.Indent made", raw, got, buf.Len())
		}
	}
}

// TestPrettyDeepJSONStaysRaw: 20 KB of JSON nested 9,990 deep would
// re-indent to about 200 MB; it is shown as it came instead.
func TestPrettyDeepJSONStaysRaw(t *testing.T) {
	deep := strings.Repeat("[", 9990) + strings.Repeat("]", 9990)
	if got := pretty([]byte(deep)); got != deep {
		t.Errorf("deep JSON came back re-indented (%d bytes)", len(got))
	}
	c := text(`{"x":`+deep+`}`, false, "/full")
	if len(c.Text) > 3*maxShown || !c.Truncated {
		t.Errorf("text of deep JSON: %d bytes shown, truncated %v", len(c.Text), c.Truncated)
	}
	if got := pretty([]byte(`{"a":[1,2]}`)); got != "{\n  \"a\": [\n    1,\n    2\n  ]\n}" {
		t.Errorf("ordinary JSON is no longer re-indented: %q", got)
	}
}

// TestMessageTextOfACutContent: a content the page's reader loaded only in
// part is shown cut, with its full size and the link to all of it, and is
// never re-indented from a part.
func TestMessageTextOfACutContent(t *testing.T) {
	m := grounding.Message{Role: grounding.RoleTool, Content: `{"rows": [` + strings.Repeat(`"row", `, 1000), ContentBytes: 60 << 20}
	c := messageText(m, true, "/trajectories/1/messages/2")
	if !c.Truncated || c.Size != "60 MiB" || c.FullURL == "" || !c.Mono || !strings.HasSuffix(c.Text, "…") || len([]rune(c.Text)) != maxShown+1 {
		t.Errorf("cut content = %+v", c)
	}
	whole := grounding.Message{Role: grounding.RoleUser, Content: "hello"}
	if c := messageText(whole, false, "/x"); c.Text != "hello" || c.Truncated {
		t.Errorf("whole content = %+v", c)
	}
}
