package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"groundwork/grounding"
)

// The JSON columns an import writes for every trajectory, message and
// decision are appended by hand: encodeJSON spent more time on reflection
// than on the bytes. Each appender writes byte for byte what encodeJSON
// writes for its value (TestImportJSONAppenders and FuzzImportJSONAppenders
// hold them to it): struct fields in order with their omitempty rules, nil
// slices and raw values as null, raw values validated and compacted (an
// invalid one is an error, as with encoding/json), strings as
// grounding.AppendJSONString escapes them.

// appendStrings appends s as a JSON array of strings.
func appendStrings(dst []byte, s []string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, v := range s {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = grounding.AppendJSONString(dst, v)
	}
	return append(dst, ']')
}

// appendTools appends a trajectory's tools column.
func appendTools(dst []byte, tools []grounding.Tool) ([]byte, error) {
	if tools == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range tools {
		t := &tools[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"name":`...)
		dst = grounding.AppendJSONString(dst, t.Name)
		if t.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = grounding.AppendJSONString(dst, t.Description)
		}
		if len(t.Parameters) > 0 {
			dst = append(dst, `,"parameters":`...)
			var err error
			if dst, err = appendRawJSON(dst, t.Parameters); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendHidden appends a trajectory's hidden column.
func appendHidden(dst []byte, hidden []grounding.HiddenEntry) ([]byte, error) {
	if hidden == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range hidden {
		h := &hidden[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"kind":`...)
		dst = grounding.AppendJSONString(dst, h.Kind)
		dst = append(dst, `,"content":`...)
		var err error
		if dst, err = appendRawJSON(dst, h.Content); err != nil {
			return dst, err
		}
		if h.At != nil {
			dst = append(dst, `,"at":`...)
			dst = strconv.AppendInt(dst, int64(*h.At), 10)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendViolations appends a trajectory's violations column.
func appendViolations(dst []byte, vs []grounding.Violation) []byte {
	if vs == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i := range vs {
		v := &vs[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"code":`...)
		dst = grounding.AppendJSONString(dst, v.Code)
		dst = append(dst, `,"decision":`...)
		dst = strconv.AppendInt(dst, int64(v.Decision), 10)
		dst = append(dst, `,"message":`...)
		dst = strconv.AppendInt(dst, int64(v.Message), 10)
		dst = append(dst, `,"detail":`...)
		dst = grounding.AppendJSONString(dst, v.Detail)
		dst = append(dst, `,"trajectory":`...)
		dst = strconv.AppendBool(dst, v.Trajectory)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendToolCalls appends a message's tool_calls column and, to args, where
// in dst each call's arguments are (an empty span when they are omitted).
func appendToolCalls(dst []byte, calls []grounding.ToolCall, args [][2]int) ([]byte, [][2]int, error) {
	if calls == nil {
		return append(dst, "null"...), args, nil
	}
	dst = append(dst, '[')
	for i := range calls {
		c := &calls[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{')
		if c.ID != "" {
			dst = append(dst, `"id":`...)
			dst = grounding.AppendJSONString(dst, c.ID)
			dst = append(dst, ',')
		}
		dst = append(dst, `"name":`...)
		dst = grounding.AppendJSONString(dst, c.Name)
		span := [2]int{len(dst), len(dst)}
		if len(c.Arguments) > 0 {
			dst = append(dst, `,"arguments":`...)
			span[0] = len(dst)
			var err error
			if dst, err = appendRawJSON(dst, c.Arguments); err != nil {
				return dst, args, err
			}
			span[1] = len(dst)
		}
		args = append(args, span)
		if c.RawArguments != "" {
			dst = append(dst, `,"raw_arguments":`...)
			dst = grounding.AppendJSONString(dst, c.RawArguments)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), args, nil
}

// appendRawJSON appends a json.RawMessage as encoding/json does: null when
// nil, else validated and compacted (so an empty, non-nil one is an error).
func appendRawJSON(dst []byte, v json.RawMessage) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, v); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// importScratch is what one import worker keeps from one trajectory to the
// next while it prepares them.
type importScratch struct {
	buf  []byte   // JSON being encoded
	args [][2]int // appendToolCalls' spans
	// tools are the tool lists encoded last. A pool has a few (one per
	// domain or agent, shared by thousands of trajectories), and finding a
	// list among them costs a comparison, not its validation, compaction
	// and sha256.
	tools  [toolListsKept]encodedTools
	oldest int // the entry to replace next
}

// toolListsKept is how many distinct tool lists a worker remembers.
const toolListsKept = 8

// encodedTools is a tool list with its stored tools column and the hex
// sha256 of that column (trajectory_sft.tools_sha).
type encodedTools struct {
	tools       []grounding.Tool // a copy: the cache does not rely on a trajectory staying unchanged
	stored, sha string
}

// storedTools returns the tools column of a trajectory with these tools
// (cleanJSON of encodeJSON(nonNil(tools))) and its hex sha256.
func (s *importScratch) storedTools(tools []grounding.Tool) (stored, sha string, err error) {
	for i := range s.tools {
		if e := &s.tools[i]; e.tools != nil && sameTools(e.tools, tools) {
			return e.stored, e.sha, nil
		}
	}
	s.buf, err = appendTools(s.buf[:0], nonNil(tools))
	if err != nil {
		return "", "", err
	}
	stored = cleanJSON(string(s.buf))
	sum := sha256.Sum256([]byte(stored))
	sha = hex.EncodeToString(sum[:])
	kept := make([]grounding.Tool, len(tools))
	for i, t := range tools {
		kept[i] = grounding.Tool{Name: t.Name, Description: t.Description, Parameters: bytes.Clone(t.Parameters)}
	}
	s.tools[s.oldest] = encodedTools{tools: kept, stored: stored, sha: sha}
	s.oldest = (s.oldest + 1) % toolListsKept
	return stored, sha, nil
}

// sameTools reports whether a and b encode alike: the same names,
// descriptions and raw parameters, byte for byte (nil and empty parameters
// are both omitted).
func sameTools(a, b []grounding.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

// storedToolCalls returns the tool_calls column of a message with calls
// (cleanJSON of encodeJSON(calls)) and, when readBack is set, the calls as
// grounding.DecodeStoredToolCalls reads that column back: an export renders
// them so, and the import's SFT rendering must be the one an export would
// make. Decoding is needed only when cleaning changed something or a
// string was not valid UTF-8 (encoding/json writes each invalid byte as
// U+FFFD); otherwise the calls read back are these with their arguments
// compacted, which most already are.
func (s *importScratch) storedToolCalls(calls []grounding.ToolCall, readBack bool) (string, []grounding.ToolCall, error) {
	var err error
	s.buf, s.args, err = appendToolCalls(s.buf[:0], calls, s.args[:0])
	if err != nil {
		return "", nil, err
	}
	stored := cleanJSON(string(s.buf))
	if !readBack {
		return stored, nil, nil
	}
	if stored != string(s.buf) || !validCallStrings(calls) {
		read, err := grounding.DecodeStoredToolCalls([]byte(stored))
		return stored, read, err
	}
	read := make([]grounding.ToolCall, len(calls))
	for i, c := range calls {
		read[i] = c
		switch args := s.buf[s.args[i][0]:s.args[i][1]]; {
		case len(args) == 0 || string(args) == "null":
			read[i].Arguments = nil
		case !bytes.Equal(args, c.Arguments):
			read[i].Arguments = bytes.Clone(args)
		}
	}
	return stored, read, nil
}

// validCallStrings reports whether the strings of calls are valid UTF-8,
// and so read back unchanged.
func validCallStrings(calls []grounding.ToolCall) bool {
	for _, c := range calls {
		if !utf8.ValidString(c.ID) || !utf8.ValidString(c.Name) || !utf8.ValidString(c.RawArguments) {
			return false
		}
	}
	return true
}
