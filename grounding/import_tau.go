package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"
)

// rawTau is one element of a τ-bench historical-trajectories list.
type rawTau struct{ TaskID, Reward, Info, Traj, Trial json.RawMessage }

func (t *rawTau) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "task_id":
		t.TaskID = val
	case "reward":
		t.Reward = val
	case "info":
		t.Info = val
	case "traj":
		t.Traj = val
	case "trial":
		t.Trial = val
	}
}

// rawTauTask is info.task: the collector-only context of the task.
type rawTauTask struct{ Task, Instruction, Actions, UserID, Outputs json.RawMessage }

func (t *rawTauTask) set(key []byte, val json.RawMessage) {
	switch string(key) {
	case "task":
		t.Task = val
	case "instruction":
		t.Instruction = val
	case "actions":
		t.Actions = val
	case "user_id":
		t.UserID = val
	case "outputs":
		t.Outputs = val
	}
}

// Hidden entry kinds only the τ-bench importer produces.
const (
	// HiddenTaskUserID is the τ-bench task's user id (info.task.user_id).
	HiddenTaskUserID = "task_user_id"
	// HiddenReferenceOutputs are the outputs the task expects the agent to
	// say (info.task.outputs), when the task lists any.
	HiddenReferenceOutputs = "reference_outputs"
)

// tauSlack is how far past an element's start (beyond recordLimit) the
// decoder may read: separators before the element and one read-ahead chunk.
const (
	tauSlack     = 64 << 10
	tauReadChunk = 64 << 10
)

// countingReader feeds the τ-bench JSON decoder. It counts bytes and
// newlines, hands out at most tauReadChunk bytes per read (so the decoder's
// unread buffer stays small and cheap to count lines in), and refuses to
// read past limit, which stops the decoder from buffering an oversized
// element.
type tauReader struct {
	r     io.Reader
	n     int64 // bytes read
	lines int64 // '\n' read
	limit int64
}

func (c *tauReader) Read(p []byte) (int, error) {
	if c.n >= c.limit {
		return 0, errRecordTooLarge
	}
	p = p[:min(int64(len(p)), c.limit-c.n, tauReadChunk)]
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.lines += int64(bytes.Count(p[:n], []byte{'\n'}))
	return n, err
}

// newlineCounter counts newlines written to it, and separately those before
// the first byte that is neither a comma nor white space: the newlines
// between the decoder's position and the start of the next value.
type tauNewlineCounter struct {
	total, leading int64
	inValue        bool
}

func (w *tauNewlineCounter) Write(p []byte) (int, error) {
	if !w.inValue {
		end := bytes.IndexFunc(p, func(r rune) bool { return !strings.ContainsRune(", \t\r\n", r) })
		if end < 0 {
			end = len(p)
		} else {
			w.inValue = true
		}
		w.leading += int64(bytes.Count(p[:end], []byte{'\n'}))
	}
	w.total += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// lineAt returns the 1-based line of the decoder's position or, with
// next, of the start of the next value as far as the buffered input shows.
func tauLineAt(dec *json.Decoder, cr *tauReader, next bool) int {
	var w tauNewlineCounter
	if wt, ok := dec.Buffered().(io.WriterTo); ok {
		wt.WriteTo(&w) //nolint:errcheck // newlineCounter never fails
	}
	if !next {
		w.leading = 0
	}
	return int(1 + cr.lines - w.total + w.leading)
}

func tauNextLine(dec *json.Decoder, cr *tauReader) int { return tauLineAt(dec, cr, true) }

// readTau imports a τ-bench JSON array element by element with
// json.Decoder, so memory is bounded by the largest element: a 500 MB log
// never sits in memory at once.
func (imp *fileImport) readTau(br *bufio.Reader, yield func(*Trajectory, error) bool) {
	cr := &tauReader{r: br}
	dec := json.NewDecoder(cr)
	allow := func() { cr.limit = dec.InputOffset() + int64(recordLimit) + tauSlack }
	allow()
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			yield(nil, &ImportError{File: imp.file, Record: -1, Err: errEmptyFile})
			return
		}
		yield(nil, imp.tauStreamError(err, -1, tauNextLine(dec, cr)))
		return
	}
	if tok != json.Delim('[') {
		yield(nil, &ImportError{File: imp.file, Record: -1, Line: 1,
			Expected: "a JSON array of τ-bench records", Got: describeJSONToken(tok)})
		return
	}
	for record := 0; ; record++ {
		allow()
		if !dec.More() {
			break
		}
		line := tauNextLine(dec, cr)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			yield(nil, imp.tauStreamError(err, record, line))
			return
		}
		if len(raw) > recordLimit {
			yield(nil, tooLargeError(imp.file, record, line))
			return
		}
		// Exact line of the element's first byte: the decoder now stands
		// just past the element.
		line = tauLineAt(dec, cr, false) - bytes.Count(raw, []byte{'\n'})
		if !utf8.Valid(raw) {
			yield(nil, &ImportError{File: imp.file, Record: record, Line: line,
				Expected: "UTF-8 text", Got: invalidUTF8At(raw)})
			return
		}
		t, ierr := imp.tauRecord(raw, record, line)
		if ierr == nil {
			ierr = imp.unique(t, "task_id")
		}
		if ierr != nil {
			yield(nil, ierr)
			return
		}
		if !yield(t, nil) {
			return
		}
	}
	line := tauNextLine(dec, cr)
	if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		yield(nil, imp.tauStreamError(err, -1, line))
		return
	}
	line = tauNextLine(dec, cr)
	if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			yield(nil, imp.tauStreamError(err, -1, line))
			return
		}
		yield(nil, &ImportError{File: imp.file, Record: -1, Line: line,
			Expected: "the end of the input after the τ-bench array", Got: describeJSONToken(tok)})
	}
}

