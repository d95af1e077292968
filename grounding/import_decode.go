package grounding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// decoder maps one record's JSON onto a Trajectory, field by field, so every
// problem can name its exact JSON path (encoding/json's own type errors drop
// array indexes). It keeps the first problem; once one is set every helper
// returns zero values, so mapping code reads straight through and checks
// d.err at the end.
type recordDecoder struct {
	format Format
	file   string
	record int
	line   int
	err    *ImportError
}

func (d *recordDecoder) fail(at jsonPath, expected, got string) {
	if d.err == nil {
		d.err = &ImportError{File: d.file, Record: d.record, Line: d.line, Field: at.String(), Expected: expected, Got: got}
	}
}

// path is the JSON path of a field, e.g. messages[3].tool_calls[0].id. It is
// a chain of values on the stack, rendered only when a problem is reported,
// so mapping a valid record builds no path strings.
type jsonPath struct {
	parent *jsonPath
	key    string
	index  int // array index, or -1 for a key (or the root)
}

var rootPath = jsonPath{index: -1}

func (p *jsonPath) at(key string) jsonPath { return jsonPath{parent: p, key: key, index: -1} }
func (p *jsonPath) elem(i int) jsonPath    { return jsonPath{parent: p, index: i} }

func (p jsonPath) String() string {
	// Segments are collected into a fixed array, not a slice of pointers
	// and not by recursion, so that escape analysis keeps paths on the
	// stack. The deepest path importers build has 7 segments.
	var segs [16]string
	n := 0
	for q := &p; q != nil && n < len(segs); q = q.parent {
		switch {
		case q.index >= 0:
			segs[n] = "[" + strconv.Itoa(q.index) + "]"
		case q.key == "":
			continue
		default:
			segs[n] = q.key
		}
		n++
	}
	var b strings.Builder
	for i := n - 1; i >= 0; i-- {
		if b.Len() > 0 && segs[i][0] != '[' {
			b.WriteByte('.')
		}
		b.WriteString(segs[i])
	}
	return b.String()
}

// object splits a JSON object, handing each member to set (the set method
// of a raw struct; a func rather than an interface keeps the struct on the
// stack).
func (d *recordDecoder) object(raw json.RawMessage, at jsonPath, want string, set func(key []byte, val json.RawMessage)) bool {
	if d.err != nil {
		return false
	}
	if jsonKind(raw) != '{' {
		d.fail(at, want, describeRaw(raw))
		return false
	}
	jsonMembers(raw, set)
	return true
}

// array splits an optional array; absent or null gives nil.
func (d *recordDecoder) array(raw json.RawMessage, at jsonPath, want string) []json.RawMessage {
	if d.err != nil || !jsonPresent(raw) {
		return nil
	}
	if jsonKind(raw) != '[' {
		d.fail(at, want, describeRaw(raw))
		return nil
	}
	return jsonElements(raw)
}

// str decodes an optional string; absent or null gives "".
func (d *recordDecoder) str(raw json.RawMessage, at jsonPath) string {
	if d.err != nil || !jsonPresent(raw) {
		return ""
	}
	if jsonKind(raw) != '"' {
		d.fail(at, "a string", describeRaw(raw))
		return ""
	}
	return unquoteJSON(raw)
}

// unquote decodes a JSON string already known to be valid (the whole record
// passed the syntax check), skipping encoding/json when there is no escape.
// The result never shares memory with raw.
func unquoteJSON(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	json.Unmarshal(raw, &s) //nolint:errcheck // validated by the caller
	return s
}

// intern returns the value among values that the JSON string raw spells
// (without allocating), or "" when raw is not one of them.
func internString(raw json.RawMessage, values ...string) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	for _, v := range values {
		if string(raw[1:len(raw)-1]) == v {
			return v
		}
	}
	if s := unquoteJSON(raw); bytes.IndexByte(raw, '\\') >= 0 {
		for _, v := range values {
			if s == v {
				return v
			}
		}
	}
	return ""
}

func (d *recordDecoder) number(raw json.RawMessage, at jsonPath) *float64 {
	if d.err != nil || !jsonPresent(raw) {
		return nil
	}
	if k := jsonKind(raw); k != '-' && (k < '0' || k > '9') {
		d.fail(at, "a number", describeRaw(raw))
		return nil
	}
	// A valid JSON number is valid ParseFloat syntax; only the range can
	// fail (1e999), and JSON has no infinities.
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil {
		d.fail(at, "a finite number", describeRaw(raw))
		return nil
	}
	return &f
}

