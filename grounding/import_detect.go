package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

const expectedFormats = "a JSON array of τ-bench records, JSON Lines of canonical/OpenAI-chat trajectories, or a SWE-agent, mini-swe-agent or OpenHands trajectory"

// Detect names the format of the input at the start of r from its content,
// without consuming anything:
//   - SWE-agent, mini-swe-agent and OpenHands logs (detectSWE), first;
//   - a JSON array whose first element has "traj": FormatTauBench;
//   - JSON Lines whose first record has tool calls in the OpenAI shape
//     ({"type": "function", "function": {...}}), or no "id": FormatOpenAI;
//   - JSON Lines whose first record has an "id" and "messages":
//     FormatCanonical.
//
// It looks at most at what r can buffer (Read uses a 1 MiB buffer). When that
// is not enough to decide, because the first record is larger or is cut or
// broken, it decides from what it saw, leaving the details to the importer,
// which reports precisely what is wrong: an array whose first element is an
// object with τ-bench keys (task_id, trial, reward, info) but no "traj" yet,
// or an object larger than the window, is τ-bench; a JSON object with an "id" and "messages" is canonical, one with
// "messages" only is OpenAI-chat, and a record larger than the window is
// OpenAI-chat too, the importer that also accepts canonical records.
//
// Anything else is an *ImportError saying what was expected; an empty input
// is the error "file is empty". A failure of r itself is returned as is.
func Detect(r *bufio.Reader) (Format, error) {
	p, err := r.Peek(min(r.Size(), readBufferSize))
	complete := false // p holds the whole input
	if err != nil {
		if !errors.Is(err, io.EOF) {
			return "", err
		}
		complete = true
	}
	p = bytes.TrimLeft(bytes.TrimPrefix(p, utf8BOM), " \t\r\n")
	if len(p) == 0 {
		if complete {
			return "", &ImportError{Record: -1, Err: errEmptyFile}
		}
		return "", &ImportError{Record: -1, Expected: expectedFormats, Got: "only white space in the first MiB"}
	}
	if f, ok := detectSWE(p, complete); ok {
		return f, nil
	}
	if what := binaryKind(p); what != "" {
		return "", &ImportError{Record: -1, Expected: expectedFormats, Got: what}
	}
	switch p[0] {
	case '[':
		return detectArray(p, complete)
	case '{':
		return detectLines(p, complete)
	}
	return "", &ImportError{Record: -1, Line: 1, Expected: expectedFormats, Got: inputSnippet(p)}
}

// detectArray decides whether an array is a τ-bench list.
func detectArray(p []byte, complete bool) (Format, error) {
	var (
		elems     int
		notObject string
		keys      []string
		traj      bool
	)
	ended, err := walkJSONPaths(p, func(trail []string, tok json.Token) bool {
		switch {
		case len(trail) == 1:
			elems++
			if elems > 1 {
				return true // the first element ended without "traj"
			}
			if tok != json.Delim('{') {
				notObject = describeJSONToken(tok)
				return true
			}
		case len(trail) == 2:
			keys = append(keys, trail[1])
			traj = traj || trail[1] == "traj"
			return traj
		}
		return false
	})
	switch {
	case traj:
		return FormatTauBench, nil
	case slices.Contains(keys, "messages") && (elems > 1 || ended || !slices.Contains(keys, "task_id")):
		// Canonical or OpenAI-chat records, but in an array: they go one
		// per line. (A "reward" would otherwise send it to the τ-bench
		// importer, which would ask for a task_id.)
		return "", &ImportError{Record: -1, Expected: expectedFormats,
			Got: "a JSON array of records with \"messages\": canonical and OpenAI-chat trajectories go one per line (JSON Lines), not in an array"}
	case notObject != "":
		return "", &ImportError{Record: -1, Expected: expectedFormats, Got: "a JSON array whose first element is " + notObject}
	case ended && elems == 0:
		return FormatTauBench, nil // an empty τ-bench list
	case hasTauKeys(keys):
		// A τ-bench-looking record without "traj", or cut or broken
		// inside: the τ-bench importer says exactly what is wrong.
		return FormatTauBench, nil
	case elems > 1 || ended:
		return "", &ImportError{Record: -1, Expected: expectedFormats,
			Got: "a JSON array whose first element has no \"traj\" " + detectKeyList(keys)}
	case elems == 1 && !complete && isTruncated(err):
		// The first element is bigger than the window.
		return FormatTauBench, nil
	}
	return "", &ImportError{Record: -1, Expected: expectedFormats, Got: detectBrokenJSON("JSON array", err)}
}

