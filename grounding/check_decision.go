package grounding

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Severity of one argument's status for the decision verdict.
const (
	sevOK = iota
	sevAmbiguous
	sevFail
)

// finding is the outcome of checking one value.
type finding struct {
	status string
	reason string
	sev    int
	ev     Evidence
	ent    int32 // the entry the value matched, -1
	how    int   // howSup, howEcho, … (see lookup)
}

func nowhere() Evidence {
	return Evidence{Found: "nowhere", Message: -1, HiddenEntry: -1, HiddenMessage: -1}
}

// againstPolicy is the evidence of a policy finding (check_policy.go): what
// the visible record or the policy says against the decision, in note.
func againstPolicy(note string) Evidence {
	ev := nowhere()
	ev.Found, ev.Note = "policy", note
	return ev
}

// assistant evaluates the decisions of a visible assistant message against
// the history before it, then adds the message to the index as the agent's.
func (c *checker) assistant(i int) {
	m := &c.t.Messages[i]
	first := len(c.res.Decisions)
	prose := c.decide(i)
	// Values the agent introduced without support: tool echoes of them will
	// support nothing.
	// The keys are cut from the trajectory's scratch slab, and the set and
	// list are the checker's, reused by every message (bad stays nil when
	// empty, as indexMentions reads it).
	var bad map[string]bool
	guessed := c.guessed[:0]
	for _, d := range c.res.Decisions[first:] {
		for _, a := range d.Args {
			if a.Status == StatusKnowledge {
				guessed = c.appendValueKeys(guessed, string(a.Value))
			}
			if a.Status == StatusUnsupported || a.Status == StatusHiddenOnly || a.Status == StatusEcho || a.Status == StatusContradiction {
				if bad == nil {
					if c.bad == nil {
						c.bad = map[string]bool{}
					}
					clear(c.bad)
					bad = c.bad
				}
				k0 := len(c.badKeys)
				c.badKeys = c.appendValueKeys(c.badKeys, string(a.Value))
				for _, k := range c.badKeys[k0:] {
					bad[k] = true
				}
				c.badKeys = c.badKeys[:0]
			}
		}
	}
	c.guessed = guessed
	if m.Content != "" {
		b := &c.rbuf
		if !prose {
			c.scanContent(m.Content, &c.buf)
			b = &c.buf
		} else {
			// The month/day mentions the reply's scan could not date wait
			// for the index, after whatever the checks left.
			c.sc.pendingMD = append(c.sc.pendingMD, c.replyMD...)
		}
		c.indexMentions(b, i, srcAgent, nil, bad)
		report := c.reportsWrite(i)
		for j := range b.ms {
			mm := &b.ms[j]
			id := c.mentionEntry(b, mm)
			if id < 0 {
				continue
			}
			e := &c.ents[id]
			e.agentText = occ{msg: int32(i), start: mm.start, end: mm.end, norm: mm.norm, src: srcAgent}
			if report {
				c.reported = append(c.reported, id)
			} else if !e.pending {
				e.pending = true
				c.pending = append(c.pending, id)
			}
			if e.recentTurn != c.turn+1 {
				e.recentTurn = c.turn + 1
				c.recent = append(c.recent, id)
			}
		}
		c.flushPendingMD(i, srcAgent)
		if report {
			c.reportTexts = append(c.reportTexts, i)
		} else {
			c.pendingTexts = append(c.pendingTexts, i)
		}
	}
	for k := range m.ToolCalls {
		call := &m.ToolCalls[k]
		if !call.ArgumentsValid() {
			continue
		}
		c.buf.reset()
		c.sc.out = &c.buf
		if c.jw.walkJSON(c.calls[int(c.firstCall[i])+k].args, &c.sc) {
			c.indexMentions(&c.buf, i, srcAgent, nil, bad)
		}
		c.sc.pendingMD = c.sc.pendingMD[:0]
	}
	for _, k := range guessed {
		if id, ok := c.find(k); ok {
			if e := &c.ents[id]; int(e.agent.msg) == i && !e.sup.ok() {
				e.agentGuess = true
			}
		}
	}
}

