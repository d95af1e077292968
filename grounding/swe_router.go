package grounding

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SWEStage is a SWE-Ladder stage (SPEC §5).
type SWEStage byte

// Stages, in their forward order.
const (
	SWEStageLOC   SWEStage = 'L' // localize
	SWEStageREP   SWEStage = 'R' // reproduce
	SWEStagePATCH SWEStage = 'P' // patch
)

// String returns "LOC", "REP" or "PATCH".
func (s SWEStage) String() string {
	switch s {
	case SWEStageLOC:
		return "LOC"
	case SWEStageREP:
		return "REP"
	case SWEStagePATCH:
		return "PATCH"
	}
	return "?"
}

// ParseSWEStage maps "LOC"/"L", "REP"/"R" and "PATCH"/"P" (any case) to a SWEStage.
func ParseSWEStage(s string) (SWEStage, bool) {
	switch strings.ToUpper(s) {
	case "LOC", "L":
		return SWEStageLOC, true
	case "REP", "R":
		return SWEStageREP, true
	case "PATCH", "P":
		return SWEStagePATCH, true
	}
	return 0, false
}

// SWEExploreFallback is how many consecutive exploration steps in REP send the
// router back to LOC.
const SWEExploreFallback = 3

// SWERoute is the router's label of one step.
type SWERoute struct {
	Stage SWEStage
	// Fallback is set when the step moved the state backwards: a test run
	// in PATCH (→ REP) or the SWEExploreFallback-th consecutive exploration in
	// REP (→ LOC).
	Fallback bool
	// Why says which rule applied.
	Why string
}

// RouteSWE labels classified steps with the rule router of SPEC §5, a
// deterministic state machine. The state starts at LOC and only moves
// forward (LOC → REP → PATCH), except for two fall-backs:
//
//   - running a test or reproduction script (SWEClassReproRun) while in PATCH
//     returns to REP;
//   - SWEExploreFallback consecutive exploration steps (SWEClassExplore) while in
//     REP return to LOC; the step that completes the run is labelled LOC.
//
// Every transition, with the class that triggers it:
//
//	state  explore           repro-write  repro-run     edit   submit/other
//	LOC    LOC               REP          REP           PATCH  LOC
//	REP    REP (3rd: LOC)    REP          REP           PATCH  REP
//	PATCH  PATCH             PATCH        REP (fall-b.) PATCH  PATCH
//
// Other and submit steps keep the state and do not break a run of
// exploration steps; any repro or edit step ends it. Each step's label is
// the state after it. The router labels; it never restricts the agent.
func RouteSWE(classes []SWEStepClass) []SWERoute {
	out := make([]SWERoute, len(classes))
	state := SWEStageLOC
	explored := 0 // consecutive exploration steps while in REP
	for i, c := range classes {
		r := SWERoute{}
		switch c {
		case SWEClassExplore:
			switch state {
			case SWEStageREP:
				explored++
				if explored >= SWEExploreFallback {
					state, explored = SWEStageLOC, 0
					r.Fallback = true
					r.Why = "the " + sweOrdinal(SWEExploreFallback) + " consecutive exploration step while in REP: falls back to LOC"
				} else {
					r.Why = "exploration while in REP (" + strconv.Itoa(explored) + " of " + strconv.Itoa(SWEExploreFallback) + " before falling back): stays REP"
				}
			case SWEStagePATCH:
				r.Why = "exploration while in PATCH: the state only moves forward, stays PATCH"
			default:
				r.Why = "search, view or read-only command: LOC"
			}
		case SWEClassReproWrite:
			explored = 0
			switch state {
			case SWEStagePATCH:
				r.Why = "writes a test or reproduction script while in PATCH: only running one falls back, stays PATCH"
			case SWEStageLOC:
				state = SWEStageREP
				r.Why = "writes a reproduction script or test file: moves forward to REP"
			default:
				r.Why = "writes a reproduction script or test file: REP"
			}
		case SWEClassReproRun:
			explored = 0
			switch state {
			case SWEStagePATCH:
				state = SWEStageREP
				r.Fallback = true
				r.Why = "runs a test while in PATCH: falls back to REP"
			case SWEStageLOC:
				state = SWEStageREP
				r.Why = "runs a reproduction script or the tests: moves forward to REP"
			default:
				r.Why = "runs a reproduction script or the tests: REP"
			}
		case SWEClassEdit:
			explored = 0
			if state != SWEStagePATCH {
				r.Why = "edits a source file: moves forward to PATCH"
			} else {
				r.Why = "edits a source file: PATCH"
			}
			state = SWEStagePATCH
		default:
			r.Why = "neither exploration, reproduction nor an edit: keeps the state " + state.String()
		}
		r.Stage = state
		out[i] = r
	}
	return out
}

func sweOrdinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return strconv.Itoa(n) + "th"
}

// Failure signals in an observation (SPEC §5): a traceback, an error or
// exception name, an assertion failure, FAILED/FAIL lines, a non-zero exit,
// or a script that says it reproduced the bug. Negated mentions ("no
// errors", "0 failed", "errors=0") are removed first.
var (
	// sweFailurePhraseRe are the multi-word signals; single words are
	// found by sweFailureWords, which is much faster than one big regexp.
	sweFailurePhraseRe = regexp.MustCompile(`(?i:\b(bug|issue|problem|error) (is )?(reproduced|confirmed|still (exists|present))\b)|(?i:\breproduced the (bug|issue)\b)`)
	sweNegatedRe       = regexp.MustCompile(`(?i)\b(no|0|zero|without|not an?|never)\s+(errors?|failures?|exceptions?|failed|issues?|tracebacks?)\b|\b(errors?|failures?|failed|exceptions?)\s*[:=]\s*0\b|\b0 (errors?|failed|failures?)\b`)
	// passRe are test-run summaries that say everything passed even when a
	// test name or log line mentions an error.
	swePassSummaryRe = regexp.MustCompile(`(?m)^OK(\s*\(.*\))?\s*$|=+ \d+ passed(, \d+ (skipped|warnings?|deselected|xfailed|xpassed))*( in [\d.]+s)? =+`)
	// sweIgnoredExceptionRe is Python's report of an exception in __del__ or
	// at interpreter exit ("Exception ignored in: …" and its traceback):
	// noise, not a failure of the script.
	sweIgnoredExceptionRe = regexp.MustCompile(`(?s)Exception ignored in:.*?\n[A-Za-z_.]*(?:Error|Exception|Warning)\b[^\n]*`)
	// sweExceptionLineRe is the last line of a Python traceback.
	sweExceptionLineRe = regexp.MustCompile(`^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b`)
	sweExitCodeRe      = regexp.MustCompile(`\[Command finished with exit code (-?\d+)\]|<returncode>(-?\d+)</returncode>|exit code (-?\d+)`)
)

// sweFailureSignal reports whether an observation shows a failure, and the
// text that shows it. errFlag is the importer's verdict (a non-zero exit
// code), which counts as a failure on its own.
func sweFailureSignal(out string, errFlag bool) (bool, string) {
	if ok, sig := sweTextualFailure(out); ok {
		return true, sig
	}
	if m := sweExitCodeRe.FindStringSubmatch(out); m != nil {
		for _, g := range m[1:] {
			if g != "" && g != "0" {
				return true, "exit code " + g
			}
		}
	}
	if errFlag {
		return true, "non-zero exit"
	}
	return false, ""
}

