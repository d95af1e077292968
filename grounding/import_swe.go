package grounding

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The SWE importers map SWE-agent, mini-swe-agent and OpenHands logs onto
// the canonical trajectory (domain "swe"). Messages stay 1:1 with the
// source's message list where it has one (SWE-agent's history,
// mini-swe-agent's messages, an OpenHands completion log's messages plus
// its final response); actions become assistant tool calls ("bash" with
// {"command"}, or the scaffold's own editor tool with its arguments) and
// observations tool messages answering them. An observation is an error
// when the scaffold reports a non-zero exit code. Meta carries the
// SWEMeta fields: instance_id, exit_status, submission, model, scaffold.

// DomainSWE is the domain of every trajectory the SWE importers produce.
const DomainSWE = "swe"

// readSWE reads a stream of JSON values (one document, or JSON Lines) and
// maps each with the format's mapper.
func (imp *fileImport) readSWE(br *bufio.Reader, yield func(*Trajectory, error) bool) {
	err := sweForEachValue(br, imp.file, func(raw json.RawMessage, record, line int) bool {
		t, ierr := imp.sweRecord(raw, record, line)
		if ierr == nil {
			ierr = imp.unique(t, "instance_id")
		}
		if ierr != nil {
			yield(nil, ierr)
			return false
		}
		return yield(t, nil)
	})
	if err != nil {
		yield(nil, err)
	}
}

// sweForEachValue decodes consecutive JSON values from br (a document, or
// JSON Lines) and calls fn with each, its 0-based index and 1-based line.
// Memory is bounded by the largest value (recordLimit). A JSON array at the
// top is one value. It returns content problems as *ImportError and reader
// failures wrapped; fn returning false stops it quietly.
func sweForEachValue(br *bufio.Reader, file string, fn func(raw json.RawMessage, record, line int) bool) error {
	cr := &tauReader{r: br}
	dec := json.NewDecoder(cr)
	imp := &fileImport{file: file}
	record := 0
	for {
		cr.limit = dec.InputOffset() + int64(recordLimit) + tauSlack
		line := tauNextLine(dec, cr)
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			if record == 0 {
				return &ImportError{File: file, Record: -1, Err: errEmptyFile}
			}
			return nil
		}
		if err != nil {
			return imp.streamError(err, record, line, "JSON document")
		}
		if len(raw) > recordLimit {
			return tooLargeError(file, record, line)
		}
		if !utf8.Valid(raw) {
			return &ImportError{File: file, Record: record, Line: line, Expected: "UTF-8 text", Got: invalidUTF8At(raw)}
		}
		if !fn(raw, record, line) {
			return nil
		}
		record++
	}
}

// sweRecord maps one record of the file's format.
func (imp *fileImport) sweRecord(raw json.RawMessage, record, line int) (*Trajectory, *ImportError) {
	d := imp.newDecoder(record, line)
	var t *Trajectory
	switch imp.format {
	case FormatMiniSWE:
		t = d.miniSWE(raw, imp.base, imp.file)
	case FormatSWEAgent:
		t = d.sweAgent(raw, imp.base, imp.file)
	case FormatOpenHands:
		t = d.openHands(raw, imp.base, imp.file)
	}
	if d.err != nil {
		return nil, d.err
	}
	if t.ID == "" {
		t.ID = "record-" + strconv.Itoa(record)
	}
	if t.ParentID == "" {
		if m := SWEMetaOf(t); m.InstanceID != "" {
			t.ParentID = m.InstanceID
		}
	}
	t.Domain = DomainSWE
	t.Source = Source{Format: string(imp.format), File: imp.file, Index: record, Line: line}
	return t, nil
}

// key and idx are at and elem on a copy, so calls can chain
// (rootPath.key("a").field("b")); the copy escapes, which the SWE importers,
// one record per file, can afford.
func (p jsonPath) field(k string) jsonPath { return p.at(k) }
func (p jsonPath) idx(i int) jsonPath      { return p.elem(i) }

// decodeObject unmarshals raw into a map of raw members, reporting a
// non-object as an import problem at p.
func (d *recordDecoder) decodeObject(raw json.RawMessage, p jsonPath, want string) map[string]json.RawMessage {
	if d.err != nil {
		return nil
	}
	if jsonKind(raw) != '{' {
		d.fail(p, want, describeRaw(raw))
		return nil
	}
	out := map[string]json.RawMessage{}
	jsonMembers(raw, func(key []byte, val json.RawMessage) { out[string(key)] = val })
	return out
}

