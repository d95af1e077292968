package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// sweNotTrajectories is Read's answer to a metadata or results file.
func sweNotTrajectories(file string, f Format) *ImportError {
	what := "SWE-bench instance metadata"
	if f == FormatSWEResults {
		what = "SWE-bench evaluation results"
	}
	return &ImportError{File: file, Record: -1, Expected: "agent trajectories",
		Got: what + " (read it with ReadSWEInstances / ReadSWEResults)"}
}

// ReadSWEInstances decodes SWE-bench instance metadata from r: a JSON array
// of instances, JSON Lines, a single instance object, or an object with an
// "instances" array. Each instance needs an instance_id and a patch;
// FAIL_TO_PASS and PASS_TO_PASS may be JSON arrays or JSON-encoded strings
// (as the Hugging Face dataset has them). An id repeated with identical
// content is yielded once; repeated with different content it is an
// *ImportError. Problems stop the sequence with an *ImportError naming the
// record and field.
func ReadSWEInstances(r io.Reader, file string) iter.Seq2[*SWEInstance, error] {
	return func(yield func(*SWEInstance, error) bool) {
		br := bufio.NewReaderSize(r, readBufferSize)
		if p, _ := br.Peek(len(utf8BOM)); bytes.Equal(p, utf8BOM) {
			br.Discard(len(utf8BOM))
		}
		seen := map[string]string{} // id → canonical JSON, to compare repeats
		index := 0
		stop := false
		emit := func(raw json.RawMessage, line int, at jsonPath) bool {
			d := &recordDecoder{file: file, record: index, line: line}
			in := d.sweInstance(raw, at)
			if d.err != nil {
				yield(nil, d.err)
				return false
			}
			key, _ := json.Marshal(in)
			if prev, ok := seen[in.InstanceID]; ok {
				if prev != string(key) {
					yield(nil, &ImportError{File: file, Record: index, Line: line, Field: at.at("instance_id").String(),
						Expected: "an instance id unique within the file (or repeated with the same content)",
						Got:      quoteShort(in.InstanceID) + ", repeated with different content"})
					return false
				}
				index++
				return true
			}
			seen[in.InstanceID] = string(key)
			index++
			if !yield(in, nil) {
				stop = true
				return false
			}
			return true
		}
		err := sweForEachValue(br, file, func(raw json.RawMessage, record, line int) bool {
			switch jsonKind(raw) {
			case '[':
				for i, item := range jsonElements(raw) {
					if !emit(item, line, rootPath.elem(i)) {
						return false
					}
				}
				return true
			case '{':
				var wrapped json.RawMessage
				jsonMembers(raw, func(k []byte, v json.RawMessage) {
					if string(k) == "instances" {
						wrapped = v
					}
				})
				if jsonKind(wrapped) == '[' {
					base := rootPath.at("instances")
					for i, item := range jsonElements(wrapped) {
						if !emit(item, line, base.elem(i)) {
							return false
						}
					}
					return true
				}
				return emit(raw, line, rootPath)
			}
			d := &recordDecoder{file: file, record: record, line: line}
			d.fail(rootPath, "an instance object or an array of them", describeRaw(raw))
			yield(nil, d.err)
			return false
		})
		if err != nil && !stop {
			yield(nil, err)
		}
	}
}

// sweInstance maps one instance object.
func (d *recordDecoder) sweInstance(raw json.RawMessage, at jsonPath) *SWEInstance {
	o := d.decodeObject(raw, at, "an instance object {instance_id, patch, test_patch, FAIL_TO_PASS, PASS_TO_PASS}")
	if o == nil {
		return nil
	}
	in := &SWEInstance{
		InstanceID:       d.optString(o, "instance_id", at),
		Repo:             d.optString(o, "repo", at),
		BaseCommit:       d.optString(o, "base_commit", at),
		Patch:            d.optString(o, "patch", at),
		TestPatch:        d.optString(o, "test_patch", at),
		ProblemStatement: d.optString(o, "problem_statement", at),
	}
	if v := o["version"]; jsonKind(v) == '"' {
		in.Version = unquoteJSON(v)
	} else if jsonPresent(v) {
		in.Version = strings.TrimSpace(string(v))
	}
	if d.err == nil && in.InstanceID == "" {
		d.fail(at.at("instance_id"), "a non-empty instance id", describeRaw(o["instance_id"]))
	}
	if d.err == nil && !jsonPresent(o["patch"]) {
		d.fail(at.at("patch"), "the reference patch (a unified diff string)", describeRaw(o["patch"]))
	}
	in.FailToPass = d.testList(o["FAIL_TO_PASS"], at.at("FAIL_TO_PASS"))
	in.PassToPass = d.testList(o["PASS_TO_PASS"], at.at("PASS_TO_PASS"))
	if d.err != nil {
		return nil
	}
	return in
}

