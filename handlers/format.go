package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"groundwork/grounding"
	"groundwork/views"
)

// maxShown is how many characters of one log content a page shows before
// offering "show all".
const maxShown = 2000

// maxPretty bounds the JSON worth re-indenting; larger values are shown as
// they came (and cut), so one huge db_state cannot stall a page.
const maxPretty = 256 << 10

// intParam parses the route parameter name as a non-negative int64.
func intParam(r *http.Request, name string) (int64, bool) {
	n, err := strconv.ParseInt(chi.URLParam(r, name), 10, 64)
	return n, err == nil && n >= 0
}

// intQuery parses query parameter name as an int in [0, max], with def when
// it is absent.
func intQuery(r *http.Request, name string, def, max int) (int, bool) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, false
	}
	return min(n, max), true
}

// count formats n with thousands separators: 12,345.
func count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// percent formats part/whole as "54%" ("—" when whole is 0).
func percent(part, whole int) string {
	if whole == 0 {
		return "—"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 0, 64) + "%"
}

// reward formats an optional reward.
func reward(r *float64) string {
	if r == nil {
		return "—"
	}
	return strconv.FormatFloat(*r, 'g', 4, 64)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// dateTime formats t for tables, in UTC so every reader sees the same value.
func dateTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// byteSize formats n in binary units: "1 GiB", "1.5 MiB", "512 bytes".
func byteSize(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB"}
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	v := float64(n)
	u := ""
	for _, unit := range units {
		if v < 1024 {
			break
		}
		v /= 1024
		u = unit
	}
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), u)
	}
	return fmt.Sprintf("%.1f %s", v, u)
}

// looksJSON reports whether s is a JSON object or array (the shapes worth
// pretty-printing and showing in monospace).
func looksJSON(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	return json.Valid([]byte(t))
}

// maxPrettyOut bounds what re-indenting may produce. Indentation grows
// with depth: 20 KB of JSON nested 9,990 deep re-indents to 200 MB, which
// took a page 21 s and a GB of memory.
const maxPrettyOut = 1 << 20

// pretty re-indents JSON; anything else, too large, or that would grow
// past maxPrettyOut re-indented, comes back as is.
func pretty(raw []byte) string {
	if len(raw) > maxPretty || indentedSize(raw, maxPrettyOut) > maxPrettyOut {
		return string(raw)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// indentedSize is at least how many bytes json.Indent with a two-space
// indent makes of raw (more for empty brackets), counting no further than
// limit+1: each opening bracket and comma starts a new line indented to its
// depth, as does each closing bracket.
func indentedSize(raw []byte, limit int) int {
	n, depth, inString, escaped := len(raw), 0, false, false
	for _, b := range raw {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			n += 1 + 2*depth
		case ',':
			n += 1 + 2*depth
		case ':':
			n++ // ": "
		case '}', ']':
			depth--
			n += 1 + 2*max(depth, 0)
		}
		if n > limit {
			return n
		}
	}
	return n
}

// text builds the view of one log content. mono forces monospace (tool
// output, code); JSON objects and arrays are pretty-printed and monospace
// anyway. When fullURL is not "", content longer than maxShown characters is
// cut and fullURL offered to load all of it; with fullURL "" it is shown in
// full.
func text(s string, mono bool, fullURL string) views.Content {
	if strings.TrimSpace(s) == "" {
		return views.Content{Empty: true}
	}
	if looksJSON(s) {
		s = pretty([]byte(s))
		mono = true
	}
	c := views.Content{Text: s, Mono: mono}
	if fullURL != "" {
		if n := utf8.RuneCountInString(s); n > maxShown {
			c.Text = cut(s, maxShown) + "…"
			c.Truncated = true
			c.Size = count(n) + " characters"
			c.FullURL = fullURL
		}
	}
	return c
}

// messageText is text for a message's content, which a page's reader may
// have loaded only in part (m.ContentBytes): then the start is shown, cut,
// with the full size and the link that loads all of it.
func messageText(m grounding.Message, mono bool, fullURL string) views.Content {
	if m.ContentBytes <= len(m.Content) {
		return text(m.Content, mono, fullURL)
	}
	t := strings.TrimSpace(m.Content)
	c := views.Content{Text: cut(m.Content, maxShown) + "…", Mono: mono || (t != "" && (t[0] == '{' || t[0] == '[')),
		Truncated: true, Size: byteSize(int64(m.ContentBytes)), FullURL: fullURL}
	if fullURL == "" { // no way to load the rest: say so
		c.Text = m.Content + "…"
	}
	return c
}

// pageChars is how far a page reads one message's content: pages show
// 2,000 characters and re-indent JSON up to maxPretty, so reading a 60 MB
// tool answer whole to show its start only costs time and memory (the
// store's MessageWindow reads as far).
const pageChars = 256 << 10

// showAllChars is how much of one content "show all" puts on the page. A
// content may be tens of megabytes (the import's record cap is 64 MiB),
// which would freeze the browser: past this its start is shown, with its
// size and a link that downloads it whole.
const showAllChars = 1 << 20

// showAll is the "show all" view of a content s, read as far as a store
// read went (total is its whole length in bytes when that was not all of
// it, else 0); rawURL downloads it whole.
func showAll(s string, total int, mono bool, rawURL string) views.Content {
	if total <= len(s) && utf8.RuneCountInString(s) <= showAllChars {
		return text(s, mono, "")
	}
	t := strings.TrimSpace(s)
	return views.Content{
		Text:   cut(s, showAllChars) + "…",
		Mono:   mono || (t != "" && (t[0] == '{' || t[0] == '[')),
		Shown:  "the first " + count(showAllChars) + " characters",
		Size:   byteSize(int64(max(total, len(s)))),
		RawURL: rawURL,
	}
}

// callSource is a tool call's arguments as the log gave them: the
// undecodable string, or the JSON.
func callSource(c grounding.ToolCall) string {
	if c.RawArguments != "" {
		return c.RawArguments
	}
	return string(c.Arguments)
}

// hiddenText is a hidden entry's content as text: a JSON string as its
// text, anything else as its JSON.
func hiddenText(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// download answers with body as a plain-text file named name. Log text is
// untrusted: it is never sniffed as anything else (the pages' middleware
// sets nosniff) and always saved, not shown.
func download(w http.ResponseWriter, name, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

// rawJSON builds the view of a JSON value: a JSON string shows as its text,
// anything else pretty-printed in monospace.
func rawJSON(raw json.RawMessage, fullURL string) views.Content {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return text(s, false, fullURL)
	}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return views.Content{Empty: true}
	}
	return text(string(raw), true, fullURL)
}

// summary is the first ~n characters of s on one line.
func summary(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return cut(s, n) + "…"
}

// jsonSummary is summary over a JSON value, unquoting a JSON string.
func jsonSummary(raw json.RawMessage, n int) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return summary(s, n)
	}
	if len(raw) > 4*n {
		raw = raw[:4*n] // enough for a one-line prefix; no need to compact it all
	}
	return summary(strings.ToValidUTF8(string(raw), ""), n)
}

// cut returns the first n runes of s.
func cut(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}
