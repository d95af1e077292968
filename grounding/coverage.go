package grounding

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Coverage (SPEC §4) turns each certified trajectory into a canonical path:
// the ordered atoms of its certified decisions, serialized as a stable key
//
//	read:id>respond>write:id+date+enum>error>recover:write:id+date+enum>end:ok
//
// Tokens are joined by ">". A certified decision (m_t = 1) is one token:
//
//	[recover:]ACTION[:ROLE+ROLE…][/empty][/par]
//
//   - ACTION is the decision's semantic action (read, write,
//     irreversible_write, transfer, compute, think, respond).
//   - ROLEs are the roles of a tool call's arguments, deduplicated, in the
//     fixed order id, amount, date, enum, bool, text (identifier, amount,
//     datetime, enum, boolean, free_text). A value found inside free text
//     counts as text, not as its own role. Text replies (respond) and think
//     carry no roles: their "arguments" are prose.
//   - recover: marks the first certified decision after a real error.
//   - /empty: the call's observation was empty ("", [], {}, null); not
//     for think, whose tool answers nothing by design.
//   - /par: the call was one of several calls of one assistant message
//     (the branching atom: the agent fanned out).
//
// A call whose observation is a real error (exec.error) stays in the path,
// as its own step token followed by the token "error", whatever its mask:
// failed calls teach recovery. Other decisions without m_t = 1 are left out.
// The path ends with "end:ok". Only trajectories that are certified
// (R_τ = 1, workflow respected, at least one m_t = 1) have a path.
//
// The key depends on nothing but the trajectory's decisions, their checks
// and masks: not on ids, run, import order or machine.

// Path token pieces.
const (
	TokenError   = "error"
	TokenEndOK   = "end:ok"
	TokenStart   = "start" // heatmap pseudo-token before the first step
	recoverPre   = "recover:"
	suffixEmpty  = "/empty"
	suffixPar    = "/par"
	pathSep      = ">"
	outcomeError = "error"
	outcomeEmpty = "empty"
)

// roleOrder is the canonical order of roles in a step token, with their
// short names.
var roleOrder = []struct{ role, short string }{
	{RoleIdentifier, "id"}, {RoleAmount, "amount"}, {RoleDatetime, "date"},
	{RoleEnum, "enum"}, {RoleBoolean, "bool"}, {RoleFreeText, "text"},
}

// PathStep is what coverage keeps of one decision, independent of its
// verdict: the store saves one per decision at import and recheck, and
// derives the path again from them and the effective masks whenever a
// verdict changes.
type PathStep struct {
	// Action is the semantic action.
	Action string `json:"a"`
	// Roles are short role names (id, amount, …) in canonical order; empty
	// for replies and think.
	Roles []string `json:"r,omitempty"`
	// Outcome is "error" (a real error observation), "empty" or "" (ok,
	// or no observation at all).
	Outcome string `json:"o,omitempty"`
	// Parallel: one of several calls in one assistant message.
	Parallel bool `json:"p,omitempty"`
	// Message is the assistant message's index: decisions of one message
	// are rendered, and weighted, together.
	Message int `json:"m"`
	// Bytes is the UTF-8 length of the decision's rendering: the reply's
	// content, or the tool name plus the argument string of a call.
	Bytes int `json:"b"`
}

// PathSteps returns one PathStep per decision of ds (the check's decisions
// of t, in ordinal order).
func PathSteps(t *Trajectory, ds []DecisionResult) []PathStep {
	out := make([]PathStep, len(ds))
	calls := make(map[int]int, len(ds)) // message → calls in it
	for i := range ds {
		if !ds[i].IsReply() {
			calls[ds[i].Message]++
		}
	}
	for i := range ds {
		d := &ds[i]
		s := PathStep{Action: d.Action, Message: d.Message}
		if s.Action == "" {
			s.Action = ActionRespond
		}
		var m *Message
		if d.Message >= 0 && d.Message < len(t.Messages) {
			m = &t.Messages[d.Message]
		}
		if d.IsReply() {
			if m != nil {
				s.Bytes = len(m.Content)
			}
		} else {
			if m != nil && d.Call < len(m.ToolCalls) {
				c := &m.ToolCalls[d.Call]
				s.Bytes = len(c.Name) + len(callArgumentText(c))
			}
			s.Parallel = calls[d.Message] > 1
			switch {
			case hasString(d.Reasons, ReasonExecError):
				s.Outcome = outcomeError
			case d.Observation >= 0 && d.Observation < len(t.Messages) && t.Messages[d.Observation].Error:
				s.Outcome = outcomeError
			case s.Action != ActionThink && d.Observation >= 0 && d.Observation < len(t.Messages) && emptyObservation(t.Messages[d.Observation].Content):
				// A think tool answers nothing by design; for any other
				// call an empty answer is an outcome worth its own atom.
				s.Outcome = outcomeEmpty
			}
		}
		if s.Action != ActionRespond && s.Action != ActionThink && !d.IsReply() {
			s.Roles = argRoles(d.Args)
		}
		out[i] = s
	}
	return out
}