// decide checks the decisions of a visible assistant message: its text
// reply, then its calls. It reports whether the reply was scanned as prose
// into c.rbuf.
func (c *checker) decide(i int) bool {
	m := &c.t.Messages[i]
	// Prose is scanned once, for the reply's check and for the index. The
	// month/day mentions it cannot date yet (no year known) are kept in
	// replyMD for the index.
	prose := m.Content != "" && !looksJSON(m.Content)
	c.replyMD = c.replyMD[:0]
	if prose {
		p0 := len(c.sc.pendingMD)
		c.rbuf.reset()
		saved := c.sc.out
		c.sc.out = &c.rbuf
		c.sc.ctx = mention{obj: -1, valObj: -1}
		c.sc.scan(m.Content, 0)
		c.replyMD = append(c.replyMD, c.sc.pendingMD[p0:]...)
		c.sc.pendingMD = c.sc.pendingMD[:0]
		c.sc.out = saved
	}
	first, v0 := len(c.res.Decisions), len(c.res.Violations)
	if m.Content != "" {
		c.replyDecision(i, prose)
	}
	for k := range m.ToolCalls {
		c.callDecision(i, k)
	}
	c.announcesUnconfirmed(first, v0)
	return prose
}

// decodeJSONString decodes a JSON string with escapes. It is apart from
// its callers so that only a string with escapes costs the allocation that
// decoding into a string variable makes.
func decodeJSONString(raw string) (string, bool) {
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return "", false
	}
	return s, true
}

// appendValueKeys appends the canonical keys a JSON value can be looked up
// by to dst, cut from the checker's scratch slab: they live as long as the
// trajectory's check.
func (c *checker) appendValueKeys(dst []string, raw string) []string {
	if len(raw) == 0 {
		return dst
	}
	b := c.keyBuf[:0]
	switch raw[0] {
	case '"':
		s, ok := raw[1:len(raw)-1], true
		if strings.IndexByte(raw, '\\') >= 0 {
			if s, ok = decodeJSONString(raw); !ok {
				return dst
			}
		}
		b = appendStringKey(b, s)
		dst = append(dst, c.slab.cut(b))
		if f, ok := parseNumber(s); ok {
			b = appendNumberKey(b[:0], f)
			dst = append(dst, c.slab.cut(b))
		}
		if y, m, d, ok := parseISODate(s); ok {
			b = appendDateKey(b[:0], y, m, d)
			dst = append(dst, c.slab.cut(b))
		}
	case 't', 'f', 'n':
		b = appendStringKey(b, raw)
		dst = append(dst, c.slab.cut(b))
	default:
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			b = appendNumberKey(b, f)
			dst = append(dst, c.slab.cut(b))
		}
	}
	c.keyBuf = b
	return dst
}

// replyDecision checks an assistant text reply: every id, amount, date and
// time it states must be supported like an argument.
func (c *checker) replyDecision(i int, prescanned bool) {
	m := &c.t.Messages[i]
	d := DecisionResult{Ordinal: len(c.res.Decisions), Message: i, Call: -1, Observation: -1, Action: ActionRespond, E: 1}
	var pre *mentionBuf
	if prescanned {
		pre = &c.rbuf
	}
	sev := c.checkText(&d, "content", m.Content, i, pre, nil)
	if c.rt.claimRules {
		if s := c.conditionClaims(&d, "content", m.Content, c.lowerContent(i), i); s > sev {
			sev = s
		}
	}
	if len(c.rt.claims) > 0 {
		if s := c.policyClaims(&d, "content", m.Content, c.lowerContent(i), i); s > sev {
			sev = s
		}
	}
	if len(c.rt.allowances) > 0 {
		if s := c.allowanceClaims(&d, m.Content, c.lowerContent(i), i); s > sev {
			sev = s
		}
	}
	if c.rt.lastFour {
		if s := c.lastFourClaims(&d, m.Content, c.lowerContent(i), i); s > sev {
			sev = s
		}
	}
	if s := c.foundWithoutRead(&d, m.Content, i); s > sev {
		sev = s
	}
	if s := c.quotedPhrases(&d, m.Content, i); s > sev {
		sev = s
	}
	if len(m.ToolCalls) > 0 {
		if s := c.announcesFailedHandover(&d, i); s > sev {
			sev = s
		}
	}
	if name, ok := c.callAsText(m.Content); ok {
		// The agent wrote its call out instead of making it: nothing ran,
		// and the conversation goes on as if it had.
		d.E = 0
		d.Reasons = c.reasonChunks.add(d.Reasons, ReasonNoObservation)
		d.Detail = "a call of " + name + " written as text: the tool never ran"
	}
	c.prevReply, c.lastReply = c.lastReply, i
	c.settle(&d, sev)
	c.res.Decisions = append(c.res.Decisions, d)
}