// text decodes content that is a string, null, or a list of text parts
// ({"type": "text", "text": …}; other part types are skipped).
func (d *recordDecoder) text(raw json.RawMessage, p jsonPath) (string, bool) {
	if d.err != nil {
		return "", false
	}
	switch jsonKind(raw) {
	case 0, 'n':
		return "", true
	case '"':
		return unquoteJSON(raw), false
	case '[':
		var b strings.Builder
		for k, part := range jsonElements(raw) {
			if jsonKind(part) == '"' {
				b.WriteString(unquoteJSON(part))
				continue
			}
			o := d.decodeObject(part, p.elem(k), `a text part {"type": "text", "text": …}`)
			if o == nil {
				return "", false
			}
			if jsonKind(o["text"]) == '"' {
				b.WriteString(unquoteJSON(o["text"]))
			}
		}
		return b.String(), false
	}
	d.fail(p, "a string, null or a list of text parts", describeRaw(raw))
	return "", false
}

// mustString decodes an optional string member; absent or null gives "".
func (d *recordDecoder) optString(o map[string]json.RawMessage, key string, p jsonPath) string {
	return d.str(o[key], p.at(key))
}

// sweArgs encodes a tool call's arguments object.
func sweArgs(kv ...string) json.RawMessage {
	m := make(map[string]string, len(kv)/2)
	keys := make([]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		if _, dup := m[kv[i]]; !dup {
			keys = append(keys, kv[i])
		}
		m[kv[i]] = kv[i+1]
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := sweMarshal(m[k])
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

func sweMarshal(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}

// sweMetaJSON encodes the SWE meta object; extra holds scaffold-specific
// fields kept verbatim (model stats, versions).
func sweMetaJSON(m SWEMeta, extra map[string]json.RawMessage) json.RawMessage {
	out := map[string]any{}
	if m.InstanceID != "" {
		out["instance_id"] = m.InstanceID
	}
	if m.ExitStatus != "" {
		out["exit_status"] = m.ExitStatus
	}
	if m.Submission != nil {
		out["submission"] = *m.Submission
	}
	if m.Model != "" {
		out["model"] = m.Model
	}
	if m.Scaffold != "" {
		out["scaffold"] = m.Scaffold
	}
	for k, v := range extra {
		if jsonPresent(v) {
			out[k] = v
		}
	}
	b, _ := sweMarshal(out)
	return b
}

// sweInstanceFromPath finds an instance id among the directories of a file
// path (.../llm_completions/django__django-11133/x.json) or in its base name.
func sweInstanceFromPath(file, base string) string {
	if b := strings.TrimSuffix(strings.TrimPrefix(base, "instance_"), ".traj"); LooksLikeInstanceID(b) {
		return b
	}
	parts := strings.FieldsFunc(file, func(r rune) bool { return r == '/' || r == '\\' })
	for i := len(parts) - 2; i >= 0; i-- {
		if p := strings.TrimPrefix(parts[i], "instance_"); LooksLikeInstanceID(p) {
			return p
		}
	}
	return ""
}

// ---- mini-swe-agent ----

var (
	sweMiniActionRe     = regexp.MustCompile("(?s)```bash\\s*\\n(.*?)\\n```")
	sweMiniReturnCodeRe = regexp.MustCompile(`<returncode>\s*(-?\d+)\s*</returncode>`)
)

// miniSWE maps a mini-swe-agent trajectory. An assistant message with
// exactly one ```bash block calls "bash" with that command; the next user
// message is its observation (a tool message, an error when its
// <returncode> is not 0). Format-error turns have no call, and the
// environment's complaint stays a user message.
func (d *recordDecoder) miniSWE(raw json.RawMessage, base, file string) *Trajectory {
	o := d.decodeObject(raw, rootPath, "a mini-swe-agent trajectory {info, messages, instance_id}")
	if o == nil {
		return nil
	}
	info := d.decodeObject(sweOrEmptyObject(o["info"]), rootPath.at("info"), "an object")
	items := d.array(o["messages"], rootPath.at("messages"), "an array of chat messages")
	if d.err == nil && jsonKind(o["messages"]) != '[' {
		d.fail(rootPath.at("messages"), "an array of chat messages", describeRaw(o["messages"]))
	}
	if d.err != nil {
		return nil
	}
	t := &Trajectory{}
	meta := SWEMeta{Scaffold: "mini-swe-agent"}
	meta.InstanceID = d.optString(o, "instance_id", rootPath)
	if meta.InstanceID == "" {
		meta.InstanceID = sweInstanceFromPath(file, base)
	}
	meta.ExitStatus = d.optString(info, "exit_status", rootPath.at("info"))
	if jsonKind(info["submission"]) == '"' {
		s := unquoteJSON(info["submission"])
		meta.Submission = &s
	}
	if cfg := d.decodeObject(sweOrEmptyObject(info["config"]), rootPath.at("info").field("config"), "an object"); cfg != nil {
		if jsonKind(cfg["model"]) == '{' {
			mo := map[string]json.RawMessage{}
			jsonMembers(cfg["model"], func(k []byte, v json.RawMessage) { mo[string(k)] = v })
			if jsonKind(mo["model_name"]) == '"' {
				meta.Model = unquoteJSON(mo["model_name"])
			}
		}
	}
	pending := "" // id of the call awaiting its observation
	msgs := make([]Message, len(items))
	for i, item := range items {
		p := rootPath.at("messages").idx(i)
		mo := d.decodeObject(item, p, "a message object")
		if mo == nil {
			return nil
		}
		m := &msgs[i]
		m.Index = i
		m.Role = internString(mo["role"], RoleSystem, RoleUser, RoleAssistant, RoleTool)
		if m.Role == "" {
			d.fail(p.at("role"), "one of system, user, assistant, tool", describeRaw(mo["role"]))
			return nil
		}
		m.Content, m.ContentNull = d.text(mo["content"], p.at("content"))
		switch m.Role {
		case RoleAssistant:
			pending = ""
			if acts := sweMiniActionRe.FindAllStringSubmatch(m.Content, -1); len(acts) == 1 {
				pending = "call_" + strconv.Itoa(i)
				m.ToolCalls = []ToolCall{{ID: pending, Name: "bash", Arguments: sweArgs("command", acts[0][1])}}
			}
		case RoleUser, RoleTool:
			if pending != "" && !sweIsFormatError(m.Content) {
				m.Role, m.ToolCallID, m.Name = RoleTool, pending, "bash"
				if rc := sweMiniReturnCodeRe.FindStringSubmatch(m.Content); rc != nil && rc[1] != "0" {
					m.Error = true
				}
				pending = ""
			} else if m.Role == RoleTool {
				m.Role = RoleUser // a tool message answering nothing is the environment talking
			}
		}
		if d.err != nil {
			return nil
		}
		if t.Request == "" && m.Role == RoleUser {
			t.Request = m.Content
		}
	}
	t.Messages = msgs
	t.ID = meta.InstanceID
	if t.ID == "" {
		t.ID = strings.TrimSuffix(base, ".traj")
	}
	extra := map[string]json.RawMessage{
		"model_stats":       info["model_stats"],
		"mini_version":      info["mini_version"],
		"trajectory_format": o["trajectory_format"],
	}
	t.Meta = sweMetaJSON(meta, extra)
	return t
}

func sweOrEmptyObject(raw json.RawMessage) json.RawMessage {
	if !jsonPresent(raw) {
		return json.RawMessage("{}")
	}
	return raw
}

// ---- SWE-agent ----

// sweAgentCommands are SWE-agent's own tools, parsed from text actions into
// structured calls; any other action is a "bash" call.
var sweAgentCommands = map[string][]string{
	"open":        {"path", "line_number"},
	"goto":        {"line_number"},
	"scroll_up":   nil,
	"scroll_down": nil,
	"create":      {"filename"},
	"find_file":   {"file_name", "dir"},
	"search_dir":  {"search_term", "dir"},
	"search_file": {"search_term", "file"},
	"submit":      nil,
	"filemap":     {"file_path"},
}

// sweAgentCall turns a SWE-agent text action into a tool call.
func sweAgentCall(id, action string) ToolCall {
	action = strings.TrimSpace(action)
	word, rest, _ := strings.Cut(action, " ")
	if i := strings.IndexByte(word, '\n'); i >= 0 {
		word, rest = word[:i], action[i+1:]
	}
	switch word {
	case "edit":
		// edit N:M\n<text>\nend_of_edit, or edit 'search' 'replace'
		head, body, _ := strings.Cut(rest, "\n")
		body = strings.TrimSuffix(strings.TrimRight(body, "\n"), "end_of_edit")
		if a, b, ok := strings.Cut(strings.TrimSpace(head), ":"); ok && sweIsDigits(a) && sweIsDigits(b) {
			return ToolCall{ID: id, Name: "edit", Arguments: sweArgs("start_line", a, "end_line", b, "replacement", strings.TrimSuffix(body, "\n"))}
		}
		words := sweParseShell(rest)
		if len(words) > 0 && len(words[0].Args) >= 2 {
			return ToolCall{ID: id, Name: "edit", Arguments: sweArgs("search", words[0].Args[0], "replace", words[0].Args[1])}
		}
		return ToolCall{ID: id, Name: "edit", Arguments: sweArgs("replacement", rest)}
	case "insert":
		head, body, _ := strings.Cut(rest, "\n")
		body = strings.TrimSuffix(strings.TrimRight(body, "\n"), "end_of_insert")
		if sweIsDigits(strings.TrimSpace(head)) {
			return ToolCall{ID: id, Name: "insert", Arguments: sweArgs("line_number", strings.TrimSpace(head), "text", strings.TrimSuffix(body, "\n"))}
		}
		words := sweParseShell(rest)
		if len(words) > 0 && len(words[0].Args) >= 1 {
			return ToolCall{ID: id, Name: "insert", Arguments: sweArgs("text", words[0].Args[0])}
		}
	}
	if params, ok := sweAgentCommands[word]; ok && !strings.Contains(rest, "\n") {
		var args []string
		if cmds := sweParseShell(rest); len(cmds) > 0 {
			args = cmds[0].Args
		}
		kv := []string{}
		for i, name := range params {
			if i < len(args) {
				kv = append(kv, name, args[i])
			}
		}
		return ToolCall{ID: id, Name: word, Arguments: sweArgs(kv...)}
	}
	return ToolCall{ID: id, Name: "bash", Arguments: sweArgs("command", action)}
}

// sweAgent maps a SWE-agent .traj. Messages come from history, 1:1:
// demonstrations (is_demo) become user messages, assistant messages call
// the tool their function call or text action names, and the user or tool
// message after an action is its observation. Without a history the steps
// of "trajectory" are used (an assistant and a tool message each).
func (d *recordDecoder) sweAgent(raw json.RawMessage, base, file string) *Trajectory {
	o := d.decodeObject(raw, rootPath, "a SWE-agent trajectory {trajectory, history, info}")
	if o == nil {
		return nil
	}
	info := d.decodeObject(sweOrEmptyObject(o["info"]), rootPath.at("info"), "an object")
	if d.err != nil {
		return nil
	}
	meta := SWEMeta{Scaffold: "swe-agent"}
	// SWE-agent names each trajectory file after its instance.
	meta.InstanceID = strings.TrimSuffix(base, ".traj")
	meta.ExitStatus = d.optString(info, "exit_status", rootPath.at("info"))
	if jsonKind(info["submission"]) == '"' {
		s := unquoteJSON(info["submission"])
		meta.Submission = &s
	}
	t := &Trajectory{}
	history := d.array(o["history"], rootPath.at("history"), "an array of chat messages")
	steps := d.array(o["trajectory"], rootPath.at("trajectory"), "an array of steps")
	if d.err != nil {
		return nil
	}
	if len(history) == 0 && len(steps) == 0 {
		d.fail(rootPath, "a SWE-agent trajectory with a history or trajectory list", "neither (or both empty)")
		return nil
	}
	if len(history) > 0 {
		t.Messages = d.sweAgentHistory(history)
	} else {
		t.Messages = d.sweAgentSteps(steps)
	}
	if d.err != nil {
		return nil
	}
	for _, m := range t.Messages {
		if m.Role == RoleUser && m.HiddenKind == "" {
			t.Request = m.Content
			break
		}
	}
	for i := range t.Messages {
		t.Messages[i].HiddenKind = ""
	}
	t.ID = meta.InstanceID
	if t.ID == "" {
		t.ID = strings.TrimSuffix(base, ".traj")
	}
	extra := map[string]json.RawMessage{"model_stats": info["model_stats"], "environment": o["environment"]}
	t.Meta = sweMetaJSON(meta, extra)
	return t
}

func (d *recordDecoder) sweAgentHistory(items []json.RawMessage) []Message {
	msgs := make([]Message, len(items))
	pending := ""
	list := rootPath.at("history")
	for i, item := range items {
		p := list.elem(i)
		mo := d.decodeObject(item, p, "a message object")
		if mo == nil {
			return nil
		}
		m := &msgs[i]
		m.Index = i
		m.Role = internString(mo["role"], RoleSystem, RoleUser, RoleAssistant, RoleTool)
		if m.Role == "" {
			d.fail(p.at("role"), "one of system, user, assistant, tool", describeRaw(mo["role"]))
			return nil
		}
		m.Content, m.ContentNull = d.text(mo["content"], p.at("content"))
		demo := jsonKind(mo["is_demo"]) == 't'
		switch {
		case demo:
			// A demonstration is context the model was shown, not its action.
			m.Role = RoleUser
			m.HiddenKind = "demo" // marks it for the Request search only
		case m.Role == RoleAssistant:
			pending = ""
			calls := d.array(mo["tool_calls"], p.at("tool_calls"), "an array of tool calls")
			if len(calls) > 0 {
				for k, rc := range calls {
					c := d.toolCallLoose(rc, p.at("tool_calls").idx(k))
					if c.ID == "" {
						c.ID = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(k)
					}
					m.ToolCalls = append(m.ToolCalls, c)
				}
				pending = m.ToolCalls[len(m.ToolCalls)-1].ID
			} else if action := d.optString(mo, "action", p); strings.TrimSpace(action) != "" {
				pending = "call_" + strconv.Itoa(i)
				m.ToolCalls = []ToolCall{sweAgentCall(pending, action)}
			}
		case m.Role == RoleUser || m.Role == RoleTool:
			if pending != "" {
				m.Role, m.ToolCallID = RoleTool, pending
				pending = ""
			} else if m.Role == RoleTool {
				m.Role = RoleUser
			}
		}
		if d.err != nil {
			return nil
		}
	}
	// Name each observation after the tool it answers.
	names := map[string]string{}
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			names[c.ID] = c.Name
		}
		if msgs[i].Role == RoleTool {
			msgs[i].Name = names[msgs[i].ToolCallID]
		}
	}
	return msgs
}

