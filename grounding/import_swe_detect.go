package grounding

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// SWE log formats (SPEC §2). Detect recognises them from content; they are
// deliberately not ParseFormat choices, so a user never has to name them.
const (
	// FormatSWEAgent: a SWE-agent .traj file {environment, trajectory,
	// history, info}.
	FormatSWEAgent Format = "swe-agent"
	// FormatMiniSWE: a mini-swe-agent .traj.json file {info, messages,
	// trajectory_format, instance_id}.
	FormatMiniSWE Format = "mini-swe-agent"
	// FormatOpenHands: an OpenHands log: an LLM completion log {messages,
	// response, kwargs, …}, an event list, or output.jsonl records with a
	// history of events.
	FormatOpenHands Format = "openhands"
	// FormatSWEInstances: SWE-bench instance metadata (instance_id, patch,
	// test_patch, FAIL_TO_PASS, PASS_TO_PASS) as a JSON array, JSON Lines,
	// one object or {"instances": [...]}. Read with ReadSWEInstances.
	FormatSWEInstances Format = "swe-instances"
	// FormatSWEResults: SWE-bench evaluation results (report.json, a
	// results summary, an sb-cli report or an OpenHands evaluation log).
	// Read with ReadSWEResults.
	FormatSWEResults Format = "swe-results"
)

// IsSWETrajectoryFormat reports whether f is one of the SWE trajectory
// formats.
func IsSWETrajectoryFormat(f Format) bool {
	return f == FormatSWEAgent || f == FormatMiniSWE || f == FormatOpenHands
}

var sweOpenHandsResultRe = regexp.MustCompile(`Result for [^\s:]+: resolved: (True|False)`)

// sweEvalReportHeadRe recognises OpenHands' markdown evaluation summary
// (output.swebench_eval.md): a "## Resolved Instances" or "## Unresolved
// Instances" section.
var sweEvalReportHeadRe = regexp.MustCompile(`(?m)^##\s+(Resolved|Unresolved) Instances\s*$`)

// detectSWE recognises the SWE trajectory formats in the first window p of
// an input (after white space and BOM). It looks at the whole window, not
// only the first line, because these files are usually pretty-printed JSON.
// ok is false when p is none of them; Detect then goes on with its other
// rules. Instance metadata and evaluation results are not trajectories:
// DetectSWEData recognises those.
func detectSWE(p []byte, complete bool) (f Format, ok bool) {
	_ = complete
	f, ok = detectSWEAny(p)
	if !IsSWETrajectoryFormat(f) {
		return "", false
	}
	return f, ok
}

// DetectSWEData reports whether the input at the start of r is SWE-bench
// instance metadata (FormatSWEInstances) or evaluation results
// (FormatSWEResults), without consuming anything. ok is false for anything
// else, trajectories included, and on a read failure (which the reader
// that follows will report).
func DetectSWEData(r *bufio.Reader) (f Format, ok bool) {
	p, _ := r.Peek(min(r.Size(), readBufferSize))
	f, ok = detectSWEAny(sweTrimStart(p))
	if !ok || IsSWETrajectoryFormat(f) {
		return "", false
	}
	return f, true
}

func detectSWEAny(p []byte) (Format, bool) {
	if len(p) == 0 {
		return "", false
	}
	switch p[0] {
	case '{':
		return detectSWEObject(p)
	case '[':
		return detectSWEArray(p)
	}
	if sweOpenHandsResultRe.Match(p) || sweEvalReportHeadRe.Match(p) {
		return FormatSWEResults, true
	}
	return "", false
}

// sweKeySet collects what detection needs about the first JSON value.
type sweKeySet struct {
	top           map[string]bool
	nested        map[string]bool // "parent.child" for the first two levels; "parent[].child" for first elements
	trajFormat    string
	resolvedUnder int // top-level keys whose value is an object with "resolved"
	idKeys        int // top-level keys shaped like instance ids
}

func sweScanKeys(p []byte) sweKeySet {
	k := sweKeySet{top: map[string]bool{}, nested: map[string]bool{}}
	firstElem := map[string]int{} // array path → elements seen
	walkJSONPaths(p, func(trail []string, tok json.Token) bool {
		switch len(trail) {
		case 1:
			k.top[trail[0]] = true
			if LooksLikeInstanceID(trail[0]) {
				k.idKeys++
			}
			if trail[0] == "trajectory_format" {
				if s, ok := tok.(string); ok {
					k.trajFormat = s
				}
			}
		case 2:
			if trail[1] == "[]" {
				firstElem[trail[0]]++
				return false
			}
			k.nested[trail[0]+"."+trail[1]] = true
			if trail[1] == "resolved" {
				k.resolvedUnder++
			}
		case 3:
			if trail[1] == "[]" && firstElem[trail[0]] == 1 {
				k.nested[trail[0]+"[]."+trail[2]] = true
			}
		}
		return false
	})
	return k
}

func detectSWEObject(p []byte) (Format, bool) {
	k := sweScanKeys(p)
	has := func(keys ...string) bool {
		for _, key := range keys {
			if k.top[key] || k.nested[key] {
				return true
			}
		}
		return false
	}
	switch {
	case strings.HasPrefix(k.trajFormat, "mini-swe-agent") || has("info.mini_version"):
		return FormatMiniSWE, true
	case has("trajectory[].action", "trajectory[].observation", "trajectory[].response"),
		has("history[].role") && !has("messages"):
		return FormatSWEAgent, true
	case has("history[].action", "history[].observation", "history[].source"):
		return FormatOpenHands, true
	case has("messages") && has("response") && has("kwargs", "timestamp", "cost", "args"):
		return FormatOpenHands, true
	case has("messages") && has("info") && has("instance_id") && has("info.exit_status", "info.submission"):
		return FormatMiniSWE, true
	case has("resolved_ids", "unresolved_ids"),
		has("resolved") && has("tests_status", "patch_is_None", "patch_successfully_applied", "patch_exists"),
		has("instances[].resolved") && !has("instances[].patch"),
		k.resolvedUnder > 0 && k.idKeys > 0:
		return FormatSWEResults, true
	case has("instances[].instance_id") && has("instances[].patch", "instances[].test_patch", "instances[].FAIL_TO_PASS"):
		return FormatSWEInstances, true
	case has("instance_id") && has("patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS") && !has("messages", "history", "traj"):
		return FormatSWEInstances, true
	case has("instance_id") && has("resolved") && !has("messages", "history"):
		return FormatSWEResults, true
	}
	return "", false
}

func detectSWEArray(p []byte) (Format, bool) {
	var keys []string
	elems := 0
	walkJSONPaths(p, func(trail []string, tok json.Token) bool {
		if len(trail) == 1 {
			elems++
			return elems > 1
		}
		if len(trail) == 2 {
			keys = append(keys, trail[1])
		}
		return false
	})
	has := func(want ...string) bool {
		for _, k := range keys {
			for _, w := range want {
				if k == w {
					return true
				}
			}
		}
		return false
	}
	switch {
	case has("traj"):
		return "", false // τ-bench
	case has("instance_id") && has("patch", "test_patch", "FAIL_TO_PASS", "PASS_TO_PASS"):
		return FormatSWEInstances, true
	case has("instance_id") && has("resolved"):
		return FormatSWEResults, true
	case has("action", "observation") && has("source", "id", "message", "args", "content"):
		return FormatOpenHands, true
	}
	return "", false
}

// sweTrimStart drops a BOM and leading white space.
func sweTrimStart(p []byte) []byte {
	return bytes.TrimLeft(bytes.TrimPrefix(p, utf8BOM), " \t\r\n")
}