func (d *recordDecoder) boolean(raw json.RawMessage, at jsonPath) *bool {
	if d.err != nil || !jsonPresent(raw) {
		return nil
	}
	switch jsonKind(raw) {
	case 't':
		b := true
		return &b
	case 'f':
		b := false
		return &b
	}
	d.fail(at, "true, false or null", describeRaw(raw))
	return nil
}

// clone copies a raw value to keep (the record's bytes are reused for the
// next line), or returns nil for an absent field.
func cloneRaw(raw json.RawMessage) json.RawMessage {
	if jsonKind(raw) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

// rawMessage is one message of a canonical, OpenAI or τ-bench list.
type rawMessage struct {
	Role, Content, ToolCalls, ToolCallID, Name, Error json.RawMessage
	Visibility, HiddenKind, FunctionCall              json.RawMessage
}

func (m *rawMessage) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "role":
		m.Role = val
	case "content":
		m.Content = val
	case "tool_calls":
		m.ToolCalls = val
	case "tool_call_id":
		m.ToolCallID = val
	case "name":
		m.Name = val
	case "error":
		m.Error = val
	case "visibility":
		m.Visibility = val
	case "hidden_kind":
		m.HiddenKind = val
	case "function_call":
		m.FunctionCall = val
	}
}

// rawCall accepts both the canonical call {id, name, arguments} and the
// OpenAI one {id, type, function: {name, arguments}}.
type rawCall struct {
	ID, Name, Function, Arguments, RawArguments json.RawMessage
}

func (c *rawCall) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "id":
		c.ID = val
	case "name":
		c.Name = val
	case "function":
		c.Function = val
	case "arguments":
		c.Arguments = val
	case "raw_arguments":
		c.RawArguments = val
	}
}

// rawFunction is OpenAI's "function" object of a call or a tool schema.
type rawFunction struct {
	Name, Description, Parameters, Arguments, Function json.RawMessage
}

func (f *rawFunction) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "name":
		f.Name = val
	case "description":
		f.Description = val
	case "parameters":
		f.Parameters = val
	case "arguments":
		f.Arguments = val
	case "function":
		f.Function = val
	}
}

type rawTextPart struct{ Text json.RawMessage }

func (t *rawTextPart) set(key []byte, val json.RawMessage) {
	if string(key) == "text" {
		t.Text = val
	}
}

type rawHidden struct{ Kind, Content, At json.RawMessage }

func (h *rawHidden) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "kind":
		h.Kind = val
	case "content":
		h.Content = val
	case "at":
		h.At = val
	}
}