// toolCallLoose maps an OpenAI-shaped call whose arguments are a JSON
// string or object; an undecodable string is kept in RawArguments.
func (d *recordDecoder) toolCallLoose(raw json.RawMessage, p jsonPath) ToolCall {
	o := d.decodeObject(raw, p, "a tool call object")
	if o == nil {
		return ToolCall{}
	}
	c := ToolCall{ID: d.optString(o, "id", p)}
	fn := o
	fp := p
	if jsonKind(o["function"]) == '{' {
		fp = p.at("function")
		fn = d.decodeObject(o["function"], fp, "an object {name, arguments}")
	}
	c.Name = d.optString(fn, "name", fp)
	switch args := fn["arguments"]; jsonKind(args) {
	case '"':
		if s := unquoteJSON(args); json.Valid([]byte(s)) {
			c.Arguments = json.RawMessage(s)
		} else {
			c.RawArguments = s
		}
	case '{':
		c.Arguments = cloneRaw(args)
	}
	if d.err == nil && c.Name == "" {
		d.fail(fp.at("name"), "a non-empty tool name", describeRaw(fn["name"]))
	}
	return c
}

func (d *recordDecoder) sweAgentSteps(items []json.RawMessage) []Message {
	var msgs []Message
	list := rootPath.at("trajectory")
	for i, item := range items {
		p := list.elem(i)
		so := d.decodeObject(item, p, "a step {action, observation, response, thought}")
		if so == nil {
			return nil
		}
		id := "call_" + strconv.Itoa(i)
		content := d.optString(so, "response", p)
		if content == "" {
			content = d.optString(so, "thought", p)
		}
		action := d.optString(so, "action", p)
		a := Message{Index: len(msgs), Role: RoleAssistant, Content: content}
		if strings.TrimSpace(action) != "" {
			a.ToolCalls = []ToolCall{sweAgentCall(id, action)}
		}
		msgs = append(msgs, a)
		if len(a.ToolCalls) > 0 {
			msgs = append(msgs, Message{Index: len(msgs), Role: RoleTool, ToolCallID: id, Name: a.ToolCalls[0].Name,
				Content: d.optString(so, "observation", p)})
		}
	}
	return msgs
}

