package grounding

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// ExportEncoder writes one export: a header, one line (or CSV rows) per
// trajectory, and a trailer. Every method appends to dst and returns it, so
// callers choose their buffering. An encoder counts what it wrote for the
// trailer; it is not safe for concurrent use.
//
// JSON Lines exports (masks, SFT) start with {"groundwork_export": {…}} (the
// snapshot and the request) and end with {"groundwork_trailer": {…}} (the
// counts and versions); CSV starts and ends with comment lines "# "
// followed by the same JSON objects, around the column header and the rows.
// A trailer with "complete": true is the proof that nothing was cut; a
// failure mid-stream ends with "complete": false and the error.
type ExportEncoder struct {
	f     ExportFilter
	tools map[string][]byte // OpenAI tool lists already rendered, by stored JSON

	trajectories, decisions, supervised int
}

// NewExportEncoder returns an encoder for f.
func NewExportEncoder(f ExportFilter) *ExportEncoder {
	if f.Source == "" {
		f.Source = VerdictSourceAny
	}
	return &ExportEncoder{f: f, tools: make(map[string][]byte)}
}

// ExportVersion is the version of the export formats, in every header.
const ExportVersion = 1

// TokenCount documents the target token count in every header.
const TokenCount = "ceil(UTF-8 bytes / 4) of each weight-1 assistant message: content, tool names and argument strings"

// ContentType is the response media type of the format.
func (e *ExportEncoder) ContentType() string {
	if e.f.Format == ExportCSV {
		return "text/csv; charset=utf-8; header=present"
	}
	return "application/jsonl; charset=utf-8"
}

// FileName is a safe download name: groundwork-RUN[-SCALE]-TIME-FILE, with
// every byte outside [A-Za-z0-9._-] of the run name replaced by "_".
func (e *ExportEncoder) FileName(at time.Time) string {
	run := safeName(e.f.RunName)
	parts := []string{"groundwork", run}
	if e.f.Scale.Name != "" {
		parts = append(parts, safeName(e.f.Scale.Name))
	}
	parts = append(parts, at.UTC().Format("20060102T150405Z"), ExportFile(e.f.Format))
	return strings.Join(parts, "-")
}

// ContentDisposition is the download's Content-Disposition header: the
// ASCII FileName, and when the run or scale name has other characters
// ("café"), also RFC 6266's filename* with them, so browsers save
// "groundwork-café-…" rather than "groundwork-caf__-…".
func (e *ExportEncoder) ContentDisposition(at time.Time) string {
	ascii := e.FileName(at)
	h := `attachment; filename="` + ascii + `"`
	parts := []string{"groundwork", displayName(e.f.RunName)}
	if e.f.Scale.Name != "" {
		parts = append(parts, displayName(e.f.Scale.Name))
	}
	parts = append(parts, at.UTC().Format("20060102T150405Z"), ExportFile(e.f.Format))
	if full := strings.Join(parts, "-"); full != ascii {
		h += "; filename*=UTF-8''" + rfc5987(full)
	}
	return h
}