// sweTextualFailure finds a failure signal in the text of an observation,
// quoting it (a traceback by the exception it ends with).
func sweTextualFailure(out string) (bool, string) {
	if !sweMayFail(out) {
		return false, ""
	}
	clean := out
	if strings.Contains(out, "Exception ignored in") {
		clean = sweIgnoredExceptionRe.ReplaceAllString(out, " ")
	}
	var loc []int
	for _, m := range sweFailureMatches(clean) {
		if !sweNegated(clean, m) {
			loc = m
			break
		}
	}
	if loc == nil {
		return false, ""
	}
	if (strings.Contains(out, "passed") || strings.Contains(out, "OK")) && swePassSummaryRe.MatchString(out) && !strings.Contains(out, "Traceback") {
		return false, ""
	}
	if strings.HasPrefix(clean[loc[0]:], "Traceback") {
		// The exception line is the last line of the traceback that
		// names an error; scan lines backwards rather than the text.
		rest := clean[loc[1]:]
		for end := len(rest); end > 0; {
			start := strings.LastIndexByte(rest[:end], '\n') + 1
			if line := rest[start:end]; sweExceptionLineRe.MatchString(line) {
				return true, sweSnippet(clean, loc[1]+start, loc[1]+end)
			}
			end = start - 1
		}
	}
	return true, sweSnippet(clean, loc[0], loc[1])
}

// sweFailureMatches returns the failure signals of s in order: failure
// words (a capitalised name ending in Error or Exception, FAILED, FAIL,
// FAILURE, Failed, failed, ERROR, Error) and the phrases of
// sweFailurePhraseRe.
func sweFailureMatches(s string) [][]int {
	var out [][]int
	for i := 0; i < len(s); {
		c := s[i]
		if !sweWordByte(c) {
			i++
			continue
		}
		j := i
		for j < len(s) && sweWordByte(s[j]) {
			j++
		}
		if sweFailureWord(s[i:j]) {
			out = append(out, []int{i, j})
		}
		i = j
	}
	n := len(out)
	for _, lit := range []string{"Traceback (most recent call last)", "Segmentation fault", "core dumped", "panic:"} {
		for from := 0; ; {
			k := strings.Index(s[from:], lit)
			if k < 0 {
				break
			}
			out = append(out, []int{from + k, from + k + len(lit)})
			from += k + len(lit)
		}
	}
	lower := ""
	for _, h := range []string{"eproduced", "onfirmed", "still "} {
		if strings.Contains(s, h) || strings.Contains(s, strings.ToUpper(h)) {
			lower = h
			break
		}
	}
	if lower != "" {
		out = append(out, sweFailurePhraseRe.FindAllStringIndex(s, -1)...)
	}
	if len(out) > n {
		slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	}
	return out
}

func sweWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func sweFailureWord(w string) bool {
	switch w {
	case "FAILED", "FAIL", "FAILURE", "Failed", "failed", "ERROR", "Error":
		return true
	}
	return len(w) > 5 && w[0] >= 'A' && w[0] <= 'Z' && (strings.HasSuffix(w, "Error") || strings.HasSuffix(w, "Exception"))
}

// sweNegated reports whether the failure word at s[m[0]:m[1]] is part of a
// negation ("no errors", "0 failed", "errors=0"), looking only around it.
func sweNegated(s string, m []int) bool {
	from, to := max(0, m[0]-24), min(len(s), m[1]+16)
	for _, n := range sweNegatedRe.FindAllStringIndex(s[from:to], -1) {
		if from+n[0] <= m[0] && from+n[1] >= m[1] || from+n[0] < m[1] && from+n[1] > m[0] {
			return true
		}
	}
	return false
}

// sweFailureHints are substrings every failure signal contains one of;
// an observation without any skips the regular expressions, which
// dominate diagnosis time otherwise.
var sweFailureHints = []string{"rror", "RROR", "raceback", "FAIL", "ail", "xception", "ssert", "egmentation",
	"dumped", "panic:", "eproduc", "onfirmed", "still "}

func sweMayFail(out string) bool {
	for _, h := range sweFailureHints {
		if strings.Contains(out, h) {
			return true
		}
	}
	return false
}

// sweSnippet quotes the line holding s[from:to], shortened.
func sweSnippet(s string, from, to int) string {
	start := strings.LastIndexByte(s[:from], '\n') + 1
	end := strings.IndexByte(s[to:], '\n')
	if end < 0 {
		end = len(s)
	} else {
		end += to
	}
	line := strings.TrimSpace(s[start:end])
	if len(line) > 120 {
		line = line[:120] + "…"
	}
	return line
}