// ---- OpenHands ----

var sweOpenHandsExitRe = regexp.MustCompile(`\[Command finished with exit code (-?\d+)\]`)

// openHands maps the three OpenHands shapes: an LLM completion log
// ({messages, response}), an output.jsonl record ({instance_id, history,
// test_result}) and a bare event list.
func (d *recordDecoder) openHands(raw json.RawMessage, base, file string) *Trajectory {
	switch jsonKind(raw) {
	case '[':
		return d.openHandsEvents(jsonElements(raw), rootPath, SWEMeta{Scaffold: "openhands", InstanceID: sweInstanceFromPath(file, base)}, base)
	case '{':
	default:
		d.fail(rootPath, "an OpenHands completion log, output record or event list", describeRaw(raw))
		return nil
	}
	o := d.decodeObject(raw, rootPath, "an object")
	if o == nil {
		return nil
	}
	if jsonPresent(o["history"]) {
		meta := SWEMeta{Scaffold: "openhands"}
		meta.InstanceID = d.optString(o, "instance_id", rootPath)
		if meta.InstanceID == "" {
			meta.InstanceID = sweInstanceFromPath(file, base)
		}
		if jsonKind(o["test_result"]) == '{' {
			tr := d.decodeObject(o["test_result"], rootPath.at("test_result"), "an object")
			if jsonKind(tr["git_patch"]) == '"' {
				s := unquoteJSON(tr["git_patch"])
				meta.Submission = &s
			}
		}
		if jsonKind(o["metadata"]) == '{' {
			md := d.decodeObject(o["metadata"], rootPath.at("metadata"), "an object")
			if jsonKind(md["llm_config"]) == '{' {
				lc := d.decodeObject(md["llm_config"], rootPath.at("metadata").field("llm_config"), "an object")
				meta.Model = d.optString(lc, "model", rootPath)
			}
		}
		if e := d.optString(o, "error", rootPath); e != "" {
			meta.ExitStatus = e
		}
		items := d.array(o["history"], rootPath.at("history"), "an array of events")
		t := d.openHandsEvents(items, rootPath.at("history"), meta, base)
		if t != nil && jsonKind(o["instance"]) == '{' {
			t.Hidden = append(t.Hidden, HiddenEntry{Kind: "swe_instance", Content: cloneRaw(o["instance"])})
		}
		return t
	}
	return d.openHandsCompletion(o, base, file)
}