// tauStreamError reports a decoding failure while streaming the array.
func (imp *fileImport) tauStreamError(err error, record, line int) error {
	return imp.streamError(err, record, line, "array")
}

// streamError reports a decoding failure while streaming JSON values, what
// being the value the file ends inside of ("array" for τ-bench's list,
// "JSON value" for SWE documents).
func (imp *fileImport) streamError(err error, record, line int, what string) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, errRecordTooLarge):
		return tooLargeError(imp.file, record, line)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if what == "array" {
			return &ImportError{File: imp.file, Record: record, Line: line, Err: err,
				Expected: "a complete JSON array", Got: "truncated JSON (the input ends before the array is closed)"}
		}
		return &ImportError{File: imp.file, Record: record, Line: line, Err: err,
			Expected: "a complete " + what, Got: "truncated JSON (the input ends inside it: was the file cut short?)"}
	case errors.As(err, &se):
		expected, got := jsonSyntaxProblem(err)
		return &ImportError{File: imp.file, Record: record, Line: line, Expected: expected, Got: got, Err: err}
	}
	return withFileName(err, imp.file) // the reader failed, not the content
}

// describeToken names a json.Token for an error message.
func describeJSONToken(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			return "an object"
		case '[':
			return "an array"
		}
		return "'" + v.String() + "'"
	case string:
		return quoteShort(v)
	case nil:
		return "null"
	case bool:
		if v {
			return "a boolean (true)"
		}
		return "a boolean (false)"
	}
	return "a number"
}

// tauRecord maps one τ-bench element. Ids are "<file base>-task<task_id>-
// trial<trial>" (just "task<task_id>-trial<trial>" without a file name), so
// trajectories from several result files can share a run; the parent is
// "<file base>-task<task_id>", shared by the trials of one task.
func (imp *fileImport) tauRecord(rec json.RawMessage, record, line int) (*Trajectory, *ImportError) {
	d := imp.newDecoder(record, line)
	var raw rawTau
	if !d.object(rec, rootPath, "a τ-bench record {task_id, reward, info, traj, trial}", raw.set) {
		return nil, d.err
	}
	taskID := d.scalarID(raw.TaskID, rootPath.at("task_id"), true)
	trial := d.scalarID(raw.Trial, rootPath.at("trial"), false)
	if trial == "" {
		trial = "0"
	}
	if d.err == nil && jsonKind(raw.Traj) != '[' {
		d.fail(rootPath.at("traj"), "an array of chat messages", describeRaw(raw.Traj))
	}
	items := d.array(raw.Traj, rootPath.at("traj"), "an array of chat messages")
	t := &Trajectory{Source: Source{Format: string(FormatTauBench), File: imp.file, Index: record, Line: line}}
	t.Reward = d.number(raw.Reward, rootPath.at("reward"))
	if t.Reward != nil {
		ok := *t.Reward >= 1
		t.Success = &ok
	}
	successFrom := ""
	if ok, found := tauBaseSuccess(raw.Info); found {
		// Some τ-bench forks report a composite reward (success with an
		// efficiency penalty and a resilience bonus: 0.93) and keep the
		// binary outcome beside it; that outcome is the success.
		t.Success, successFrom = &ok, "info.reward_info.components.base_success"
	}
	t.Hidden = d.tauHidden(raw.Info)
	if d.err == nil {
		t.Messages = d.messages(items, rootPath.at("traj"))
	}
	if d.err != nil {
		return nil, d.err
	}
	prefix := ""
	if imp.base != "" {
		prefix = imp.base + "-"
	}
	t.ParentID = prefix + "task" + taskID
	t.ID = t.ParentID + "-trial" + trial
	t.Domain = tauDomain(imp.base, t.Messages)
	meta, err := json.Marshal(struct {
		TaskID      json.RawMessage `json:"task_id"`
		Trial       json.RawMessage `json:"trial,omitempty"`
		SuccessFrom string          `json:"success_from,omitempty"`
	}{raw.TaskID, cloneRaw(raw.Trial), successFrom})
	if err != nil {
		d.fail(rootPath, "a τ-bench record", err.Error())
		return nil, d.err
	}
	t.Meta = meta
	return t, nil
}