// callDecision checks one tool call: execution, tool visibility, schema,
// every argument, and the workflow rules.
func (c *checker) callDecision(i, k int) {
	m := &c.t.Messages[i]
	call := &m.ToolCalls[k]
	ci := &c.calls[int(c.firstCall[i])+k]
	d := DecisionResult{Ordinal: len(c.res.Decisions), Message: i, Call: k, Tool: call.Name, Observation: ci.obs, E: 1}
	d.Action = c.actionOf(call.Name)
	ci.action = d.Action
	var reasons []string
	sev := sevOK
	// Execution validity.
	if !call.ArgumentsValid() {
		d.E = 0
		reasons = append(reasons, ReasonSchema)
		d.Detail = "arguments are not valid JSON"
		if call.RawArguments != "" {
			d.Detail += ": " + clip(call.RawArguments, 80)
		}
	}
	if ci.obs < 0 {
		d.E = 0
		reasons = append(reasons, ReasonNoObservation)
	} else if ci.err {
		d.E = 0
		reasons = append(reasons, ReasonExecError)
		d.Detail = firstLine(c.t.Messages[ci.obs].Content, 160)
	}
	schema, visible := c.visibleTools[call.Name]
	if !visible {
		// Named in the visible history (a system prompt describing the
		// commands, a tool-search result) counts as visibly retrieved.
		if id, ok := c.find(stringKey(call.Name)); ok && c.ents[id].sup.ok() && c.ents[id].sup.src != srcSchema {
			visible = true
		}
	}
	if !visible {
		reasons = append(reasons, ReasonToolUnseen)
		sev = sevFail
	}
	if schema == nil {
		schema = c.rt.schemas[call.Name]
	}
	if call.ArgumentsValid() && schema != nil {
		if p := schema.validate(call.Arguments); p != "" {
			d.E = 0
			reasons = append(reasons, ReasonSchema)
			if d.Detail != "" {
				d.Detail += "; "
			}
			d.Detail += "schema: " + p
		}
	}
	// Arguments.
	ci.argKeys = []string{} // non-nil: its observation is checked for echoes
	if call.ArgumentsValid() {
		if s := c.checkArgs(&d, ci, call, schema, i); s > sev {
			sev = s
		}
	}
	d.Reasons = c.reasonChunks.add(d.Reasons, reasons...)
	if s := c.workflow(&d, ci, call); s > sev {
		sev = s
	}
	if len(c.rt.conditions) > 0 {
		if s := c.conditions(&d, call, i); s > sev {
			sev = s
		}
		// A transfer summary states a policy outcome to the next agent.
		if c.rt.claimRules && d.Action == ActionTransfer && call.ArgumentsValid() {
			if s := c.conditionClaims(&d, "arguments", string(call.Arguments), asciiLower(string(call.Arguments)), i); s > sev {
				sev = s
			}
		}
	}
	// It may also state a rule the policy contradicts, or ask for what
	// the policy denies.
	if len(c.rt.claims) > 0 && d.Action == ActionTransfer && call.ArgumentsValid() {
		if s := c.policyClaims(&d, "arguments", string(call.Arguments), asciiLower(string(call.Arguments)), i); s > sev {
			sev = s
		}
	}
	// Or carry out the transfer the agent's latest reply offered against
	// the policy (a human said to be able to grant what it denies), or
	// the reply before the one the transfer's own message makes (the
	// user asked for the human in between: "I'm happy to transfer you").
	if d.Action == ActionTransfer && c.offerMsg >= 0 && (c.offerMsg == c.lastReply || c.lastReply == i && c.offerMsg == c.prevReply) {
		ev := againstPolicy("carries out the transfer the reply at message " + strconv.Itoa(c.offerMsg) + " offered: " + c.offerNote)
		d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: "policy", Value: c.vals.quote(call.Name), Role: RoleFreeText,
			Status: StatusUnsupported, Reason: ReasonUnsupported, Where: ev})
		sev = max(sev, sevAmbiguous)
	}
	// Or hand over a write that just failed (check_handover.go).
	if d.Action == ActionTransfer {
		if s := c.transferAfterFailedWrite(&d, call, int(c.firstCall[i])+k); s > sev {
			sev = s
		}
	}
	c.settle(&d, sev)
	c.res.Decisions = append(c.res.Decisions, d)
}