// messages maps a message list (field "messages", or "traj" for τ-bench) in
// source order, 1:1, and checks the tool-call wiring: every tool message
// answers an earlier call of the same trajectory, and no call id is reused
// while an earlier call with that id still awaits its answer.
//
// Reuse after the answer is allowed on purpose: OpenAI reissues ids across
// turns, and the τ-bench airline log does so in 50 of its 200 trajectories;
// Decisions matches an observation to the oldest unanswered call with its id.
func (d *recordDecoder) messages(items []json.RawMessage, list jsonPath) []Message {
	msgs := make([]Message, len(items))
	// call id → the message of its unanswered call, or -1 once answered;
	// made on the first call.
	var calls map[string]int
	for i, raw := range items {
		p := list.elem(i)
		var rm rawMessage
		if !d.object(raw, p, "a message object", rm.set) {
			return nil
		}
		m := &msgs[i]
		m.Index = i
		m.Role = internString(rm.Role, RoleSystem, RoleUser, RoleAssistant, RoleTool)
		if m.Role == "" {
			d.fail(p.at("role"), "one of system, user, assistant, tool", describeRaw(rm.Role))
		}
		m.Content, m.ContentNull = d.content(rm.Content, p.at("content"))
		m.ToolCallID = d.str(rm.ToolCallID, p.at("tool_call_id"))
		m.Name = d.str(rm.Name, p.at("name"))
		if b := d.boolean(rm.Error, p.at("error")); b != nil {
			m.Error = *b
		}
		if jsonPresent(rm.Visibility) {
			m.Visibility = internString(rm.Visibility, Visible, Hidden, "")
			if m.Visibility == "" && string(rm.Visibility) != `""` {
				d.fail(p.at("visibility"), `"visible", "hidden" or nothing`, describeRaw(rm.Visibility))
			}
		}
		m.HiddenKind = d.str(rm.HiddenKind, p.at("hidden_kind"))
		if jsonPresent(rm.FunctionCall) {
			d.fail(p.at("function_call"), "tool_calls (the legacy function_call is not supported)", describeRaw(rm.FunctionCall))
		}
		cl := p.at("tool_calls")
		rcs := d.array(rm.ToolCalls, cl, "an array of tool calls")
		if len(rcs) > 0 && m.Role != RoleAssistant {
			d.fail(cl, "tool calls only on assistant messages", fmt.Sprintf("%d on a %s message", len(rcs), m.Role))
		}
		if len(rcs) > 0 && d.err == nil {
			m.ToolCalls = make([]ToolCall, len(rcs))
		}
		for k, rc := range rcs {
			cp := cl.elem(k)
			c := d.toolCall(rc, cp)
			if d.err != nil {
				return nil
			}
			if c.ID != "" {
				if j, ok := calls[c.ID]; ok && j >= 0 {
					d.fail(cp.at("id"), "a tool call id not already awaiting an answer",
						fmt.Sprintf("%s, still unanswered from %s", quoteShort(c.ID), list.elem(j).String()))
				}
				if calls == nil {
					calls = make(map[string]int)
				}
				calls[c.ID] = i
			}
			m.ToolCalls[k] = c
		}
		if m.Role == RoleTool {
			_, called := calls[m.ToolCallID]
			switch {
			case m.ToolCallID == "":
				d.fail(p.at("tool_call_id"), "the id of an earlier tool call", describeRaw(rm.ToolCallID))
			case !called:
				d.fail(p.at("tool_call_id"), "the id of an earlier tool call in this trajectory",
					quoteShort(m.ToolCallID)+", which no earlier message calls")
			default:
				calls[m.ToolCallID] = -1
			}
			// τ-bench marks failed tool executions only by this prefix
			// (SPEC §2); other formats must say "error": true.
			if d.format == FormatTauBench && strings.HasPrefix(m.Content, "Error:") {
				m.Error = true
			}
		}
		if d.err != nil {
			return nil
		}
	}
	return msgs
}

// content decodes a message's content: a string, or null/absent (reported
// as ContentNull). OpenAI-style lists of text parts are joined for the
// OpenAI and τ-bench formats; canonical content is a string or null only.
func (d *recordDecoder) content(raw json.RawMessage, at jsonPath) (string, bool) {
	if d.err != nil {
		return "", false
	}
	switch jsonKind(raw) {
	case 0, 'n':
		return "", true
	case '"':
		return unquoteJSON(raw), false
	case '[':
		if d.format == FormatCanonical {
			break
		}
		var b strings.Builder
		for k, part := range jsonElements(raw) {
			var tp rawTextPart
			pp := at.elem(k)
			if !d.object(part, pp, `a text part {"type": "text", "text": ...}`, tp.set) {
				return "", false
			}
			if jsonKind(tp.Text) != '"' {
				d.fail(pp.at("text"), "a string (only text parts are supported)", describeRaw(tp.Text))
				return "", false
			}
			b.WriteString(unquoteJSON(tp.Text))
		}
		return b.String(), false
	}
	if d.format == FormatCanonical {
		d.fail(at, "a string or null", describeRaw(raw))
	} else {
		d.fail(at, "a string, null or a list of text parts", describeRaw(raw))
	}
	return "", false
}