// displayName is a name as a file name may show it: valid UTF-8 without
// control characters, spaces, path separators or quotes (each becomes "_",
// as in FileName), at most 64 runes, never
// starting with a dot.
func displayName(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(s, "_") {
		if n == 64 {
			break
		}
		if r <= 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '"' || r == ':' || (r >= 0x80 && r <= 0xa0) || unicode.IsSpace(r) {
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	out := strings.TrimLeft(strings.TrimSpace(b.String()), ".")
	if out == "" {
		return "run"
	}
	return out
}

// rfc5987 percent-encodes s as an RFC 5987 value (attr-char kept).
func rfc5987(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("!#$&+-.^_`|~", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// ExportFile is the last path segment of a format's URL.
func ExportFile(f ExportFormat) string {
	switch f {
	case ExportSFT:
		return "sft.jsonl"
	case ExportCSV:
		return "decisions.csv"
	}
	return "masks.jsonl"
}

func safeName(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if b.Len() >= 64 {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if out == "" {
		return "run"
	}
	return out
}

// Header appends the first line: the snapshot the export reads, what it
// was asked for, and how weights and tokens are counted. It goes out before
// anything heavy is read; the counts and versions come in the trailer.
func (e *ExportEncoder) Header(dst []byte, snapshot time.Time) []byte {
	if e.f.Format == ExportCSV {
		dst = append(dst, "# "...)
	}
	f := e.f
	dst = append(dst, `{"groundwork_export":{"version":`...)
	dst = strconv.AppendInt(dst, ExportVersion, 10)
	dst = append(dst, `,"format":`...)
	dst = appendJSONString(dst, string(f.Format))
	dst = append(dst, `,"run":`...)
	dst = appendJSONString(dst, f.RunName)
	dst = append(dst, `,"run_id":`...)
	dst = strconv.AppendInt(dst, f.RunID, 10)
	dst = append(dst, `,"snapshot":`...)
	dst = appendJSONString(dst, snapshot.UTC().Format(time.RFC3339Nano))
	dst = append(dst, `,"view":`...)
	dst = appendOptString(dst, f.View)
	dst = append(dst, `,"scale":`...)
	dst = appendOptString(dst, f.Scale.Name)
	dst = append(dst, `,"target_depth":`...)
	if f.Scale.Name == "" {
		dst = append(dst, "null"...)
	} else {
		dst = strconv.AppendInt(dst, int64(f.Scale.Depth), 10)
	}
	dst = append(dst, `,"domain":`...)
	dst = appendOptString(dst, f.Domain)
	dst = append(dst, `,"source":`...)
	dst = appendJSONString(dst, string(f.Source))
	dst = append(dst, `,"complete":`...)
	dst = strconv.AppendBool(dst, f.Complete)
	dst = append(dst, `,"include_empty":`...)
	dst = strconv.AppendBool(dst, f.IncludeEmpty)
	dst = append(dst, `,"limit":`...)
	if f.Limit > 0 {
		dst = strconv.AppendInt(dst, int64(f.Limit), 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"weights":"each parent weighs 1/parents, split among its trajectories by target tokens","target_tokens":`...)
	dst = appendJSONString(dst, TokenCount)
	dst = append(dst, "}}\n"...)
	if f.Format == ExportCSV {
		dst = append(dst, csvColumns...)
	}
	return dst
}

func appendCounts(dst []byte, trajectories, decisions, supervised int) []byte {
	dst = append(dst, `,"trajectories":`...)
	dst = strconv.AppendInt(dst, int64(trajectories), 10)
	dst = append(dst, `,"decisions":`...)
	dst = strconv.AppendInt(dst, int64(decisions), 10)
	dst = append(dst, `,"supervised":`...)
	return strconv.AppendInt(dst, int64(supervised), 10)
}

// Trailer appends the last line of a complete export: the counts written
// (which the store checked against its summary of the same snapshot), the
// number of parents P behind the weights, and the engine and profile
// versions that produced the verdicts.
func (e *ExportEncoder) Trailer(dst []byte, s ExportSummary) []byte {
	dst = e.trailerStart(dst, true, "")
	dst = append(dst, `,"parents":`...)
	dst = strconv.AppendInt(dst, int64(s.Parents), 10)
	dst = append(dst, `,"engine_versions":`...)
	dst = appendStrings(dst, s.EngineVersions)
	dst = append(dst, `,"profiles":`...)
	dst = appendStrings(dst, s.Profiles)
	dst = append(dst, `,"snapshot":`...)
	dst = appendJSONString(dst, s.Snapshot.UTC().Format(time.RFC3339Nano))
	return append(dst, "}}\n"...)
}

// ErrorTrailer appends the last line of an export that failed after it
// began: complete is false, message says why, and the counts are what was
// written before. The caller then breaks the connection, so a client that
// ignores the line still sees a truncated transfer.
func (e *ExportEncoder) ErrorTrailer(dst []byte, message string) []byte {
	return append(e.trailerStart(dst, false, message), "}}\n"...)
}

func (e *ExportEncoder) trailerStart(dst []byte, complete bool, message string) []byte {
	if e.f.Format == ExportCSV {
		dst = append(dst, "# "...)
	}
	dst = append(dst, `{"groundwork_trailer":{"complete":`...)
	dst = strconv.AppendBool(dst, complete)
	if !complete {
		dst = append(dst, `,"error":`...)
		dst = appendJSONString(dst, message)
	}
	return appendCounts(dst, e.trajectories, e.decisions, e.supervised)
}

// Written returns what the encoder has written so far.
func (e *ExportEncoder) Written() (trajectories, decisions, supervised int) {
	return e.trajectories, e.decisions, e.supervised
}

// Trajectory appends t, which Prepare and ParentWeights have seen.
func (e *ExportEncoder) Trajectory(dst []byte, t *ExportTrajectory) ([]byte, error) {
	var err error
	switch e.f.Format {
	case ExportSFT:
		dst, err = e.sft(dst, t)
	case ExportCSV:
		dst = e.csv(dst, t)
	default:
		dst = e.masks(dst, t)
	}
	if err != nil {
		return dst, err
	}
	e.trajectories++
	e.decisions += t.SelectedDecisions
	e.supervised += t.SupervisedDecisions
	return dst, nil
}

// masks appends one masks.jsonl line.
func (e *ExportEncoder) masks(dst []byte, t *ExportTrajectory) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, t.ExtID)
	dst = append(dst, `,"parent_id":`...)
	dst = appendJSONString(dst, t.ParentID)
	dst = append(dst, `,"weight":`...)
	dst = strconv.AppendFloat(dst, t.Weight, 'g', -1, 64)
	dst = append(dst, `,"target_tokens":`...)
	dst = strconv.AppendInt(dst, int64(t.Tokens), 10)
	dst = append(dst, `,"R":`...)
	dst = appendBit(dst, t.Success)
	dst = append(dst, `,"reward":`...)
	if t.Reward != nil {
		dst = strconv.AppendFloat(dst, *t.Reward, 'g', -1, 64)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"workflow_ok":`...)
	dst = strconv.AppendBool(dst, t.WorkflowOK)
	dst = append(dst, `,"flow_reasons":`...)
	dst = appendStrings(dst, t.FlowReasons)
	dst = append(dst, `,"domain":`...)
	dst = appendJSONString(dst, t.Domain)
	dst = append(dst, `,"engine_version":`...)
	dst = appendJSONString(dst, t.EngineVersion)
	dst = append(dst, `,"profile":`...)
	dst = appendJSONString(dst, t.Profile)
	dst = append(dst, `,"decisions":[`...)
	first := true
	for i := range t.Decisions {
		d := &t.Decisions[i]
		if !d.Selected {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, `{"ordinal":`...)
		dst = strconv.AppendInt(dst, int64(d.Ordinal), 10)
		dst = append(dst, `,"message":`...)
		dst = strconv.AppendInt(dst, int64(d.Message), 10)
		dst = append(dst, `,"call":`...)
		if d.Call < 0 {
			dst = append(dst, `null,"tool":null`...)
		} else {
			dst = strconv.AppendInt(dst, int64(d.Call), 10)
			dst = append(dst, `,"tool":`...)
			dst = appendJSONString(dst, d.Tool)
		}
		dst = append(dst, `,"mask":`...)
		dst = strconv.AppendInt(dst, int64(d.Mask), 10)
		dst = append(dst, `,"source":"`...)
		dst = append(dst, d.Source()...)
		dst = append(dst, `","verdict":`...)
		dst = appendJSONString(dst, string(d.Verdict))
		dst = append(dst, `,"auto_verdict":`...)
		dst = appendJSONString(dst, string(d.AutoVerdict))
		dst = append(dst, `,"reasons":`...)
		dst = appendStrings(dst, d.Reasons)
		dst = append(dst, `,"annotator":`...)
		dst = appendOptString(dst, d.Annotator)
		dst = append(dst, `,"decided_at":`...)
		if d.DecidedAt.IsZero() {
			dst = append(dst, "null"...)
		} else {
			dst = appendJSONString(dst, d.DecidedAt.UTC().Format(time.RFC3339Nano))
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}\n"...)
}

// sft appends one line in OpenAI's fine-tuning chat format: the visible
// messages with "weight" on each assistant message (see AppendSFTMessages),
// and the tools.
func (e *ExportEncoder) sft(dst []byte, t *ExportTrajectory) ([]byte, error) {
	dst = append(dst, '{')
	if e.f.IDs {
		dst = append(dst, `"id":`...)
		dst = appendJSONString(dst, t.ExtID)
		dst = append(dst, `,"parent_id":`...)
		dst = appendJSONString(dst, t.ParentID)
		dst = append(dst, `,"sample_weight":`...)
		dst = strconv.AppendFloat(dst, t.Weight, 'g', -1, 64)
		dst = append(dst, ',')
	}
	dst = append(dst, `"messages":`...)
	if t.SFT == "" {
		dst = append(dst, "[]"...)
	} else {
		dst = appendWeighted(dst, t.SFT, t.Marks, t.weights)
	}
	if len(t.Tools) > 0 {
		tools, err := e.openAITools(t.Tools)
		if err != nil {
			return dst, fmt.Errorf("grounding: export trajectory %q: %w", t.ExtID, err)
		}
		if len(tools) > 0 {
			dst = append(dst, `,"tools":`...)
			dst = append(dst, tools...)
		}
	}
	return append(dst, "}\n"...), nil
}

// openAITools renders a stored tool list in OpenAI's shape
// [{"type":"function","function":{name, description, parameters}}]. Pools
// share a few tool lists, so each is rendered once.
func (e *ExportEncoder) openAITools(stored json.RawMessage) ([]byte, error) {
	if out, ok := e.tools[string(stored)]; ok {
		return out, nil
	}
	var tools []Tool
	if err := json.Unmarshal(stored, &tools); err != nil {
		return nil, fmt.Errorf("decode tools: %w", err)
	}
	var out []byte
	if len(tools) > 0 {
		out = append(out, '[')
		for i, tool := range tools {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, `{"type":"function","function":{"name":`...)
			out = appendJSONString(out, tool.Name)
			if tool.Description != "" {
				out = append(out, `,"description":`...)
				out = appendJSONString(out, tool.Description)
			}
			if len(tool.Parameters) > 0 {
				out = append(out, `,"parameters":`...)
				out = append(out, tool.Parameters...)
			}
			out = append(out, "}}"...)
		}
		out = append(out, ']')
	}
	if len(e.tools) >= 256 {
		clear(e.tools)
	}
	e.tools[string(stored)] = out
	return out, nil
}

// csvColumns is the CSV column header.
const csvColumns = "run,trajectory,parent,domain,R,workflow_ok,weight,ordinal,message,call,tool,source,verdict,auto_verdict,human_verdict,mask,reasons,annotator,decided_at\r\n"

// csv appends one row per selected decision (RFC 4180, CRLF line ends).
// Text that a spreadsheet would run as a formula (starting with = + - @ or
// a tab or CR) is prefixed with a single quote; reasons are joined with ";".
func (e *ExportEncoder) csv(dst []byte, t *ExportTrajectory) []byte {
	for i := range t.Decisions {
		d := &t.Decisions[i]
		if !d.Selected {
			continue
		}
		dst = appendCSVText(dst, e.f.RunName)
		dst = append(dst, ',')
		dst = appendCSVText(dst, t.ExtID)
		dst = append(dst, ',')
		dst = appendCSVText(dst, t.ParentID)
		dst = append(dst, ',')
		dst = appendCSVText(dst, t.Domain)
		dst = append(dst, ',')
		dst = appendBit(dst, t.Success)
		dst = append(dst, ',')
		dst = appendBit(dst, t.WorkflowOK)
		dst = append(dst, ',')
		dst = strconv.AppendFloat(dst, t.Weight, 'g', -1, 64)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(d.Ordinal), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(d.Message), 10)
		dst = append(dst, ',')
		if d.Call >= 0 {
			dst = strconv.AppendInt(dst, int64(d.Call), 10)
		}
		dst = append(dst, ',')
		dst = appendCSVText(dst, d.Tool)
		dst = append(dst, ',')
		dst = append(dst, d.Source()...)
		dst = append(dst, ',')
		dst = appendCSVText(dst, string(d.Verdict))
		dst = append(dst, ',')
		dst = appendCSVText(dst, string(d.AutoVerdict))
		dst = append(dst, ',')
		dst = appendCSVText(dst, string(d.HumanVerdict))
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(d.Mask), 10)
		dst = append(dst, ',')
		dst = appendCSVText(dst, strings.Join(d.Reasons, ";"))
		dst = append(dst, ',')
		dst = appendCSVText(dst, d.Annotator)
		dst = append(dst, ',')
		if !d.DecidedAt.IsZero() {
			dst = append(dst, d.DecidedAt.UTC().Format(time.RFC3339Nano)...)
		}
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// appendCSVText appends s as one CSV field, quoted when it must be, and
// defused when a spreadsheet would evaluate it.
func appendCSVText(dst []byte, s string) []byte {
	if s == "" {
		return dst
	}
	formula := strings.IndexByte("=+-@\t\r", s[0]) >= 0
	if !formula && !strings.ContainsAny(s, ",\"\r\n") && s[0] != ' ' && s[len(s)-1] != ' ' {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	if formula {
		dst = append(dst, '\'')
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

func appendBit(dst []byte, b bool) []byte {
	if b {
		return append(dst, '1')
	}
	return append(dst, '0')
}

func appendOptString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, s)
}

func appendStrings(dst []byte, ss []string) []byte {
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes a JSON string holds as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string, byte for byte as
// encoding/json writes it without HTML escaping: quotes, backslashes and
// control characters are escaped (\b, \f, \n, \r and \t by name), U+2028
// and U+2029 too (so a line is safe to embed in JavaScript), and invalid
// UTF-8 becomes \ufffd. The evidence encoder's test holds it to that.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
