package grounding

import (
	"encoding/json"
	"path"
	"regexp"
	"strings"
)

// SWEInstance is the reference metadata of one SWE-bench-style instance:
// the verified fix (Patch), the tests that check it and the issue.
type SWEInstance struct {
	InstanceID       string   `json:"instance_id"`
	Repo             string   `json:"repo,omitempty"`
	BaseCommit       string   `json:"base_commit,omitempty"`
	Patch            string   `json:"patch"`
	TestPatch        string   `json:"test_patch,omitempty"`
	FailToPass       []string `json:"FAIL_TO_PASS"`
	PassToPass       []string `json:"PASS_TO_PASS"`
	ProblemStatement string   `json:"problem_statement,omitempty"`
	Version          string   `json:"version,omitempty"`
}

// PatchFiles returns the files the reference patch changes, in order.
func (in *SWEInstance) PatchFiles() []string {
	if in == nil {
		return nil
	}
	return DiffFiles(in.Patch)
}

// SWEResult is an evaluation verdict: whether a run's patch for the
// instance resolved it (SWE-bench harness report).
type SWEResult struct {
	InstanceID string `json:"instance_id"`
	Resolved   bool   `json:"resolved"`
}

// SWEMeta is what the SWE importers keep in Trajectory.Meta.
type SWEMeta struct {
	InstanceID string `json:"instance_id,omitempty"`
	// ExitStatus is the scaffold's own word for how the run ended
	// ("submitted", "Submitted", "finished", "max_iterations", …).
	ExitStatus string `json:"exit_status,omitempty"`
	// Submission is the submitted patch; nil when the log does not carry
	// one (OpenHands completion logs).
	Submission *string `json:"submission,omitempty"`
	Model      string  `json:"model,omitempty"`
	Scaffold   string  `json:"scaffold,omitempty"`
}

// SWEMetaOf decodes the SWE fields of t.Meta (missing fields stay empty).
// The instance id falls back to the trajectory id when that looks like one
// (owner__repo-123).
func SWEMetaOf(t *Trajectory) SWEMeta {
	var m SWEMeta
	if len(t.Meta) > 0 {
		_ = json.Unmarshal(t.Meta, &m) // a foreign meta shape just gives no fields
	}
	if m.InstanceID == "" && sweInstanceIDRe.MatchString(t.ID) {
		m.InstanceID = t.ID
	}
	return m
}