// testList decodes a list of test names given as a JSON array of strings or
// as a string holding one; absent or null is an empty list.
func (d *recordDecoder) testList(raw json.RawMessage, at jsonPath) []string {
	if d.err != nil || !jsonPresent(raw) {
		return []string{}
	}
	var inner json.RawMessage = raw
	if jsonKind(raw) == '"' {
		s := strings.TrimSpace(unquoteJSON(raw))
		if s == "" {
			return []string{}
		}
		if !json.Valid([]byte(s)) || jsonKind([]byte(s)) != '[' {
			d.fail(at, "a list of test names (a JSON array, or a string holding one)", describeRaw(raw))
			return nil
		}
		inner = json.RawMessage(s)
	}
	if jsonKind(inner) != '[' {
		d.fail(at, "a list of test names (a JSON array, or a string holding one)", describeRaw(raw))
		return nil
	}
	out := []string{}
	for i, item := range jsonElements(inner) {
		if jsonKind(item) != '"' {
			d.fail(at.elem(i), "a test name (a string)", describeRaw(item))
			return nil
		}
		out = append(out, unquoteJSON(item))
	}
	return out
}

// ReadSWEResults decodes SWE-bench evaluation results from r, in any of the
// shapes the harnesses write:
//
//   - a report keyed by instance id: {"<id>": {"resolved": true, …}, …};
//   - one instance's report.json without the key ({"resolved": …,
//     "tests_status": …}), whose instance id is taken from file
//     (…/logs/<id>/report.json);
//   - a results summary {"instances": [{"instance_id", "resolved"}]};
//   - an sb-cli report {"resolved_ids": […], "unresolved_ids": […], …};
//   - a JSON array or JSON Lines of {"instance_id", "resolved"};
//   - an OpenHands evaluation log with "Result for <id>: resolved: True".
//
// A result repeated for one instance keeps the last verdict.
func ReadSWEResults(r io.Reader, file string) iter.Seq2[SWEResult, error] {
	return func(yield func(SWEResult, error) bool) {
		br := bufio.NewReaderSize(r, readBufferSize)
		if p, _ := br.Peek(len(utf8BOM)); bytes.Equal(p, utf8BOM) {
			br.Discard(len(utf8BOM))
		}
		p, _ := br.Peek(min(br.Size(), readBufferSize))
		if trimmed := sweTrimStart(p); len(trimmed) > 0 && trimmed[0] != '{' && trimmed[0] != '[' {
			sweReadEvalLog(br, file, yield)
			return
		}
		var out []SWEResult
		index := map[string]int{}
		add := func(id string, resolved bool) {
			if i, ok := index[id]; ok {
				out[i].Resolved = resolved
				return
			}
			index[id] = len(out)
			out = append(out, SWEResult{InstanceID: id, Resolved: resolved})
		}
		var ierr *ImportError
		err := sweForEachValue(br, file, func(raw json.RawMessage, record, line int) bool {
			d := &recordDecoder{file: file, record: record, line: line}
			d.sweResults(raw, file, add)
			if d.err != nil {
				ierr = d.err
				return false
			}
			return true
		})
		switch {
		case ierr != nil:
			yield(SWEResult{}, ierr)
			return
		case err != nil:
			yield(SWEResult{}, err)
			return
		case len(out) == 0:
			yield(SWEResult{}, &ImportError{File: file, Record: -1, Expected: "at least one evaluation result", Got: "none"})
			return
		}
		for _, res := range out {
			if !yield(res, nil) {
				return
			}
		}
	}
}

func (d *recordDecoder) sweResults(raw json.RawMessage, file string, add func(string, bool)) {
	const want = `SWE-bench results: {"<instance_id>": {"resolved": …}}, a report.json, {"instances": [...]}, {"resolved_ids": [...]} or [{"instance_id", "resolved"}]`
	switch jsonKind(raw) {
	case '[':
		for i, item := range jsonElements(raw) {
			d.resultRow(item, rootPath.elem(i), add)
			if d.err != nil {
				return
			}
		}
		return
	case '{':
	default:
		d.fail(rootPath, want, describeRaw(raw))
		return
	}
	o := d.decodeObject(raw, rootPath, want)
	switch {
	case jsonPresent(o["resolved_ids"]) || jsonPresent(o["unresolved_ids"]):
		for _, key := range []string{"resolved_ids", "unresolved_ids", "empty_patch_ids", "error_ids"} {
			for i, item := range d.array(o[key], rootPath.at(key), "an array of instance ids") {
				if jsonKind(item) != '"' {
					d.fail(rootPath.at(key).idx(i), "an instance id (a string)", describeRaw(item))
					return
				}
				add(unquoteJSON(item), key == "resolved_ids")
			}
		}
	case jsonKind(o["instances"]) == '[':
		for i, item := range jsonElements(o["instances"]) {
			d.resultRow(item, rootPath.at("instances").idx(i), add)
			if d.err != nil {
				return
			}
		}
	case jsonPresent(o["resolved"]) && jsonPresent(o["instance_id"]):
		d.resultRow(raw, rootPath, add)
	case jsonPresent(o["resolved"]):
		id := sweInstanceFromPath(file, fileBaseName(file))
		if id == "" {
			d.fail(rootPath, "a report naming its instance: keyed by instance id, or a file at …/<instance_id>/report.json",
				"a single report.json without an instance id")
			return
		}
		b := d.boolean(o["resolved"], rootPath.at("resolved"))
		if b != nil {
			add(id, *b)
		}
	default:
		n := 0
		for _, k := range slices.Sorted(maps.Keys(o)) {
			v := o[k]
			if jsonKind(v) != '{' {
				continue
			}
			inner := d.decodeObject(v, rootPath.at(k), "an object")
			if !jsonPresent(inner["resolved"]) {
				continue
			}
			b := d.boolean(inner["resolved"], rootPath.at(k).field("resolved"))
			if b != nil {
				add(k, *b)
				n++
			}
		}
		if d.err == nil && n == 0 {
			d.fail(rootPath, want, "an object without resolved flags "+detectKeyList(sweKeysOf(o)))
		}
	}
}