// openHandsCompletion maps an LLM completion log: its messages, then the
// final response's message (the last action, usually finish).
func (d *recordDecoder) openHandsCompletion(o map[string]json.RawMessage, base, file string) *Trajectory {
	items := d.array(o["messages"], rootPath.at("messages"), "an array of chat messages")
	if d.err == nil && len(items) == 0 {
		d.fail(rootPath.at("messages"), "a non-empty array of chat messages", describeRaw(o["messages"]))
	}
	if d.err != nil {
		return nil
	}
	meta := SWEMeta{Scaffold: "openhands", InstanceID: sweInstanceFromPath(file, base)}
	var final json.RawMessage
	if jsonKind(o["response"]) == '{' {
		resp := d.decodeObject(o["response"], rootPath.at("response"), "an object")
		meta.Model = d.optString(resp, "model", rootPath.at("response"))
		if choices := d.array(resp["choices"], rootPath.at("response").field("choices"), "an array"); len(choices) > 0 {
			ch := d.decodeObject(choices[0], rootPath.at("response").field("choices").idx(0), "an object")
			final = ch["message"]
		}
	}
	msgs := make([]Message, 0, len(items)+1)
	list := rootPath.at("messages")
	add := func(item json.RawMessage, p jsonPath) bool {
		mo := d.decodeObject(item, p, "a message object")
		if mo == nil {
			return false
		}
		m := Message{Index: len(msgs)}
		m.Role = internString(mo["role"], RoleSystem, RoleUser, RoleAssistant, RoleTool)
		if m.Role == "" {
			d.fail(p.at("role"), "one of system, user, assistant, tool", describeRaw(mo["role"]))
			return false
		}
		m.Content, m.ContentNull = d.text(mo["content"], p.at("content"))
		for k, rc := range d.array(mo["tool_calls"], p.at("tool_calls"), "an array of tool calls") {
			c := d.toolCallLoose(rc, p.at("tool_calls").idx(k))
			if c.ID == "" {
				c.ID = "call_" + strconv.Itoa(len(msgs)) + "_" + strconv.Itoa(k)
			}
			m.ToolCalls = append(m.ToolCalls, c)
		}
		if m.Role == RoleTool {
			m.ToolCallID = d.optString(mo, "tool_call_id", p)
			m.Name = d.optString(mo, "name", p)
			m.Error = sweOpenHandsError(m.Content)
		}
		msgs = append(msgs, m)
		return d.err == nil
	}
	for i, item := range items {
		if !add(item, list.elem(i)) {
			return nil
		}
	}
	if jsonKind(final) == '{' && !add(final, rootPath.at("response").field("choices").idx(0).field("message")) {
		return nil
	}
	// A tool message must answer a call; the completion log only ever
	// answers the calls it shows, but be tolerant of one that does not.
	called := map[string]bool{}
	finished := false
	for i := range msgs {
		for _, c := range msgs[i].ToolCalls {
			called[c.ID] = true
			if c.Name == "finish" {
				finished = true
			}
		}
		if msgs[i].Role == RoleTool && !called[msgs[i].ToolCallID] {
			msgs[i].Role, msgs[i].ToolCallID = RoleUser, ""
		}
	}
	if finished {
		meta.ExitStatus = "finished"
	} else {
		meta.ExitStatus = "unfinished"
	}
	t := &Trajectory{Messages: msgs}
	for _, m := range msgs {
		if m.Role == RoleUser {
			t.Request = m.Content
			break
		}
	}
	t.Tools = d.tools(sweKwargsTools(o["kwargs"]), rootPath.at("kwargs").field("tools"))
	t.ID = meta.InstanceID
	if t.ID == "" {
		t.ID = base
	}
	t.Meta = sweMetaJSON(meta, map[string]json.RawMessage{"cost": o["cost"], "timestamp": o["timestamp"]})
	return t
}