// callArgumentText is the argument string a call is rendered with: the JSON
// text, or the undecodable source string verbatim.
func callArgumentText(c *ToolCall) string {
	if c.RawArguments != "" || len(c.Arguments) == 0 {
		return c.RawArguments
	}
	return string(c.Arguments)
}

// argRoles returns the short names of the roles among args, in canonical
// order. A value inside free text (path "field[12:20]") counts as text.
func argRoles(args []ArgEvidence) []string {
	var seen [6]bool
	var other []string
	for _, a := range args {
		role := a.Role
		if inText(a.Path) {
			role = RoleFreeText
		}
		found := false
		for k, r := range roleOrder {
			if r.role == role {
				seen[k] = true
				found = true
				break
			}
		}
		if !found && role != "" && !slices.Contains(other, role) {
			other = append(other, role)
		}
	}
	var out []string
	for k, r := range roleOrder {
		if seen[k] {
			out = append(out, r.short)
		}
	}
	slices.Sort(other)
	return append(out, other...)
}

// inText reports whether an evidence path names a span of text
// ("summary[4:10]") rather than a JSON path ("flights[0].date").
func inText(path string) bool {
	if !strings.HasSuffix(path, "]") {
		return false
	}
	open := strings.LastIndexByte(path, '[')
	if open < 0 {
		return false
	}
	a, b, ok := strings.Cut(path[open+1:len(path)-1], ":")
	if !ok {
		return false
	}
	_, err1 := strconv.Atoi(a)
	_, err2 := strconv.Atoi(b)
	return err1 == nil && err2 == nil
}