// settle turns the collected reasons and severity into e, v and the verdict.
func (c *checker) settle(d *DecisionResult, sev int) {
	for _, a := range d.Args {
		if a.Reason != "" && !hasString(d.Reasons, a.Reason) {
			d.Reasons = c.reasonChunks.add(d.Reasons, a.Reason)
		}
	}
	flowFail := false
	for _, v := range c.res.Violations {
		if v.Decision == d.Ordinal {
			flowFail = true
		}
	}
	switch {
	case d.E == 0 || sev == sevFail || flowFail:
		d.Verdict = VerdictFail
	case sev == sevAmbiguous:
		d.Verdict = VerdictAmbiguous
	default:
		d.Verdict = VerdictPass
	}
	if sev == sevOK {
		d.V = 1
	}
	if d.Args == nil {
		d.Args = []ArgEvidence{}
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if k := strings.IndexByte(s, '\n'); k >= 0 {
		s = s[:k]
	}
	return clip(s, n)
}

// actionOf returns the semantic action of a tool: the profile's, else one
// guessed from its name.
func (c *checker) actionOf(name string) string {
	if t, ok := c.rt.tools[name]; ok {
		return t.action
	}
	n := strings.ToLower(name)
	switch {
	case n == "think" || strings.HasSuffix(n, "_think"):
		return ActionThink
	case strings.Contains(n, "transfer") || strings.Contains(n, "handoff") || strings.Contains(n, "escalate"):
		return ActionTransfer
	case n == "calculate" || n == "calculator" || strings.HasPrefix(n, "calc") || n == "python" || n == "bash" || n == "execute_bash":
		return ActionCompute
	case n == "respond" || n == "finish" || n == "final_answer" || n == "answer":
		return ActionRespond
	}
	for _, p := range []string{"get", "list", "search", "find", "lookup", "read", "fetch", "query", "view", "show", "check", "open"} {
		if strings.HasPrefix(n, p) {
			return ActionRead
		}
	}
	for _, p := range []string{"cancel", "delete", "remove", "refund", "return", "exchange", "pay", "transfer", "submit"} {
		if strings.HasPrefix(n, p) {
			return ActionIrreversibleWrite
		}
	}
	for _, p := range []string{"update", "modify", "book", "create", "set", "add", "send", "change", "edit", "write", "post", "put", "make"} {
		if strings.HasPrefix(n, p) {
			return ActionWrite
		}
	}
	return ""
}

// argLeaf is one scalar of a call's arguments.
type argLeaf struct {
	path  string
	npath string // with [*] for indexes, for profile lookup
	segs  []jsonSeg
	cut   bool // the path was cut (see maxPathSegs): segs are only its start
	kind  byte
	s     string
	f     float64
	raw   string
	start int // of raw in the arguments
}

// propertySchema is the visible schema of the leaf; none when its path was
// cut, whose start would name an ancestor's schema.
func (l *argLeaf) propertySchema(schema *toolSchema) map[string]any {
	if l.cut {
		return nil
	}
	return schema.propertySchema(l.segs)
}

// name is the leaf's argument name: the last key of its path; none when
// the path was cut.
func (l *argLeaf) name() string {
	if l.cut {
		return ""
	}
	for k := len(l.segs) - 1; k >= 0; k-- {
		if l.segs[k].key != "" {
			return l.segs[k].key
		}
	}
	return ""
}

// checkArgs checks every argument value of a call.
func (c *checker) checkArgs(d *DecisionResult, ci *callInfo, call *ToolCall, schema *toolSchema, msg int) int {
	// The leaves, their segments and roles live in scratch reused by every
	// call; the paths, which the evidence keeps, are cut from the slab.
	c.leaves, c.segBuf = c.leaves[:0], c.segBuf[:0]
	args := ci.args
	c.curArgs = args
	c.jw.walkLeaves(args, c.onArgLeaf)
	c.curArgs = ""
	leaves := c.leaves
	tp := c.rt.tools[call.Name]
	// Keys and identifier entries first: echo detection and record lookups
	// need them before any value is judged.
	k0, p0 := len(c.keyStore), len(c.pathStore)
	for _, l := range leaves {
		n := len(c.keyStore)
		c.keyStore = c.appendValueKeys(c.keyStore, l.raw)
		if len(c.keyStore) > n {
			if _, ok := ci.keyAt(l.npath); !ok {
				c.pathStore = append(c.pathStore, pathKey{l.npath, c.keyStore[n]})
				ci.pathKeys = c.pathStore[p0:len(c.pathStore):len(c.pathStore)]
			}
		}
	}
	ci.argKeys = c.keyStore[k0:len(c.keyStore):len(c.keyStore)]
	roles := slices.Grow(c.roles[:0], len(leaves))[:len(leaves)]
	c.roles = roles
	i0 := len(c.identStore) // the call's identEnts are cut from identStore
	for j, l := range leaves {
		roles[j] = c.roleOf(tp, schema, l)
		// The entity a call is keyed by (a reservation, an order): its
		// read's observation is the record that singles out its parts.
		if kr := c.rt.kinds[roles[j].Kind]; kr != nil && kr.spec.Choice && roles[j].Role == RoleIdentifier && l.kind == 's' {
			c.keyBuf = appendStringKey(c.keyBuf[:0], l.s)
			if id, ok := c.findBytes(c.keyBuf); ok {
				c.identStore = append(c.identStore, id)
			}
		}
	}
	if ids := c.identStore[i0:len(c.identStore):len(c.identStore)]; len(ci.identEnts) == 0 {
		ci.identEnts = ids
	} else {
		ci.identEnts = append(ci.identEnts, ids...)
	}
	sev := sevOK
	var policy []ArgEvidence // findings of the policy's compensation rule
	c.sibsReady = false
	if d.Args == nil {
		d.Args = c.argChunks.take(len(leaves))
	}
	for j, l := range leaves {
		ap := roles[j]
		if l.kind == 'z' {
			continue
		}
		var f finding
		switch ap.Role {
		case RoleFreeText:
			if l.kind != 's' {
				f = c.support(l, ap, schema, d, ci, msg)
				break
			}
			s := c.checkText(d, l.path, l.s, msg, nil, ci)
			if s > sev {
				sev = s
			}
			f = finding{status: StatusFreeText, ev: Evidence{Found: "visible", Message: -1, HiddenEntry: -1, HiddenMessage: -1, Note: "free text: only the ids, amounts and dates in it are checked"}}
		default:
			// A count the policy's free allowance settles (checked bags).
			if l.kind == 'n' && len(c.rt.allowances) > 0 {
				if a := c.allowanceFor(call.Name, l.npath); a != nil {
					if af, ok := c.allowance(a, args, l.f, msg); ok {
						f = af
						break
					}
				}
			}
			// An amount the policy grants as compensation (certificates).
			if l.kind == 'n' && len(c.rt.compensations) > 0 {
				if r := c.compensationFor(call.Name, l.npath); r != nil {
					if cf, pol, ok := c.compensation(r, args, l.f, msg); ok {
						if pol != nil {
							policy = append(policy, *pol)
						}
						if cf.status != "" {
							f = cf
							break
						}
					}
				}
			}
			if ap.Role == RoleAmount {
				if sf, ok := c.siblingAttr(j, leaves, roles, msg); ok {
					f = sf
					break
				}
			}
			f = c.support(l, ap, schema, d, ci, msg)
		}
		if f.sev > sev {
			sev = f.sev
		}
		d.Args = c.argChunks.add(d.Args, ArgEvidence{Path: l.path, Value: argValue(args, l.start, l.start+len(l.raw)), Role: ap.Role, Status: f.status, Reason: f.reason, Where: f.ev})
	}
	for _, pol := range policy {
		d.Args = c.argChunks.add(d.Args, pol)
		if pol.Status == StatusContradiction {
			sev = max(sev, sevFail)
		} else {
			sev = max(sev, sevAmbiguous)
		}
	}
	return sev
}

// argLeaf is checkArgs' walkLeaves callback: it records one scalar of the
// arguments in c.curArgs.
func (c *checker) argLeaf(w *jsonWalker, kind byte, s string, f float64, start, end int) {
	c.pathBuf = w.appendPath(c.pathBuf[:0])
	p := c.out.cut(c.pathBuf)
	var segs []jsonSeg
	if !w.pathCutOff() { // a cut path's segments are not read (argLeaf.cut)
		s0 := len(c.segBuf)
		c.segBuf = append(c.segBuf, w.segs...)
		segs = c.segBuf[s0:len(c.segBuf):len(c.segBuf)]
	}
	np := p
	if strings.IndexByte(p, '[') >= 0 {
		// Only this trajectory's checks read the normalized path.
		c.pathBuf = appendNormalizedArgPath(c.pathBuf[:0], p)
		np = c.slab.cut(c.pathBuf)
	}
	c.leaves = append(c.leaves, argLeaf{path: p, npath: np, segs: segs, cut: w.pathCutOff(), kind: kind, s: s, f: f, raw: c.curArgs[start:end], start: start})
}

// siblingAttr supports an amount by the candidate next to it: a payment's
// amount that is the full balance of the gift card it names.
func (c *checker) siblingAttr(j int, leaves []argLeaf, roles []ArgProfile, msg int) (finding, bool) {
	l := leaves[j]
	v, ok := numericValue(l)
	if !ok {
		return finding{}, false
	}
	if !c.sibsReady {
		// The candidates of the call by parent path, once per call: a scan
		// of every leaf per amount was quadratic (150,000 numbers: minutes).
		clear(c.sibs)
		if c.sibs == nil {
			c.sibs = map[string][]int32{}
		}
		for k, o := range leaves {
			if roles[k].Kind != "" && o.kind == 's' {
				pp := parentPath(o.path)
				c.sibs[pp] = append(c.sibs[pp], int32(k))
			}
		}
		c.sibsReady = true
	}
	want := numberKey(v)
	for _, k32 := range c.sibs[parentPath(l.path)] {
		k, o := int(k32), leaves[k32]
		if k == j {
			continue
		}
		ks := c.kindSet(roles[k].Kind)
		if ks == nil {
			continue
		}
		id, ok := c.find(stringKey(o.s))
		if !ok {
			continue
		}
		idx, ok := ks.pos[id]
		if !ok || int(ks.cands[idx].msg) >= msg {
			continue
		}
		for _, a := range ks.cands[idx].attrs {
			if c.ents[a.ent].key == want {
				ev := Evidence{Found: "visible", Message: int(ks.cands[idx].msg), Start: -1, End: -1, HiddenEntry: -1, HiddenMessage: -1}
				if e := &c.ents[a.ent]; e.sup.ok() && int(e.sup.msg) < msg {
					ev, _ = c.visibleEvidence(e.sup, l.raw)
				}
				ev.Note = "the " + a.key + " of " + o.s + " listed at message " + strconv.Itoa(int(ks.cands[idx].msg))
				return finding{status: StatusLiteral, ev: ev, ent: a.ent}, true
			}
		}
	}
	return finding{}, false
}

// parentPath drops the last segment of an argument path.
func parentPath(p string) string {
	if k := strings.LastIndexAny(p, ".["); k >= 0 {
		return p[:k]
	}
	return ""
}

// roleOf resolves an argument's role: the profile, else the visible schema,
// else the argument's name, else the value's shape.
func (c *checker) roleOf(tp *toolRuntime, schema *toolSchema, l argLeaf) ArgProfile {
	if tp != nil {
		if a, ok := tp.args[l.npath]; ok {
			return a
		}
	}
	ps := l.propertySchema(schema)
	if ps != nil {
		if hasEnum(ps) {
			return ArgProfile{Role: RoleEnum}
		}
		switch schemaType(ps) {
		case "boolean":
			return ArgProfile{Role: RoleBoolean}
		case "integer", "number":
			return ArgProfile{Role: RoleAmount}
		}
		if f, _ := ps["format"].(string); f == "date" || f == "date-time" || f == "time" {
			return ArgProfile{Role: RoleDatetime}
		}
	}
	name := strings.ToLower(l.name())
	if r := roleFromName(name); r != "" {
		return ArgProfile{Role: r}
	}
	switch l.kind {
	case 'b':
		return ArgProfile{Role: RoleBoolean}
	case 'n':
		return ArgProfile{Role: RoleAmount}
	}
	if _, _, _, ok := parseISODate(l.s); ok {
		return ArgProfile{Role: RoleDatetime}
	}
	if strings.Count(l.s, " ") >= 3 || len(l.s) > 60 || strings.ContainsAny(l.s, "\n") {
		return ArgProfile{Role: RoleFreeText}
	}
	return ArgProfile{Role: RoleIdentifier}
}

// nameHasPart reports strings.HasSuffix(n, "_"+p) ||
// strings.HasPrefix(n, p+"_") without building the two strings.
func nameHasPart(n, p string) bool {
	if len(n) <= len(p) {
		return false
	}
	if k := len(n) - len(p); n[k-1] == '_' && n[k:] == p {
		return true
	}
	return n[len(p)] == '_' && n[:len(p)] == p
}

func roleFromName(n string) string {
	if n == "" {
		return ""
	}
	has := func(parts ...string) bool {
		for _, p := range parts {
			if n == p || nameHasPart(n, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("summary", "thought", "reason", "description", "message", "text", "content", "query", "command", "cmd",
		"expression", "note", "notes", "comment", "body", "code", "script", "prompt", "instructions", "file_text",
		"old_str", "new_str", "patch", "diff", "search_term", "title"):
		return RoleFreeText
	case has("date", "time", "dob", "at", "day", "datetime", "timestamp", "birthday", "deadline", "until", "since"):
		return RoleDatetime
	case has("amount", "price", "total", "count", "quantity", "qty", "cost", "balance", "fee", "num", "number_of",
		"baggages", "bags", "limit", "size", "percent", "rate"):
		return RoleAmount
	case has("id", "ids", "uuid", "key", "code", "number", "email", "zip", "phone", "name", "path", "file", "url",
		"sku", "username", "handle", "origin", "destination"):
		return RoleIdentifier
	}
	return ""
}

// callMarkers are what a tool call written out as text holds besides the
// tool's name: the keys and tags of the call formats models emit.
var callMarkers = []string{"function_call", "action_input", `"arguments"`, `"parameters"`, `"action"`, "<function", "tool_call", `"name"`}

// callAsText reports whether a text reply is a tool call written out
// instead of made ("<function_call>{"action": "find_user_id_by_email",
// "action_input": {…}}</function_call>"): it names a visible tool as a
// JSON string or an opening call, next to braces and a call format's key.
// The name is the tool named first.
func (c *checker) callAsText(text string) (string, bool) {
	if strings.IndexByte(text, '{') < 0 || !containsAny(text, callMarkers) {
		return "", false
	}
	best, at := "", len(text)
	for name := range c.visibleTools {
		for _, form := range [...]string{`"` + name + `"`, name + "(", "=" + name} {
			if k := strings.Index(text, form); k >= 0 && (k < at || k == at && name < best) {
				best, at = name, k
			}
		}
	}
	return best, best != ""
}

// foundClaims are what a reply says when it reports having found the
// user's records ("I've located your account"), in lower case.
var foundClaims = func() []string {
	var out []string
	for _, subj := range []string{"i've ", "i have ", "i "} {
		for _, verb := range []string{"located", "found", "retrieved", "pulled up", "accessed", "identified"} {
			for _, obj := range []string{"account", "profile", "user id", "user details", "details", "information", "order", "reservation", "booking"} {
				out = append(out, subj+verb+" your "+obj)
			}
		}
	}
	return out
}()

// foundAnchor is what every found claim holds but few replies do. A claim
// is looked for only where the anchor is, at the anchor's offset in the
// claim (foundAt): one search of the reply instead of one per claim.
const foundAnchor = " your "

// foundAt lists, per claim, the anchor's offset in it.
var foundAt = func() []int {
	at := make([]int, len(foundClaims))
	for i, p := range foundClaims {
		if at[i] = strings.Index(p, foundAnchor); at[i] < 0 {
			panic("found claim without the anchor: " + p)
		}
	}
	return at
}()

// firstFoundClaim is the offset in low of the first found claim, -1 when
// none: the least offset of any claim's first occurrence.
func firstFoundClaim(low string) int {
	k := -1
	// The claims are at most maxFoundLead bytes long before their anchor,
	// so an anchor past k+maxFoundLead can only give later claims.
	for off := 0; ; {
		y := strings.Index(low[off:], foundAnchor)
		if y < 0 {
			break
		}
		y += off
		if k >= 0 && y-maxFoundLead > k {
			break
		}
		for i, p := range foundClaims {
			if j := y - foundAt[i]; j >= 0 && (k < 0 || j < k) && strings.HasPrefix(low[j:], p) {
				k = j
			}
		}
		off = y + 1
	}
	return k
}

// maxFoundLead is the longest a found claim is before its anchor.
var maxFoundLead = slices.Max(foundAt)

// foundConditions make a found claim a plan: "once I have located your
// account".
var foundConditions = []string{"once ", "after ", "when ", "if ", "until ", "as soon as", "before "}

// foundWithoutRead fails a reply that says it found the user's records
// ("I've located your account") when no tool call has returned anything
// but an error yet: the visible tools contradict it (retail task 55, after
// a lookup written as text and one that answered "user not found").
func (c *checker) foundWithoutRead(d *DecisionResult, text string, msg int) int {
	if !strings.Contains(text, "your ") && !strings.Contains(text, "Your ") {
		return sevOK
	}
	if !c.mayHold(text, msg, gateFound) {
		return sevOK
	}
	low := c.lowerContent(msg)
	k := firstFoundClaim(low)
	if k < 0 {
		return sevOK
	}
	for j := range c.calls {
		if ci := &c.calls[j]; ci.msg < msg && ci.obs >= 0 && ci.obs < msg && !ci.err && strings.TrimSpace(c.t.Messages[ci.obs].Content) != "" {
			return sevOK
		}
	}
	for s0, end := range sentences(low) {
		if k >= s0 && k < end {
			if containsAny(low[s0:k], foundConditions) {
				return sevOK // "once I have located your account, …"
			}
			a := c.contradictedSpan(s0, text[s0:end], "says the user's records were found, but no tool call has returned anything but an error before this reply")
			a.Where.Found = "tools"
			d.Args = c.argChunks.add(d.Args, a)
			return sevFail
		}
	}
	return sevOK
}

// reportsWrite reports whether agent text at message i answers the result
// of a successful consequential write: only tool messages stand between
// the write's call and it.
func (c *checker) reportsWrite(i int) bool {
	if c.lastWrite < 0 || c.lastWrite >= i {
		return false
	}
	for m := c.lastWrite + 1; m < i; m++ {
		if c.t.Messages[m].Role != RoleTool {
			return false
		}
	}
	return true
}

// announcesUnconfirmed fails the text reply of a message whose own call
// makes a write the user never confirmed: the reply announces or goes with
// that act ("Let me try again to adjust the payment method", sent with a
// second booking nobody listed). decisions[first:] are the message's, the
// reply first, and violations[v0:] the ones its decisions broke: a
// message reads only its own, so a log of many writes stays linear.
func (c *checker) announcesUnconfirmed(first, v0 int) {
	ds := c.res.Decisions[first:]
	if len(ds) < 2 || ds[0].Call >= 0 {
		return
	}
	for _, v := range c.res.Violations[v0:] {
		if v.Code != ReasonUnconfirmed || v.Trajectory || v.Decision <= ds[0].Ordinal || v.Decision > ds[len(ds)-1].Ordinal {
			continue
		}
		k := slices.IndexFunc(ds, func(x DecisionResult) bool { return x.Ordinal == v.Decision })
		if k < 1 {
			continue
		}
		d, call := &ds[0], &ds[k]
		c.violate(d, ReasonUnconfirmed, false, "goes with "+call.Tool+" (call "+strconv.Itoa(call.Call)+"), a write the user never confirmed: "+v.Detail)
		d.Verdict = VerdictFail
		return
	}
}