func sweKwargsTools(kwargs json.RawMessage) json.RawMessage {
	if jsonKind(kwargs) != '{' {
		return nil
	}
	var tools json.RawMessage
	jsonMembers(kwargs, func(k []byte, v json.RawMessage) {
		if string(k) == "tools" {
			tools = v
		}
	})
	return tools
}

// sweOpenHandsError reads OpenHands' exit-code sweFooter and editor errors.
func sweOpenHandsError(content string) bool {
	if m := sweOpenHandsExitRe.FindStringSubmatch(content); m != nil {
		return m[1] != "0"
	}
	return strings.HasPrefix(strings.TrimSpace(content), "ERROR:")
}

// sweOpenHandsActionTools maps event actions to the tool the agent called when
// the event lacks tool_call_metadata.
var sweOpenHandsActionTools = map[string]string{
	"run": "execute_bash", "run_ipython": "execute_ipython_cell", "read": "str_replace_editor",
	"edit": "str_replace_editor", "write": "str_replace_editor", "think": "think", "finish": "finish",
	"browse": "browser", "browse_interactive": "browser", "delegate": "delegate",
}

// openHandsEvents maps an event stream. System and message actions become
// system, user and assistant messages; other agent actions become assistant
// tool calls (the call recorded in tool_call_metadata when present), and
// observations tool messages answering the action they are caused by.
// Bookkeeping events (state changes, recalls, null observations) carry no
// message and are skipped.
func (d *recordDecoder) openHandsEvents(items []json.RawMessage, list jsonPath, meta SWEMeta, base string) *Trajectory {
	if d.err != nil {
		return nil
	}
	t := &Trajectory{}
	calls := map[string]string{} // event id → call id
	names := map[string]string{}
	finished := false
	for i, item := range items {
		p := list.elem(i)
		e := d.decodeObject(item, p, "an event object")
		if e == nil {
			return nil
		}
		id := strings.TrimSpace(string(e["id"]))
		source := d.optString(e, "source", p)
		args := map[string]json.RawMessage{}
		if jsonKind(e["args"]) == '{' {
			jsonMembers(e["args"], func(k []byte, v json.RawMessage) { args[string(k)] = v })
		}
		argStr := func(k string) string {
			if jsonKind(args[k]) == '"' {
				return unquoteJSON(args[k])
			}
			return ""
		}
		if action := d.optString(e, "action", p); action != "" {
			switch action {
			case "system":
				t.Messages = append(t.Messages, Message{Role: RoleSystem, Content: sweFirst(argStr("content"), d.optString(e, "message", p))})
				continue
			case "message":
				role := RoleAssistant
				if source == "user" {
					role = RoleUser
				}
				t.Messages = append(t.Messages, Message{Role: role, Content: sweFirst(argStr("content"), d.optString(e, "message", p))})
				continue
			case "recall", "change_agent_state", "null":
				continue
			}
			if source != "agent" {
				continue
			}
			c := d.openHandsCall(e, action, args)
			if c.ID == "" {
				c.ID = "event_" + id
			}
			if c.Name == "finish" {
				finished = true
			}
			calls[id] = c.ID
			names[c.ID] = c.Name
			content := argStr("thought")
			t.Messages = append(t.Messages, Message{Role: RoleAssistant, Content: content, ContentNull: content == "", ToolCalls: []ToolCall{c}})
			continue
		}
		obs := d.optString(e, "observation", p)
		if obs == "" || obs == "null" || obs == "agent_state_changed" || obs == "recall" {
			continue
		}
		cause := strings.TrimSpace(string(e["cause"]))
		callID, ok := calls[cause]
		if !ok {
			continue
		}
		delete(calls, cause)
		content := d.optString(e, "content", p)
		errFlag := obs == "error"
		if jsonKind(e["extras"]) == '{' {
			ex := map[string]json.RawMessage{}
			jsonMembers(e["extras"], func(k []byte, v json.RawMessage) { ex[string(k)] = v })
			if jsonKind(ex["metadata"]) == '{' {
				jsonMembers(ex["metadata"], func(k []byte, v json.RawMessage) {
					if string(k) == "exit_code" {
						if n := strings.TrimSpace(string(v)); n != "0" && n != "null" && n != "" {
							errFlag = true
						}
					}
				})
			}
			if jsonKind(ex["exit_code"]) != 0 {
				if n := strings.TrimSpace(string(ex["exit_code"])); n != "0" && n != "null" {
					errFlag = true
				}
			}
		}
		t.Messages = append(t.Messages, Message{Role: RoleTool, ToolCallID: callID, Name: names[callID], Content: content, Error: errFlag})
	}
	if d.err != nil {
		return nil
	}
	for i := range t.Messages {
		t.Messages[i].Index = i
	}
	for _, m := range t.Messages {
		if m.Role == RoleUser {
			t.Request = m.Content
			break
		}
	}
	if meta.ExitStatus == "" {
		if finished {
			meta.ExitStatus = "finished"
		} else {
			meta.ExitStatus = "unfinished"
		}
	} else if finished {
		meta.ExitStatus = "finished (" + meta.ExitStatus + ")"
	}
	t.ID = meta.InstanceID
	if t.ID == "" {
		t.ID = base
	}
	t.Meta = sweMetaJSON(meta, nil)
	return t
}