func sweKeysOf(o map[string]json.RawMessage) []string {
	out := make([]string, 0, len(o))
	for k := range o {
		out = append(out, k)
	}
	return out
}

func (d *recordDecoder) resultRow(raw json.RawMessage, at jsonPath, add func(string, bool)) {
	o := d.decodeObject(raw, at, `a result {"instance_id", "resolved"}`)
	if o == nil {
		return
	}
	id := d.optString(o, "instance_id", at)
	if d.err == nil && id == "" {
		d.fail(at.at("instance_id"), "a non-empty instance id", describeRaw(o["instance_id"]))
		return
	}
	b := d.boolean(o["resolved"], at.at("resolved"))
	if d.err == nil && b == nil {
		d.fail(at.at("resolved"), "true or false", describeRaw(o["resolved"]))
		return
	}
	if b != nil {
		add(id, *b)
	}
}

// sweReadEvalLog reads "Result for <id>: resolved: True|False" lines.
func sweReadEvalLog(br *bufio.Reader, file string, yield func(SWEResult, error) bool) {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 64<<10), recordLimit)
	n := 0
	// OpenHands' output.swebench_eval.md lists instances under "## Resolved
	// Instances", "## Unresolved Instances", "## Empty Patch Instances",
	// … as "- [id](output.swebench_eval.logs/instance_id.log)". An id may
	// be listed twice (unresolved and empty patch); resolved wins, and each
	// id is reported once, in first-seen order.
	section := ""
	var ids []string
	resolved := map[string]bool{}
	for sc.Scan() {
		line := sc.Text()
		if m := sweReportSectionRe.FindStringSubmatch(line); m != nil {
			section = strings.ToLower(m[1])
			continue
		}
		if sweReportSections[section] {
			if m := sweReportItemRe.FindStringSubmatch(line); m != nil && LooksLikeInstanceID(m[1]) {
				if _, seen := resolved[m[1]]; !seen {
					ids = append(ids, m[1])
				}
				resolved[m[1]] = resolved[m[1]] || section == "resolved"
				continue
			}
		}
		m := sweOpenHandsResultRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id := strings.TrimPrefix(m[0], "Result for ")
		id = id[:strings.Index(id, ":")]
		n++
		if !yield(SWEResult{InstanceID: id, Resolved: m[1] == "True"}, nil) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		yield(SWEResult{}, fmt.Errorf("grounding: read %s: %w", file, err))
		return
	}
	for _, id := range ids {
		n++
		if !yield(SWEResult{InstanceID: id, Resolved: resolved[id]}, nil) {
			return
		}
	}
	if n == 0 {
		yield(SWEResult{}, &ImportError{File: file, Record: -1,
			Expected: "SWE-bench results (JSON), an OpenHands evaluation log with \"Result for <id>: resolved: True|False\" or an OpenHands output.swebench_eval.md",
			Got:      "text without such a line"})
	}
}

// sweReportSections are the sections of output.swebench_eval.md whose
// instances were evaluated (incomplete ones were not).
var sweReportSections = map[string]bool{"resolved": true, "unresolved": true, "empty patch": true, "error": true}

var (
	// sweReportSectionRe is a section heading of output.swebench_eval.md;
	// "## Summary" and other headings end the instance lists.
	sweReportSectionRe = regexp.MustCompile(`^##\s+(\w+(?:\s\w+)*?)(?:\s+Instances)?\s*$`)
	// sweReportItemRe is one listed instance: "- [id](link)" or "- id".
	sweReportItemRe = regexp.MustCompile(`^\s*[-*]\s+\[?([A-Za-z0-9][\w.\-]*__[\w.\-]+-\d+)\]?`)
)