// toolCall maps one call. Canonical calls carry arguments as a JSON object;
// OpenAI and τ-bench calls carry them as a JSON string, decoded here (and a
// canonical call that sends a string too). An undecodable string, or
// arguments that are neither an object nor a string, are kept verbatim in
// RawArguments: a fact about the log (the call fails the execution check),
// not an import error.
func (d *recordDecoder) toolCall(raw json.RawMessage, p jsonPath) ToolCall {
	var rc rawCall
	if !d.object(raw, p, "a tool call object", rc.set) {
		return ToolCall{}
	}
	c := ToolCall{ID: d.str(rc.ID, p.at("id"))}
	args, nameRaw, fp := rc.Arguments, rc.Name, p
	if jsonPresent(rc.Function) {
		if d.format == FormatCanonical {
			d.fail(p, "a canonical tool call {id, name, arguments}",
				`an OpenAI-shaped call with "function" (import the file as openai-jsonl)`)
			return ToolCall{}
		}
		var fn rawFunction
		fp = p.at("function")
		if !d.object(rc.Function, fp, "an object {name, arguments}", fn.set) {
			return ToolCall{}
		}
		args, nameRaw = fn.Arguments, fn.Name
	}
	c.Name = d.str(nameRaw, fp.at("name"))
	if d.err == nil && c.Name == "" {
		d.fail(fp.at("name"), "a non-empty tool name", describeRaw(nameRaw))
	}
	if d.format == FormatCanonical {
		c.RawArguments = d.str(rc.RawArguments, p.at("raw_arguments"))
		switch jsonKind(args) {
		case '{', 0, 'n':
			c.Arguments = cloneRaw(args)
			return c
		case '"':
			// A string, as OpenAI and τ-bench send them: decoded below.
		default:
			// Arguments are an object in every tool-call format; a number
			// or an array is a fact about the log (the call fails the
			// execution check), kept verbatim, not an import error.
			c.RawArguments = string(args)
			return c
		}
	}
	switch jsonKind(args) {
	case 0, 'n':
	case '"':
		if s := unquoteJSON(args); json.Valid([]byte(s)) {
			c.Arguments = json.RawMessage(s)
		} else {
			c.RawArguments = s
		}
	case '{':
		c.Arguments = cloneRaw(args) // some producers send the decoded object
	default:
		d.fail(fp.at("arguments"), "a JSON string or object", describeRaw(args))
	}
	return c
}

// tools maps a tool list in either the OpenAI shape
// {"type": "function", "function": {name, description, parameters}} or the
// plain {name, description, parameters}.
func (d *recordDecoder) tools(raw json.RawMessage, at jsonPath) []Tool {
	items := d.array(raw, at, "an array of tool schemas")
	if len(items) == 0 {
		return nil
	}
	out := make([]Tool, len(items))
	for i := range items {
		item, outer := at.elem(i), jsonPath{}
		p := &item
		var fn rawFunction
		if !d.object(items[i], item, "a tool schema object", fn.set) {
			return nil
		}
		if jsonPresent(fn.Function) {
			// The OpenAI shape: the schema is under "function".
			outer = item.at("function")
			p = &outer
			wrapped := fn.Function
			fn = rawFunction{}
			if !d.object(wrapped, outer, "an object {name, description, parameters}", fn.set) {
				return nil
			}
		}
		out[i].Name = d.str(fn.Name, p.at("name"))
		if d.err == nil && out[i].Name == "" {
			d.fail(p.at("name"), "a non-empty tool name", describeRaw(fn.Name))
		}
		out[i].Description = d.str(fn.Description, p.at("description"))
		if jsonPresent(fn.Parameters) && jsonKind(fn.Parameters) != '{' {
			d.fail(p.at("parameters"), "a JSON Schema object", describeRaw(fn.Parameters))
		}
		if jsonPresent(fn.Parameters) {
			out[i].Parameters = cloneRaw(fn.Parameters)
		}
	}
	if d.err != nil {
		return nil
	}
	return out
}

// hidden maps canonical hidden entries {kind, content, at}; at, when given,
// must be a message index 0..n (n: known only after the last message).
func (d *recordDecoder) hidden(raw json.RawMessage, at jsonPath, n int) []HiddenEntry {
	items := d.array(raw, at, "an array of hidden entries")
	if len(items) == 0 {
		return nil
	}
	out := make([]HiddenEntry, len(items))
	for i, item := range items {
		p := at.elem(i)
		var rh rawHidden
		if !d.object(item, p, "a hidden entry {kind, content, at}", rh.set) {
			return nil
		}
		out[i].Kind = d.str(rh.Kind, p.at("kind"))
		if d.err == nil && out[i].Kind == "" {
			d.fail(p.at("kind"), "a non-empty kind", describeRaw(rh.Kind))
		}
		out[i].Content = cloneRaw(rh.Content)
		if f := d.number(rh.At, p.at("at")); f != nil {
			if k := int(*f); float64(k) != *f || k < 0 || k > n {
				d.fail(p.at("at"), fmt.Sprintf("a message index from 0 to %d", n), describeRaw(rh.At))
			} else {
				out[i].At = &k
			}
		}
	}
	if d.err != nil {
		return nil
	}
	return out
}