// sweInstanceIDRe matches SWE-bench instance ids: owner__repo-number.
var sweInstanceIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]*__[A-Za-z0-9][A-Za-z0-9_.\-]*-\d+$`)

// LooksLikeInstanceID reports whether s has the owner__repo-number shape
// (django__django-11133, pylint-dev__astroid-1268), with exactly one "__".
func LooksLikeInstanceID(s string) bool {
	return strings.Count(s, "__") == 1 && sweInstanceIDRe.MatchString(s)
}

// SWEDiagnosis is the behavior diagnostics of one trajectory (SPEC §5).
// Step indexes in the *Steps fields say which steps justify each figure.
type SWEDiagnosis struct {
	Trajectory string
	InstanceID string
	Steps      []SWEStep
	Routes     []SWERoute // Routes[i] labels Steps[i]

	// HasReference is set when instance metadata with a non-empty
	// reference patch was given; without it Localization is nil ("no
	// reference").
	HasReference   bool
	ReferenceFiles []string
	// EditedFiles are the source files the agent edited (its edits and its
	// submitted patch).
	EditedFiles []string
	// Localization is the recall of ReferenceFiles among EditedFiles.
	Localization      *float64
	LocalizedFiles    []string
	LocalizationSteps []int

	// Reproduction: the agent created and ran a reproduction script and its
	// output showed a failure signal, before its last source edit (a
	// failure seen only after the last edit is a failed verification, not a
	// reproduction of the issue). Nil for a trajectory without steps.
	// A failure the agent caused is not a reproduction either: a run that
	// fails after a source edit although the same script passed before
	// that edit, or whose traceback ends in a file the agent had edited
	// (RegressionSteps lists them).
	Reproduction      *bool
	ReproScripts      []string // scripts it created and ran
	ReproductionSteps []int
	RegressionSteps   []int
	// Verification: after its last source edit the agent re-ran a script
	// it had run before that edit, and the last such re-run passed (no
	// failure signal). Nil when it never edited a source file (there is no
	// last edit to verify).
	Verification      *bool
	LastEdit          int // step index of the last source edit, -1 when none
	VerificationSteps []int
	// Completed: a patch was submitted.
	Completed       bool
	CompletionSteps []int
	CompletionWhy   string
}

// StageCounts returns how many steps the router put in LOC, REP and PATCH.
func (d SWEDiagnosis) StageCounts() (loc, rep, patch int) {
	for _, r := range d.Routes {
		switch r.Stage {
		case SWEStageLOC:
			loc++
		case SWEStageREP:
			rep++
		case SWEStagePATCH:
			patch++
		}
	}
	return loc, rep, patch
}

// Stages returns one stage name per step ("LOC", "REP", "PATCH").
func (d SWEDiagnosis) Stages() []string {
	out := make([]string, len(d.Routes))
	for i, r := range d.Routes {
		out[i] = r.Stage.String()
	}
	return out
}

// StageString encodes the stages one byte per step: L, R, P, in lower case
// where the step is a fall-back ("LLRRlLLPPrRP").
func (d SWEDiagnosis) StageString() string {
	b := make([]byte, len(d.Routes))
	for i, r := range d.Routes {
		c := byte(r.Stage)
		if r.Fallback {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// DiagnoseSWE classifies and routes t's steps and computes the diagnostics
// against inst, which may be nil (no reference metadata). It is pure and
// deterministic.
func DiagnoseSWE(t *Trajectory, inst *SWEInstance) SWEDiagnosis {
	meta := SWEMetaOf(t)
	steps := SWESteps(t)
	classes := make([]SWEStepClass, len(steps))
	for i := range steps {
		classes[i] = steps[i].Class
	}
	d := SWEDiagnosis{
		Trajectory: t.ID,
		InstanceID: meta.InstanceID,
		Steps:      steps,
		Routes:     RouteSWE(classes),
		LastEdit:   -1,
	}
	if inst != nil && d.InstanceID == "" {
		d.InstanceID = inst.InstanceID
	}

	// Edited source files: every edit step's sources, then the submitted
	// patch's files (edits made by scripts the parser cannot see).
	editSteps := map[string][]int{}
	for i, s := range steps {
		if s.Modifies {
			d.LastEdit = i
		}
		for _, f := range s.Sources {
			d.EditedFiles = sweAppendUnique(d.EditedFiles, f)
			editSteps[f] = append(editSteps[f], i)
		}
	}
	if meta.Submission != nil {
		for _, f := range DiffFiles(*meta.Submission) {
			if lf := strings.ToLower(f); !sweIsTestPath(lf) && !strings.Contains(lf, "repro") && !sweIsBackupName(path.Base(lf)) {
				d.EditedFiles = sweAppendUnique(d.EditedFiles, f)
			}
		}
	}

	// Localization.
	if ref := inst.PatchFiles(); len(ref) > 0 {
		d.HasReference = true
		d.ReferenceFiles = ref
		hit := 0
		for _, r := range ref {
			for _, e := range d.EditedFiles {
				if sweSamePath(r, e) {
					hit++
					d.LocalizedFiles = append(d.LocalizedFiles, r)
					for f, idx := range editSteps {
						if sweSamePath(r, f) {
							d.LocalizationSteps = append(d.LocalizationSteps, idx...)
						}
					}
					break
				}
			}
		}
		v := float64(hit) / float64(len(ref))
		d.Localization = &v
		d.LocalizationSteps = sweSortedUnique(d.LocalizationSteps)
	}

	// Reproduction.
	if len(steps) > 0 {
		rep := false
		created := map[string]int{}
		passed := map[string]int{}  // script → its last run without a failure since it was last written
		edited := map[string]bool{} // sources edited so far
		lastModify, lastReverts := -1, false
		modify := func(i int, s SWEStep) {
			lastModify, lastReverts = i, s.Reverts
			for _, f := range s.Sources {
				edited[f] = !s.Reverts // a reverted file is the original code again
			}
		}
		for i, s := range steps {
			for _, w := range s.Written {
				if _, ok := created[w]; !ok {
					created[w] = i
				}
				for sc := range passed { // a rewritten script's earlier pass says nothing
					if w == sc || strings.HasPrefix(w, sc+"/") {
						delete(passed, sc)
					}
				}
			}
			editFirst := s.Modifies && (s.Script == "" || s.RunAfterEdit)
			if editFirst {
				modify(i, s)
			}
			fail := s.Failure
			if s.Script != "" && fail && lastModify >= 0 {
				p, ok := passed[s.Script]
				if ok && lastModify > p && !lastReverts || s.FailedIn != "" && edited[s.FailedIn] {
					d.RegressionSteps = append(d.RegressionSteps, i)
					fail = false // the agent's own breakage, not the issue
				}
			}
			if s.Modifies && !editFirst {
				modify(i, s)
			}
			if s.Script == "" {
				continue
			}
			d.ReproScripts = sweAppendUnique(d.ReproScripts, s.Script)
			if s.Observation >= 0 && !s.Failure {
				passed[s.Script] = i
			}
			beforeLastEdit := d.LastEdit < 0 || i < d.LastEdit || i == d.LastEdit && !s.RunAfterEdit
			if fail && !rep && beforeLastEdit {
				rep = true
				if c, ok := created[s.Script]; ok {
					d.ReproductionSteps = append(d.ReproductionSteps, c)
				}
				d.ReproductionSteps = append(d.ReproductionSteps, i)
			}
		}
		d.Reproduction = &rep
	}

	// Verification.
	if d.LastEdit >= 0 {
		before := map[string]bool{}
		for _, s := range steps[:d.LastEdit] {
			if s.Script != "" {
				before[s.Script] = true
			}
		}
		last := map[string]int{} // script → its last run after the last edit
		var order []string
		for i := d.LastEdit; i < len(steps); i++ {
			s := steps[i]
			if s.Script == "" || !before[s.Script] || i == d.LastEdit && !s.RunAfterEdit {
				continue
			}
			if _, ok := last[s.Script]; !ok {
				order = append(order, s.Script)
			}
			last[s.Script] = i
		}
		ver := false
		for _, sc := range order {
			i := last[sc]
			if steps[i].Observation >= 0 && !steps[i].Failure {
				ver = true
				d.VerificationSteps = append(d.VerificationSteps, i)
			}
		}
		if !ver {
			for _, sc := range order {
				d.VerificationSteps = append(d.VerificationSteps, last[sc])
			}
		}
		d.VerificationSteps = sweSortedUnique(d.VerificationSteps)
		d.Verification = &ver
	}

	d.Completed, d.CompletionWhy = sweCompleted(meta, steps)
	for i, s := range steps {
		if s.Class == SWEClassSubmit {
			d.CompletionSteps = append(d.CompletionSteps, i)
		}
	}
	return d
}

// sweCompleted decides whether a patch was submitted: the log's submission
// when it carries one (non-empty, and an exit status, if any, that says it
// was submitted), else a submit/finish step after at least one source edit.
func sweCompleted(meta SWEMeta, steps []SWEStep) (bool, string) {
	status := strings.ToLower(strings.TrimSpace(meta.ExitStatus))
	saysSubmitted := strings.HasPrefix(status, "submit") || strings.HasPrefix(status, "finish")
	submittedStatus := status == "" || saysSubmitted
	if meta.Submission != nil {
		switch {
		case strings.TrimSpace(*meta.Submission) == "":
			return false, "the submitted patch is empty"
		case !submittedStatus:
			return false, "the run ended with " + meta.ExitStatus + " rather than a submission"
		}
		return true, "a non-empty patch was submitted (" + sweOr(meta.ExitStatus, "submitted") + ")"
	}
	submit, edit := false, false
	for _, s := range steps {
		submit = submit || s.Class == SWEClassSubmit
		edit = edit || s.Modifies
	}
	switch {
	case !submit && !saysSubmitted:
		return false, "the agent never submitted (no submit or finish step)"
	case !edit:
		return false, "submitted without editing any source file (empty patch)"
	}
	return true, "the agent submitted after editing source files"
}

// sweSamePath reports whether two repository paths name the same file, one
// possibly relative to a subdirectory of the other's root.
func sweSamePath(a, b string) bool {
	if a == b {
		return true
	}
	return strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

func sweSortedUnique(xs []int) []int {
	if len(xs) < 2 {
		return xs
	}
	seen := map[int]bool{}
	out := xs[:0]
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// DiffFiles returns the files a unified diff changes (the b/ side, or the
// a/ side for deletions), in order of appearance.
func DiffFiles(diff string) []string {
	var out []string
	for _, h := range DiffHunks(diff) {
		out = sweAppendUnique(out, h.File)
	}
	return out
}

// DiffHunk is one hunk of a unified diff: the file and the old-side line range
// it covers, with its lines.
type DiffHunk struct {
	File     string
	OldStart int
	OldLines int
	NewStart int
	NewLines int
	Lines    []string // the hunk body, each line with its ' ', '-' or '+' prefix
}

var sweHunkHeaderRe = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// DiffHunks parses a unified diff (git or plain) into hunks. Files come
// from "diff --git a/X b/Y", "+++ b/Y" or "--- a/X" headers with the a/ b/
// prefixes removed.
func DiffHunks(diff string) []DiffHunk {
	var (
		out      []DiffHunk
		file     string
		oldFile  string
		cur      *DiffHunk
		inHunk   bool
		oldLeft  int
		newLeft  int
		lineNumb = func(s string) int {
			n := 0
			for _, c := range s {
				n = n*10 + int(c-'0')
			}
			return n
		}
	)
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
		inHunk = false
	}
	for _, line := range strings.Split(strings.ReplaceAll(diff, "\r\n", "\n"), "\n") {
		if inHunk && (oldLeft > 0 || newLeft > 0) {
			switch {
			case strings.HasPrefix(line, "-"):
				oldLeft--
				cur.Lines = append(cur.Lines, line)
				continue
			case strings.HasPrefix(line, "+"):
				newLeft--
				cur.Lines = append(cur.Lines, line)
				continue
			case strings.HasPrefix(line, " ") || line == "":
				oldLeft--
				newLeft--
				cur.Lines = append(cur.Lines, line)
				continue
			case strings.HasPrefix(line, `\`):
				continue
			}
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			rest := strings.TrimPrefix(line, "diff --git ")
			if i := strings.Index(rest, " b/"); i >= 0 {
				file = rest[i+3:]
				oldFile = strings.TrimPrefix(rest[:i], "a/")
			}
		case strings.HasPrefix(line, "--- "):
			flush()
			f := sweDiffPath(strings.TrimPrefix(line, "--- "))
			if f != "" {
				oldFile = strings.TrimPrefix(f, "a/")
			}
		case strings.HasPrefix(line, "+++ "):
			f := sweDiffPath(strings.TrimPrefix(line, "+++ "))
			if f != "" {
				file = strings.TrimPrefix(f, "b/")
			} else {
				file = oldFile // a deletion
			}
		case strings.HasPrefix(line, "@@"):
			flush()
			m := sweHunkHeaderRe.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			f := file
			if f == "" {
				f = oldFile
			}
			h := DiffHunk{File: normalizeSWEPath(f), OldStart: lineNumb(m[1]), OldLines: 1, NewStart: lineNumb(m[3]), NewLines: 1}
			if m[2] != "" {
				h.OldLines = lineNumb(m[2])
			}
			if m[4] != "" {
				h.NewLines = lineNumb(m[4])
			}
			cur, inHunk = &h, true
			oldLeft, newLeft = h.OldLines, h.NewLines
		}
	}
	flush()
	return out
}

// sweDiffPath returns the path of a ---/+++ header, "" for /dev/null.
func sweDiffPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	return s
}