// detectLines decides between the two JSON Lines formats from the first
// line.
func detectLines(p []byte, complete bool) (Format, error) {
	multiline := false
	if i := bytes.IndexByte(p, '\n'); i >= 0 {
		p, complete, multiline = p[:i], true, len(bytes.TrimSpace(p[i:])) > 0
	}
	var (
		hasID, hasMessages, openAI bool
		keys                       []string
	)
	ended, err := walkJSONPaths(p, func(trail []string, tok json.Token) bool {
		if len(trail) == 1 {
			keys = append(keys, trail[0])
			switch trail[0] {
			case "id":
				s, ok := tok.(string)
				hasID = ok && s != ""
			case "messages":
				// Any value: if it is not an array, the importer says so
				// for the field ("messages: expected an array").
				hasMessages = true
			}
		}
		if len(trail) == 5 && trail[0] == "messages" && trail[2] == "tool_calls" &&
			(trail[4] == "function" || trail[4] == "type") {
			openAI = true
			return true
		}
		return false
	})
	switch {
	case openAI:
		return FormatOpenAI, nil
	case hasID && hasMessages:
		return FormatCanonical, nil
	case hasMessages || !complete && isTruncated(err):
		// No id (OpenAI-chat), or a first record larger than the window:
		// the OpenAI-chat importer accepts canonical records too.
		return FormatOpenAI, nil
	case ended:
		return "", &ImportError{Record: -1, Line: 1, Expected: expectedFormats,
			Got: "a JSON object without \"messages\" " + detectKeyList(keys)}
	case multiline && isTruncated(err):
		return "", &ImportError{Record: -1, Line: 1, Expected: expectedFormats,
			Got: "a JSON object that does not end on its first line (JSON Lines needs one record per line)"}
	}
	return "", &ImportError{Record: -1, Line: 1, Expected: expectedFormats, Got: detectBrokenJSON("JSON object", err)}
}

func isTruncated(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func hasTauKeys(keys []string) bool {
	for _, k := range keys {
		switch k {
		case "task_id", "trial", "reward", "info":
			return true
		}
	}
	return false
}

func detectKeyList(keys []string) string {
	if len(keys) == 0 {
		return "(no keys)"
	}
	const max = 6
	s := strings.Join(keys[:min(len(keys), max)], ", ")
	if len(keys) > max {
		s += ", …"
	}
	return "(keys: " + s + ")"
}

func detectBrokenJSON(what string, err error) string {
	if isTruncated(err) || err == nil {
		return "an incomplete " + what
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return "a " + what + " that is not valid JSON (" + s + ")"
}

// snippet shows the first bytes of an unrecognised input.
func inputSnippet(p []byte) string {
	if len(p) > 40 {
		return fmt.Sprintf("%q…", p[:40])
	}
	return fmt.Sprintf("%q", p)
}

// maxWalkDepth bounds the paths walkJSON tracks; detection only looks at
// the first few levels.
const maxDetectDepth = 32

var errDetectDepth = errors.New("nested too deeply to detect")

// walkJSON tokenizes p and calls visit for every value (for containers, at
// their opening delimiter) with the path of keys leading to it, "[]" standing
// for an array element. It stops when visit returns true, when the
// top-level value ends (ended is true) or at the first decoding error, which
// it returns (io.EOF or io.ErrUnexpectedEOF when p stops early).
func walkJSONPaths(p []byte, visit func(trail []string, tok json.Token) bool) (ended bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(p))
	dec.UseNumber() // 1e999 is valid JSON; the importer judges numbers
	type frame struct {
		object bool
		hasKey bool // in an object: a key was read, its value comes next
	}
	var stack []frame
	var trail []string
	// done closes a value: the key it belonged to is popped.
	done := func() bool {
		if len(stack) == 0 {
			return true
		}
		if top := &stack[len(stack)-1]; top.object {
			top.hasKey = false
			trail = trail[:len(trail)-1]
		}
		return false
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false, err
		}
		if n := len(stack); n > 0 && stack[n-1].object && !stack[n-1].hasKey {
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				if done() {
					return true, nil
				}
				continue
			}
			key, _ := tok.(string)
			stack[n-1].hasKey = true
			trail = append(trail, key)
			continue
		}
		if tok == json.Delim(']') {
			stack = stack[:len(stack)-1]
			trail = trail[:len(trail)-1]
			if done() {
				return true, nil
			}
			continue
		}
		if visit(trail, tok) {
			return false, nil
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true})
		case json.Delim('['):
			stack = append(stack, frame{})
			trail = append(trail, "[]")
		default:
			if done() {
				return true, nil
			}
		}
		if len(stack) > maxDetectDepth {
			return false, errDetectDepth
		}
	}
}

// binaryKind names inputs that are recognisably not text logs, so the
// message can say what to do instead of quoting bytes.
func binaryKind(p []byte) string {
	switch {
	case bytes.HasPrefix(p, []byte{0x1f, 0x8b}):
		return "a gzip-compressed file (compressed files are not accepted: decompress it and import the .json or .jsonl inside)"
	case bytes.HasPrefix(p, []byte("PK\x03\x04")):
		return "a zip archive (import the .json or .jsonl files inside it)"
	case bytes.HasPrefix(p, []byte{0xff, 0xfe}), bytes.HasPrefix(p, []byte{0xfe, 0xff}):
		return "UTF-16 text (save the log as UTF-8)"
	case bytes.HasPrefix(p, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "a zstd-compressed file (compressed files are not accepted: decompress it first)"
	}
	return ""
}