// tauBaseSuccess reads info.reward_info.components.base_success, the binary
// outcome some τ-bench forks report beside a composite reward: found is
// false when it is absent or not a number.
func tauBaseSuccess(info json.RawMessage) (success, found bool) {
	if !bytes.Contains(info, []byte(`"base_success"`)) {
		return false, false
	}
	var v struct {
		RewardInfo struct {
			Components struct {
				BaseSuccess *float64 `json:"base_success"`
			} `json:"components"`
		} `json:"reward_info"`
	}
	if err := json.Unmarshal(info, &v); err != nil || v.RewardInfo.Components.BaseSuccess == nil {
		return false, false
	}
	return *v.RewardInfo.Components.BaseSuccess >= 1, true
}

// scalarID renders a task id or trial (a number or a string) for an id.
func (d *recordDecoder) scalarID(raw json.RawMessage, at jsonPath, required bool) string {
	if d.err != nil {
		return ""
	}
	switch k := jsonKind(raw); {
	case k == '"':
		return unquoteJSON(raw)
	case k == '-' || k >= '0' && k <= '9':
		return string(bytes.TrimSpace(raw))
	case !required && !jsonPresent(raw):
		return ""
	}
	d.fail(at, "a number or a string", describeRaw(raw))
	return ""
}

// tauHidden collects the collector-only context of info.task: the user
// simulator's instruction, the reference actions, the task's user id and
// expected outputs.
func (d *recordDecoder) tauHidden(infoRaw json.RawMessage) []HiddenEntry {
	if d.err != nil || !jsonPresent(infoRaw) {
		return nil
	}
	var ri, rt rawTauTask
	info := rootPath.at("info")
	if !d.object(infoRaw, info, "an object", ri.set) || !jsonPresent(ri.Task) {
		return nil
	}
	if !d.object(ri.Task, info.at("task"), "an object {instruction, actions, user_id}", rt.set) {
		return nil
	}
	var out []HiddenEntry
	add := func(k string, raw json.RawMessage) {
		if jsonPresent(raw) {
			out = append(out, HiddenEntry{Kind: k, Content: cloneRaw(raw)})
		}
	}
	add(HiddenUserInstruction, rt.Instruction)
	add(HiddenReferenceActions, rt.Actions)
	add(HiddenTaskUserID, rt.UserID)
	if jsonKind(rt.Outputs) == '[' && !isEmptyJSONArray(rt.Outputs) {
		add(HiddenReferenceOutputs, rt.Outputs)
	}
	return out
}

func isEmptyJSONArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0
}

// tauDomain names the τ-bench domain from the file name, else from the
// policy in the first system message.
func tauDomain(base string, msgs []Message) string {
	lower := strings.ToLower(base)
	for _, dom := range []string{"airline", "retail"} {
		if strings.Contains(lower, dom) {
			return dom
		}
	}
	for _, m := range msgs {
		if m.Role != RoleSystem {
			continue
		}
		head := strings.ToLower(m.Content[:min(len(m.Content), 200)])
		for _, dom := range []string{"airline", "retail"} {
			if strings.Contains(head, dom+" agent policy") {
				return dom
			}
		}
		break
	}
	return ""
}