// openHandsCall is the tool call behind an action event: the one recorded
// in tool_call_metadata.model_response when present, else one built from
// the action's args.
func (d *recordDecoder) openHandsCall(e map[string]json.RawMessage, action string, args map[string]json.RawMessage) ToolCall {
	if jsonKind(e["tool_call_metadata"]) == '{' {
		md := map[string]json.RawMessage{}
		jsonMembers(e["tool_call_metadata"], func(k []byte, v json.RawMessage) { md[string(k)] = v })
		id := ""
		if jsonKind(md["tool_call_id"]) == '"' {
			id = unquoteJSON(md["tool_call_id"])
		}
		if c, ok := sweResponseCall(md["model_response"], id); ok {
			return c
		}
		if jsonKind(md["function_name"]) == '"' {
			return ToolCall{ID: id, Name: unquoteJSON(md["function_name"]), Arguments: sweArgsObject(args)}
		}
	}
	name := sweOpenHandsActionTools[action]
	if name == "" {
		name = action
	}
	a := sweArgsObject(args)
	switch action {
	case "run":
		a = sweArgs("command", sweRawString(args["command"]))
	case "read":
		a = sweArgs("command", "view", "path", sweRawString(args["path"]))
	case "edit", "write":
		cmd := sweRawString(args["command"])
		if cmd == "" {
			cmd = "str_replace"
			if sweRawString(args["content"]) != "" || action == "write" {
				cmd = "create"
			}
		}
		a = sweArgs("command", cmd, "path", sweRawString(args["path"]), "old_str", sweRawString(args["old_str"]),
			"new_str", sweRawString(args["new_str"]), "file_text", sweFirst(sweRawString(args["file_text"]), sweRawString(args["content"])))
	case "run_ipython":
		a = sweArgs("code", sweRawString(args["code"]))
	}
	return ToolCall{Name: name, Arguments: a}
}

func sweRawString(raw json.RawMessage) string {
	if jsonKind(raw) == '"' {
		return unquoteJSON(raw)
	}
	return ""
}

func sweArgsObject(args map[string]json.RawMessage) json.RawMessage {
	b, err := sweMarshal(args)
	if err != nil {
		return nil
	}
	return b
}

// sweResponseCall finds the call with id in a litellm response's first
// choice.
func sweResponseCall(resp json.RawMessage, id string) (ToolCall, bool) {
	if jsonKind(resp) != '{' || id == "" {
		return ToolCall{}, false
	}
	var r struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(resp, &r) != nil {
		return ToolCall{}, false
	}
	for _, ch := range r.Choices {
		for _, c := range ch.Message.ToolCalls {
			if c.ID != id {
				continue
			}
			tc := ToolCall{ID: id, Name: c.Function.Name}
			switch jsonKind(c.Function.Arguments) {
			case '"':
				if s := unquoteJSON(c.Function.Arguments); json.Valid([]byte(s)) {
					tc.Arguments = json.RawMessage(s)
				} else {
					tc.RawArguments = s
				}
			case '{':
				tc.Arguments = cloneRaw(c.Function.Arguments)
			}
			return tc, true
		}
	}
	return ToolCall{}, false
}