// emptyObservation reports whether a tool observation carries nothing: blank,
// or a JSON null, empty string, empty array or empty object.
func emptyObservation(content string) bool {
	s := strings.TrimSpace(content)
	switch s {
	case "", "[]", "{}", "null", `""`:
		return true
	}
	if (s[0] != '[' && s[0] != '{') || len(s) > 64 {
		return false
	}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	switch x := v.(type) {
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// token renders a step as its path token, without the recover: prefix.
func (s PathStep) token() string {
	var b strings.Builder
	b.WriteString(s.Action)
	if len(s.Roles) > 0 {
		b.WriteByte(':')
		for i, r := range s.Roles {
			if i > 0 {
				b.WriteByte('+')
			}
			b.WriteString(r)
		}
	}
	if s.Outcome == outcomeEmpty {
		b.WriteString(suffixEmpty)
	}
	if s.Parallel {
		b.WriteString(suffixPar)
	}
	return b.String()
}

// CanonicalPath returns the canonical path key of a trajectory from its
// steps and the effective mask of each decision (masks[i] for steps[i]), or
// "" when it is not certified. eligible is R_τ = 1 and the workflow
// respected; certified additionally needs one m_t = 1.
func CanonicalPath(steps []PathStep, masks []int, eligible bool) string {
	if !eligible {
		return ""
	}
	supervised := false
	for i := range steps {
		if i < len(masks) && masks[i] == 1 {
			supervised = true
			break
		}
	}
	if !supervised {
		return ""
	}
	var b strings.Builder
	pendingError := false
	for i, s := range steps {
		mask := 0
		if i < len(masks) {
			mask = masks[i]
		}
		switch {
		case s.Outcome == outcomeError:
			b.WriteString(s.token())
			b.WriteString(pathSep)
			b.WriteString(TokenError)
			b.WriteString(pathSep)
			pendingError = true
		case mask == 1:
			if pendingError {
				b.WriteString(recoverPre)
				pendingError = false
			}
			b.WriteString(s.token())
			b.WriteString(pathSep)
		}
	}
	b.WriteString(TokenEndOK)
	return b.String()
}

// PathID is a short stable id of a path key for URLs: the first 12 hex
// digits of its SHA-256.
func PathID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// CertifiedTokens counts the certified target tokens of a trajectory: the
// tokens a parent-normalized export trains on. Decisions are grouped by
// assistant message; a message counts when every decision in it has
// m_t = 1, for ceil(b/4) tokens where b is the UTF-8 length of its content
// plus its tool names and argument strings. That is the export's rule
// (about four bytes per BPE token for English and JSON); only ratios
// between trajectories of one parent matter.
func CertifiedTokens(steps []PathStep, masks []int) int {
	total := 0
	for i := 0; i < len(steps); {
		j, bytes, all := i, 0, true
		for ; j < len(steps) && steps[j].Message == steps[i].Message; j++ {
			bytes += steps[j].Bytes
			if j >= len(masks) || masks[j] != 1 {
				all = false
			}
		}
		if all {
			total += (bytes + 3) / 4
		}
		i = j
	}
	return total
}

// PathTokens splits a path key into its tokens.
func PathTokens(key string) []string {
	if key == "" {
		return nil
	}
	return strings.Split(key, pathSep)
}

// PathShape is what a path says, parsed once per distinct path.
type PathShape struct {
	// Steps counts the certified decisions (the path's horizon).
	Steps int
	// Recoveries counts recover: tokens; Errors real errors.
	Recoveries int
	Errors     int
	// Actions counts certified decisions per semantic action.
	Actions map[string]int
	// Atoms are the capability atoms of the path, sorted.
	Atoms []string
	// Transitions are the distinct (token, next token) pairs, starting
	// from TokenStart, in path order.
	Transitions [][2]string
}

// Atom names (the capability vocabulary K of SPEC §4). Each path has:
//
//	act:ACTION       a certified decision with that semantic action
//	role:ROLE        a certified call with an argument of that role
//	obs:ok|empty     a certified call whose observation was ok / empty
//	obs:error        a real error observation
//	error:ACTION     a real error on a call with that action
//	recover          a certified decision after a real error
//	recover:ACTION   … with that action
//	branch           a certified call issued alongside others
//	handoff          a certified transfer
//	end:ok           success (every path has it)
//	horizon:BUCKET   its number of certified decisions, bucketed
const (
	AtomRecover = "recover"
	AtomBranch  = "branch"
	AtomHandoff = "handoff"
)

// ShapeOf parses a path key.
func ShapeOf(key string) PathShape {
	toks := PathTokens(key)
	sh := PathShape{Actions: map[string]int{}}
	atoms := map[string]bool{}
	seen := map[[2]string]bool{}
	prev := TokenStart
	for i, tok := range toks {
		pair := [2]string{prev, tok}
		if !seen[pair] {
			seen[pair] = true
			sh.Transitions = append(sh.Transitions, pair)
		}
		prev = tok
		switch {
		case tok == TokenError:
			sh.Errors++
			atoms["obs:error"] = true
			if i > 0 {
				atoms["error:"+tokenAction(toks[i-1])] = true
			}
			continue
		case tok == TokenEndOK:
			atoms[TokenEndOK] = true
			continue
		case i+1 < len(toks) && toks[i+1] == TokenError:
			continue // the failed call itself: its atoms come with "error"
		}
		sh.Steps++
		body := tok
		if rest, ok := strings.CutPrefix(body, recoverPre); ok {
			body = rest
			sh.Recoveries++
			atoms[AtomRecover] = true
			atoms[recoverPre+tokenAction(body)] = true
		}
		action := tokenAction(body)
		sh.Actions[action]++
		atoms["act:"+action] = true
		if action == ActionTransfer {
			atoms[AtomHandoff] = true
		}
		body, par := strings.CutSuffix(body, suffixPar)
		if par {
			atoms[AtomBranch] = true
		}
		body, empty := strings.CutSuffix(body, suffixEmpty)
		isCall := action != ActionRespond && action != ActionThink
		if empty {
			atoms["obs:empty"] = true
		} else if isCall {
			atoms["obs:ok"] = true
		}
		if _, roles, ok := strings.Cut(body, ":"); ok {
			for _, r := range strings.Split(roles, "+") {
				atoms["role:"+r] = true
			}
		}
	}
	atoms["horizon:"+HorizonBucket(sh.Steps)] = true
	for a := range atoms {
		sh.Atoms = append(sh.Atoms, a)
	}
	slices.Sort(sh.Atoms)
	return sh
}

// tokenAction is the semantic action of a step token.
func tokenAction(tok string) string {
	tok = strings.TrimPrefix(tok, recoverPre)
	if i := strings.IndexAny(tok, ":/"); i >= 0 {
		return tok[:i]
	}
	return tok
}

// HorizonBuckets are the horizon buckets, shortest first.
var HorizonBuckets = []string{"1", "2", "3–4", "5–8", "9–16", "17+"}

// HorizonBucket names the bucket of n supervised decisions ("0" for none).
func HorizonBucket(n int) string {
	switch {
	case n <= 0:
		return "0"
	case n <= 2:
		return HorizonBuckets[n-1]
	case n <= 4:
		return HorizonBuckets[2]
	case n <= 8:
		return HorizonBuckets[3]
	case n <= 16:
		return HorizonBuckets[4]
	}
	return HorizonBuckets[5]
}

// RecoveryBuckets are the columns of the horizon × recovery heatmap.
var RecoveryBuckets = []string{"0", "1", "2", "3+"}

// RecoveryBucket names the bucket of n recoveries.
func RecoveryBucket(n int) string {
	if n >= 3 {
		return RecoveryBuckets[3]
	}
	return RecoveryBuckets[max(n, 0)]
}
