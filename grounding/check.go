package grounding

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// EngineVersion identifies the checking rules. Stored results carry it so a
// recheck knows which ones an engine change made stale.
const EngineVersion = "1.2.50"

// Verdict is the automatic grounding verdict of one decision (SPEC §3).
type Verdict string

// Verdicts.
const (
	VerdictPass      Verdict = "pass"
	VerdictFail      Verdict = "fail"
	VerdictAmbiguous Verdict = "ambiguous"
)

// Reason codes of SPEC §3, exactly as named there.
const (
	ReasonExecError     = "exec.error"
	ReasonNoObservation = "exec.no_observation"
	ReasonSchema        = "exec.schema"
	ReasonToolUnseen    = "vis.tool_unseen"
	ReasonHiddenLeak    = "vis.hidden_leak"
	ReasonUnsupported   = "vis.unsupported"
	ReasonNormalized    = "vis.normalized"
	ReasonDerived       = "vis.derived"
	ReasonKnowledge     = "vis.knowledge"
	ReasonChoice        = "vis.choice"
	ReasonEcho          = "vis.echo"
	ReasonContradiction = "vis.contradiction"
	ReasonWeak          = "vis.weak"
	ReasonOrder         = "flow.order"
	ReasonUnconfirmed   = "flow.unconfirmed"
	ReasonTermFailed    = "term.failed"
)

// ReasonCodes lists every reason code in display order.
var ReasonCodes = []string{ReasonExecError, ReasonNoObservation, ReasonSchema, ReasonToolUnseen, ReasonHiddenLeak,
	ReasonUnsupported, ReasonEcho, ReasonContradiction, ReasonChoice, ReasonKnowledge, ReasonWeak, ReasonNormalized,
	ReasonDerived, ReasonOrder, ReasonUnconfirmed, ReasonTermFailed}

// Argument evidence statuses.
const (
	StatusLiteral       = "literal"
	StatusNormalized    = "normalized"
	StatusDerived       = "derived"
	StatusEnum          = "enum"
	StatusHiddenOnly    = "hidden_only"
	StatusUnsupported   = "unsupported"
	StatusKnowledge     = "knowledge"
	StatusFreeText      = "free_text"
	StatusChoice        = "choice"
	StatusEcho          = "echo"
	StatusWeak          = "weak"
	StatusContradiction = "contradiction"
)

// Result is the check of one trajectory: R_τ, the workflow indicator and,
// for every decision, e_t, v_t, g_t, the mask and the evidence.
type Result struct {
	Trajectory     string `json:"trajectory"`
	Parent         string `json:"parent"`
	Domain         string `json:"domain,omitempty"`
	SourceIndex    int    `json:"source_index"`
	Profile        string `json:"profile"`
	ProfileVersion string `json:"profile_version"`
	EngineVersion  string `json:"engine_version"`
	// R is R_τ: 1 when the trajectory succeeded (success flag, else reward
	// at or above the profile's threshold).
	R int `json:"r"`
	// Workflow is 1[q_τ ⪯ A_τ]: no trajectory-level workflow rule broken.
	Workflow bool `json:"workflow"`
	// Reasons are the trajectory-level codes: term.failed, flow.order and
	// flow.unconfirmed when the profile makes it trajectory-level.
	Reasons    []string         `json:"reasons,omitempty"`
	Violations []Violation      `json:"violations,omitempty"`
	Decisions  []DecisionResult `json:"decisions"`
}

// Violation is one broken workflow rule.
type Violation struct {
	Code     string `json:"code"`
	Decision int    `json:"decision"` // ordinal of the offending decision
	Message  int    `json:"message"`
	Detail   string `json:"detail"`
	// Trajectory is true when the rule zeroes the whole trajectory, false
	// when only the offending decision.
	Trajectory bool `json:"trajectory"`
}

// DecisionResult is the check of one decision.
type DecisionResult struct {
	Ordinal     int    `json:"ordinal"`
	Message     int    `json:"message"`
	Call        int    `json:"call"` // -1 for a text reply
	Tool        string `json:"tool,omitempty"`
	Observation int    `json:"observation"`
	// Action is the tool's semantic action ("respond" for text replies).
	Action string `json:"action"`
	// E, V and G are e_t, v_t and g_t = e_t·v_t. V and G are 0 for an
	// ambiguous decision until a human decides.
	E int `json:"e"`
	V int `json:"v"`
	G int `json:"g"`
	// Workflow is 0 when the trajectory or this decision broke a rule.
	Workflow bool `json:"workflow"`
	// Mask is m_t = R_τ · workflow · g_t.
	Mask    int     `json:"mask"`
	Verdict Verdict `json:"verdict"`
	// Queued: ambiguous, and a human verdict could change the mask (R_τ=1
	// and the workflow holds).
	Queued bool `json:"queued"`
	// Reasons are the codes that explain the verdict and the mask,
	// including the trajectory-level ones.
	Reasons []string      `json:"reasons"`
	Args    []ArgEvidence `json:"args"`
	// Detail explains execution problems (the error observation's first
	// line, the schema violation).
	Detail string `json:"detail,omitempty"`
}

// IsReply reports whether the decision is a text reply.
func (d *DecisionResult) IsReply() bool { return d.Call < 0 }

// ArgEvidence is the visibility evidence for one argument value (for text
// replies and free text: one id, amount, date or time stated in it).
type ArgEvidence struct {
	// Path is the JSON path in the arguments (flights[0].flight_number), or
	// for a value inside text the field and byte span: content[120:127],
	// summary[4:10].
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
	Role  string          `json:"role"`
	// Status: literal, normalized, derived, enum, hidden_only,
	// unsupported, knowledge, free_text, choice, echo, weak, contradiction.
	Status string `json:"status"`
	// Reason is the code this value contributes ("" for a plain literal).
	Reason string   `json:"reason,omitempty"`
	Where  Evidence `json:"where"`
}

// Evidence says where a value was found.
type Evidence struct {
	// Found: "visible", "schema", "derived", "hidden", "nowhere",
	// "policy" (a policy rule's finding, Note says what) or "tools" (a
	// statement the visible tools contradict, Note says how).
	Found string `json:"found"`
	// Message is the visible message index (-1 when none).
	Message int `json:"message"`
	// Start and End are the byte span in that message's content.
	Start int `json:"start"`
	End   int `json:"end"`
	// JSONPath is the path inside a JSON observation ("" for text).
	JSONPath string `json:"json_path,omitempty"`
	// Normalization describes how the visible form maps to the value.
	Normalization string `json:"normalization,omitempty"`
	// Derivation shows the arithmetic: "152 + 103 = 255".
	Derivation string `json:"derivation,omitempty"`
	// Hidden names the hidden context holding the value: a hidden entry
	// kind ("user_instruction") or "hidden message 12 (teacher_hint)".
	Hidden        string `json:"hidden,omitempty"`
	HiddenEntry   int    `json:"hidden_entry"`
	HiddenMessage int    `json:"hidden_message"`
	// Note adds what else matters: candidates, echoes, confirmations.
	Note string `json:"note,omitempty"`
	// Record is the record a policy finding read (Found "policy"), nil
	// for every other finding and in evidence stored before it existed.
	Record *RecordRef `json:"record,omitempty"`
}

// RecordRef points at the record a policy finding cites: the visible tool
// observation holding it, the record's id, and the byte span where the id
// is first written, quoted, in that observation's content.
type RecordRef struct {
	Message int    `json:"message"`
	ID      string `json:"id"`
	Start   int    `json:"start"`
	End     int    `json:"end"`
}

// String renders the evidence on one line for tables and JSON lines.
func (e Evidence) String() string {
	var b strings.Builder
	switch {
	case e.Found == "visible" && e.Message < 0:
		// Free text as a whole: nothing to point at, the note says why.
		if e.Note != "" {
			return e.Note
		}
		b.WriteString("visible")
	case e.Found == "visible":
		b.WriteString("message ")
		b.WriteString(strconv.Itoa(e.Message))
		if e.JSONPath != "" {
			b.WriteString(" ")
			b.WriteString(e.JSONPath)
		} else {
			b.WriteString(" [")
			b.WriteString(strconv.Itoa(e.Start))
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.End))
			b.WriteString("]")
		}
		if e.Normalization != "" {
			b.WriteString(" after normalization: ")
			b.WriteString(e.Normalization)
		}
	case e.Found == "derived":
		b.WriteString("derived: ")
		b.WriteString(e.Derivation)
	case e.Found == "schema":
		b.WriteString("enum of the visible tool schema")
	case e.Found == "hidden":
		b.WriteString("found only in hidden context: ")
		b.WriteString(e.Hidden)
	case e.Found == "nowhere":
		b.WriteString("not found anywhere")
	case e.Found == "policy":
		b.WriteString("against the policy")
	case e.Found == "tools":
		b.WriteString("contradicted by the visible tools")
	default:
		b.WriteString(e.Found)
	}
	if e.Note != "" {
		b.WriteString("; ")
		b.WriteString(e.Note)
	}
	return b.String()
}

// Check runs every check on t under profile p (nil: ProfileFor(t.Domain)).
// It is pure and deterministic: same trajectory and profile, same result.
func Check(t *Trajectory, p *Profile) Result {
	if p == nil {
		p = ProfileFor(t.Domain)
	}
	if p.compiled == nil {
		// A Profile built in Go rather than parsed: compile on the fly.
		rt, err := compileProfile(p, p.Name)
		if err != nil {
			p = ProfileFor(t.Domain)
		} else {
			p.compiled = rt
		}
	}
	c := checkerPool.Get().(*checker)
	defer checkerPool.Put(c)
	c.reset(t, p)
	return c.run()
}

var checkerPool = sync.Pool{New: func() any { return newChecker() }}

// callInfo is what the walk remembers about one tool call.
type callInfo struct {
	name      string
	args      string    // the arguments as text, converted once
	pathKeys  []pathKey // normalized argument path → canonical key of its value (first per path)
	msg, call int
	obs       int
	err       bool
	argKeys   []string // canonical keys of its argument values (a set; may repeat)
	identEnts []int32  // entries of its identifier arguments
	action    string
}

// pathKey is an argument path and the canonical key of its value.
type pathKey struct{ path, key string }

// keyAt returns the key of the first argument at path, "" when none.
func (ci *callInfo) keyAt(path string) (string, bool) {
	for _, pk := range ci.pathKeys {
		if pk.path == path {
			return pk.key, true
		}
	}
	return "", false
}

// checker holds the state of one Check. It is pooled: maps and buffers are
// reused across trajectories.
type checker struct {
	t  *Trajectory
	p  *Profile
	rt *profileRuntime

	keys keyTable // canonical key → index in ents
	ents []entry
	slab scratchSlab // entry keys and occurrence paths, reused by the next trajectory
	// out holds the strings results keep; like the chunks it is not reset
	// between trajectories: a new slab per trajectory, doubling from 256
	// bytes, allocated half again what the paths took.
	out  strSlab
	vals resultBytes // values found in text, which the result keeps
	// argChunks and reasonChunks hold the decisions' ArgEvidence and
	// reasons; they are not reset: the results own what was cut.
	argChunks    chunk[ArgEvidence]
	reasonChunks chunk[string]
	paths        []string // occurrence paths (occ.path); paths[0] is ""
	buf          mentionBuf
	tbuf         mentionBuf // scratch for text being checked
	rbuf         mentionBuf // the reply of the assistant message being checked
	sc           textScanner
	jw           jsonWalker
	memo         scanMemo // the walker's memo of key and value scans
	nums         []numOcc
	// stated are amounts the agent's replies stated with support.
	stated   []numOcc
	kindSets []kindSet // by kindRuntime.idx; see kindSet
	// records holds (read key entry, value entry) pairs: the value was in
	// the observation of a read called with that key.
	records pairSet
	small   []smallOcc

	calls      []callInfo
	argText    []byte  // the calls' arguments (cutArgs); a new one per trajectory
	identStore []int32 // the calls' identEnts are cut from this
	firstCall  []int32 // message → index in calls of its first call (visible assistant messages)
	obsCall    []int   // message → index in calls it answers, -1
	textMsgs   []int32 // visible non-agent messages with free text (not JSON)
	// tails are the parts of messages too long to index (boundContent);
	// tailRead is how many bytes their searches read.
	tails      []tail
	tailRead   int
	reportRead int // bytes inToolResult read (maxReportSearch)
	// lastReply is the message of the latest agent text reply checked,
	// offerMsg the one whose policy claim offered a transfer (a claim
	// with transfer set), offerNote that claim's note; -1 when none.
	lastReply, offerMsg int
	// prevReply is the message of the agent text reply before lastReply.
	prevReply int
	offerNote string
	relHits   []relHit
	relRead   int // c.userMsgs read into relHits
	// phraseFirst is firstPhrase's memory: per list and phrase, how far
	// the list was searched and the first message that has it.
	phraseFirst map[phraseKey]phraseMemo
	// numsAt are the positions in c.nums of each message's numbers, for
	// the first numsAtN of them (derive).
	numsAt  map[int32][]int32
	numsAtN int
	// orderSeen is the order rule's memory (workflow).
	orderSeen    map[orderKey]orderMemo
	userMsgs     []int32 // visible user messages
	lastWasJSON  bool
	bases        []baseRef  // long system texts indexed through baseCache
	pos          int        // the message being processed
	jsonMsgs     []int32    // visible non-agent JSON observations
	sums         floatTable // value → its first group derivation
	sumGroups    []sumGroup
	sumVals      []float64 // the groups' numbers are cut from this
	groupAt      keyTable  // scratch of groupSumsUpTo: group key → index in sumGroups
	groupVals    []groupVal
	groupKey     []byte
	groupMsg     int // the message groupSumsUpTo walks
	onGroupLeaf  func(w *jsonWalker, kind byte, s string, f float64, start, end int)
	summedTo     int
	pendingMD    []pendingAt
	replyMD      []pendingMD // the undated month/day mentions of the reply being checked
	pending      []int32     // entries named by agent text since the last "yes"
	recent       []int32     // entries named by agent text since the last user message
	turn         int32       // number of user messages so far
	attrBuf      []attr      // backing store of candidates' attributes
	lastUser     int         // last visible user message so far, -1
	lastYes      bool        // whether it was affirmative
	lastNo       bool        // whether it opened with a refusal ("no", "actually", …)
	lastWrite    int         // message of the last successful consequential write, -1
	events       []confirmEvent
	evEnts       []int32             // the events' ents are cut from this
	pendingTexts []int               // agent text messages since the last "yes"
	reported     []int32             // entries named by reports of a write since the last user message
	reportTexts  []int               // agent texts since the last user message that report a write
	evTexts      []int               // the events' texts are cut from this
	partBuf      []byte              // scratch of confirmation: an id part's key
	actionWords  map[string][]string // tool name → actionWords, kept by the pool
	writes       []writeDone

	visibleTools map[string]*toolSchema
	schemaNames  map[string]bool

	// scratch of attrScore's detail
	whyBuf  []string
	whyEnts []int32
	// phraseSeen is attrScore's search of user messages for multi-word
	// attributes, by entry (see attrPhraseSaid).
	phraseSeen []phraseSeen
	// scratch of assistant: the keys of values the agent guessed and of
	// those it introduced without support
	guessed []string
	bad     map[string]bool
	badKeys []string
	// scratch of workflow: the keys of the call's enum values
	choices []string
	// scratch of checkText (never nested)
	stemBuf    []string
	found      []checked
	argScratch []ArgEvidence
	// scratch of checkArgs (never nested)
	onArgLeaf func(w *jsonWalker, kind byte, s string, f float64, start, end int)
	curArgs   string // the arguments argLeaf is walking
	leaves    []argLeaf
	// sibs indexes the call's candidate leaves by parent path for
	// siblingAttr, built when first needed (sibsReady).
	sibs      map[string][]int32
	sibsReady bool
	segBuf    []jsonSeg
	roles     []ArgProfile
	pathBuf   []byte
	keyBuf    []byte
	// argKeys and pathKeys of the trajectory's calls are cut from these
	keyStore  []string
	pathStore []pathKey

	lows     []lowText // per message, made on demand (lowOf)
	lowBuf   []byte    // scratch of lowOf
	quoteBuf []byte    // scratch of quoteTmp

	hidden     keyTable // key → index in hiddenOccs, built on first need
	hiddenOccs []hiddenOcc
	hiddenOK   bool
	hidTexts   []hiddenText
	hbuf       mentionBuf // scratch for scanning hidden context

	// now is the current time the system message states (currentTime).
	now     time.Time
	nowOK   bool
	nowDone bool
	// recIdx and said make the policy rules linear (check_policy.go).
	recIdx []recordIndex
	said   []saidMemo
	// gates are the replies' phrase gates, by message (check_gate.go).
	gates []replyGate
	// claimOccs is conditionClaims' scratch: where a text has claims.
	claimOccs []claimOcc
	// itemOpts remembers, per item id, the options the latest visible
	// result before upTo detailed (checkItemOptions).
	itemOpts map[string]itemOptsMemo
	// itemIdx holds, per tool result itemOptionsOf decoded, the options of
	// every item it details (check_options.go).
	itemIdx map[int]map[string]map[string]string

	res Result
}

type pendingAt struct {
	msg int
	src src
	md  pendingMD
}

// smallOcc is a small integer seen in a non-agent visible message, with the
// words around it, for context matching ("3 checked bags").
type smallOcc struct {
	v       float64
	msg     int32
	start   int32
	end     int32
	jsonKey string
}

func newChecker() *checker {
	c := &checker{}
	c.jw.memo = &c.memo
	c.onArgLeaf = c.argLeaf // one method value, not a closure per call
	c.onGroupLeaf = c.groupLeaf
	return c
}

func (c *checker) reset(t *Trajectory, p *Profile) {
	c.t, c.p, c.rt = t, p, p.compiled
	c.keys.reset()
	c.ents = c.ents[:0]
	c.slab.rewind()
	clear(c.paths)
	c.paths = append(c.paths[:0], "")
	c.nums = c.nums[:0]
	c.stated = c.stated[:0]
	c.resetKinds()
	c.records.reset()
	c.small = c.small[:0]
	c.calls = c.calls[:0]
	c.argText = nil
	c.identStore = c.identStore[:0]
	c.keyStore, c.pathStore = c.keyStore[:0], c.pathStore[:0]
	c.firstCall = c.firstCall[:0]
	c.evEnts = c.evEnts[:0]
	c.evTexts = c.evTexts[:0]
	c.obsCall = c.obsCall[:0]
	c.textMsgs = c.textMsgs[:0]
	c.userMsgs = c.userMsgs[:0]
	c.phraseSeen = c.phraseSeen[:0]
	c.jsonMsgs = c.jsonMsgs[:0]
	c.bases = c.bases[:0]
	c.pos = 0
	c.sums.reset()
	clear(c.sumGroups) // drop the old trajectory's values
	c.sumGroups = c.sumGroups[:0]
	c.sumVals = c.sumVals[:0]
	c.summedTo = -1
	c.pendingMD = c.pendingMD[:0]
	c.pending = c.pending[:0]
	c.recent = c.recent[:0]
	c.turn = 0
	c.attrBuf = c.attrBuf[:0]
	c.lastUser, c.lastYes, c.lastNo, c.lastWrite = -1, false, false, -1
	c.events = c.events[:0]
	c.pendingTexts = c.pendingTexts[:0]
	c.reported = c.reported[:0]
	c.reportTexts = c.reportTexts[:0]
	c.writes = c.writes[:0]
	c.visibleTools = nil
	c.schemaNames = nil
	c.hiddenOK = false
	clear(c.hidTexts)
	c.hidTexts = c.hidTexts[:0]
	clear(c.lows)
	c.lows = slices.Grow(c.lows[:0], len(t.Messages))[:len(t.Messages)]
	c.sc = textScanner{smallAt: c.rt.weakMax}
	c.memo.newTrajectory()
	c.nowDone = false
	c.resetRecords()
	c.reportRead = 0
	c.lastReply, c.prevReply, c.offerMsg, c.offerNote = -1, -1, -1, ""
	c.relHits, c.relRead = c.relHits[:0], 0
	clear(c.phraseFirst)
	clear(c.numsAt)
	c.numsAtN = 0
	clear(c.orderSeen)
	c.res = Result{}
}

func (c *checker) run() Result {
	c.boundContent()
	t := c.t
	r := &c.res
	r.Trajectory = t.ID
	r.Parent = t.Parent()
	r.Domain = t.Domain
	r.SourceIndex = t.Source.Index
	r.Profile = c.p.Name
	r.ProfileVersion = c.p.Version
	r.EngineVersion = EngineVersion
	if c.succeeded() {
		r.R = 1
	}
	r.Workflow = true
	// One result per decision: size the slice once (DecisionResult is large).
	n := 0
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Role == RoleAssistant && !m.IsHidden() {
			if m.Content != "" {
				n++
			}
			n += len(m.ToolCalls)
		}
	}
	if n > 0 { // a trajectory without decisions keeps "decisions": null
		r.Decisions = make([]DecisionResult, 0, n)
	}
	c.pairCalls()
	c.setupTools()
	if t.Request != "" {
		c.indexText(-1, srcRequest, t.Request)
	}
	// The result is complete once the last decision is checked: what the
	// walk learns from later messages (and from that message itself, as
	// history) only ever serves later decisions. finish reads only the
	// decisions and violations.
	last := -1
	for i := range t.Messages {
		if m := &t.Messages[i]; m.Role == RoleAssistant && !m.IsHidden() && (m.Content != "" || len(m.ToolCalls) > 0) {
			last = i
		}
	}
	for i := range t.Messages[:last+1] {
		m := &t.Messages[i]
		c.pos = i
		if m.IsHidden() {
			continue
		}
		switch m.Role {
		case RoleAssistant:
			if i == last {
				c.decide(i)
				break
			}
			c.assistant(i)
		case RoleUser:
			c.indexText(i, srcUser, m.Content)
			c.userMsgs = append(c.userMsgs, int32(i))
			c.userTurn(i, m.Content)
		case RoleTool:
			c.observation(i)
		default: // system and anything else visible
			c.indexText(i, srcSystem, m.Content)
		}
	}
	c.pos = len(t.Messages)
	c.finish()
	out := c.res
	c.res = Result{}
	clear(c.tails) // a pooled checker keeps no long content alive
	c.tails = c.tails[:0]
	return out
}

func (c *checker) succeeded() bool {
	t := c.t
	if t.Success != nil {
		return *t.Success
	}
	return t.Reward != nil && *t.Reward >= c.rt.threshold
}

// pairCalls matches each tool call with the tool message answering it: the
// first later tool message with the call's id that no earlier call claimed
// (logs reuse call ids), or, for calls without ids, the next unclaimed tool
// message before the next assistant message.
func (c *checker) pairCalls() {
	t := c.t
	n := len(t.Messages)
	size := 0
	for i := 0; i < n; i++ {
		c.obsCall = append(c.obsCall, -1)
		c.firstCall = append(c.firstCall, -1)
		if m := &t.Messages[i]; m.Role == RoleAssistant && !m.IsHidden() {
			for k := range m.ToolCalls {
				size += len(m.ToolCalls[k].Arguments)
			}
		}
	}
	// Every call's arguments as text, in one allocation: the evidence's
	// values are slices of it (argValue), so the result keeps it.
	c.argText = make([]byte, 0, size)
	for i := range t.Messages {
		m := &t.Messages[i]
		if m.Role != RoleAssistant || m.IsHidden() {
			continue
		}
		c.firstCall[i] = int32(len(c.calls))
		for k := range m.ToolCalls {
			call := &m.ToolCalls[k]
			ci := len(c.calls)
			info := callInfo{msg: i, call: k, obs: -1, args: c.cutArgs(call.Arguments)}
			for j := i + 1; j < n; j++ {
				o := &t.Messages[j]
				if o.Role == RoleAssistant && !o.IsHidden() {
					break
				}
				if o.Role != RoleTool || o.IsHidden() || c.obsCall[j] >= 0 {
					continue
				}
				if call.ID != "" && o.ToolCallID != "" && o.ToolCallID != call.ID {
					continue
				}
				info.obs = j
				c.obsCall[j] = ci
				info.err = c.isError(o)
				break
			}
			c.calls = append(c.calls, info)
		}
	}
}

// cutArgs copies a call's arguments into argText and returns the copy as
// a string. argText is sized for all of them, so the copy never moves, and
// nothing writes to it again: the string and the evidence's slices of it
// stay as they were cut.
func (c *checker) cutArgs(a json.RawMessage) string {
	if len(a) == 0 {
		return ""
	}
	off := len(c.argText)
	c.argText = append(c.argText, a...)
	return unsafe.String(&c.argText[off], len(a))
}

// argValue is the raw value args[start:end] of a call's arguments (a string
// cut by cutArgs) as a slice of argText, capped so an append to it copies.
func argValue(args string, start, end int) json.RawMessage {
	b := unsafe.Slice(unsafe.StringData(args), len(args))
	return json.RawMessage(b[start:end:end])
}

// isError applies the importer's flag and the profile's error conventions.
func (c *checker) isError(m *Message) bool {
	if m.Error {
		return true
	}
	s := strings.TrimLeft(m.Content, " \t\r\n")
	for _, p := range c.rt.errPrefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	for _, re := range c.rt.errPatterns {
		if re.MatchString(m.Content) {
			return true
		}
	}
	return false
}

// setupTools decides which tool schemas the agent saw: the trajectory's
// tools list, else the profile's schemas when the profile says the domain's
// scaffold gives them to the agent.
func (c *checker) setupTools() {
	switch {
	case len(c.t.Tools) > 0:
		c.visibleTools = make(map[string]*toolSchema, len(c.t.Tools))
		for _, tl := range c.t.Tools {
			c.visibleTools[tl.Name] = cachedToolSchema(tl.Parameters)
		}
	case c.p.ToolsGiven:
		c.visibleTools = c.rt.schemas // shared and only read
	default:
		c.visibleTools = nil
	}
	// Tool names and schema enums are visible values too.
	for name := range c.visibleTools {
		c.buf.reset()
		c.sc.out = &c.buf
		c.sc.ctx = mention{obj: -1, valObj: -1, wholeLeaf: true}
		c.sc.word(name, 0, 0, mWord, nkNone)
		c.indexMentions(&c.buf, -1, srcSchema, nil, nil)
	}
}

// indexText indexes a visible message (or the request, msg -1) that is not
// the agent's: JSON documents are walked, anything else scanned as text.
func (c *checker) indexText(msg int, s src, content string) {
	if s == srcSystem && len(content) >= baseMinLen && msg >= 0 {
		c.indexBase(msg, content)
		return
	}
	c.scanContent(content, &c.buf)
	if msg >= 0 && !c.lastWasJSON {
		c.textMsgs = append(c.textMsgs, int32(msg))
	}
	c.indexMentions(&c.buf, msg, s, nil, nil)
	c.collectSmall(msg, s)
	c.flushPendingMD(msg, s)
	c.refFromMessage(msg, s)
}

// baseCache keeps the indexes of long system texts that recur across a
// pool: the domain policy every τ-bench log opens with. Scans depend on the
// reference date (dates without a year), so it is part of the key.
var baseCache struct {
	sync.RWMutex
	m map[scanKey]*baseIndex
}

type scanKey struct {
	content string
	refYear int
	refDate [3]int
	smallAt float64
}

const (
	baseMinLen   = 1024
	baseCacheMax = 64
)

// baseFor returns the shared index of a long system text.
func (c *checker) baseFor(content string) *baseIndex {
	k := scanKey{content, c.sc.refYear, c.sc.refDate, c.sc.smallAt}
	baseCache.RLock()
	bi := baseCache.m[k]
	baseCache.RUnlock()
	if bi != nil {
		return bi
	}
	var b mentionBuf
	saved := c.sc.out
	c.scanContent(content, &b)
	bi = newBaseIndex(&b, c.lastWasJSON, c.sc.pendingMD)
	bi.low, bi.upper, bi.ascii = strings.ToLower(content), hasASCIIUpper(content), isASCII(content)
	c.sc.pendingMD = c.sc.pendingMD[:0]
	c.sc.out = saved
	baseCache.Lock()
	if baseCache.m == nil {
		baseCache.m = map[scanKey]*baseIndex{}
	}
	if len(baseCache.m) < baseCacheMax {
		baseCache.m[k] = bi
	}
	baseCache.Unlock()
	return bi
}

// indexBase indexes a long system text through its shared base index.
func (c *checker) indexBase(msg int, content string) {
	bi := c.baseFor(content)
	c.bases = append(c.bases, baseRef{msg: msg, idx: bi})
	if !bi.isJSON {
		c.textMsgs = append(c.textMsgs, int32(msg))
	}
	for _, p := range bi.pending {
		c.pendingMD = append(c.pendingMD, pendingAt{msg: msg, src: srcSystem, md: p})
	}
	if d := bi.firstDate; d[0] != 0 {
		if c.sc.refYear == 0 {
			c.sc.refYear = d[0]
			c.resolvePending()
		}
		if c.sc.refDate[0] == 0 {
			c.sc.refDate = d
		}
	}
}

// scanContent fills b with the mentions of a message's content.
func (c *checker) scanContent(content string, b *mentionBuf) {
	b.reset()
	c.sc.out = b
	c.lastWasJSON = false
	if looksJSON(content) && c.jw.walkJSON(content, &c.sc) {
		c.lastWasJSON = true
		return
	}
	c.sc.ctx = mention{obj: -1, valObj: -1}
	c.sc.scan(content, 0)
}

// refFromMessage learns the reference date from the first system message
// that states one ("The current time is 2024-05-15 15:00:00 EST"), and the
// reference year from the first date anywhere.
func (c *checker) refFromMessage(msg int, s src) {
	if c.sc.refYear != 0 && (c.sc.refDate[0] != 0 || s != srcSystem) {
		return
	}
	for i := range c.buf.ms {
		m := &c.buf.ms[i]
		if m.kind != mDate || m.norm != nkNone {
			continue
		}
		k := c.buf.key(m) // d:YYYY-MM-DD
		y, mo, d := digitsValue(string(k[2:6])), digitsValue(string(k[7:9])), digitsValue(string(k[10:12]))
		if c.sc.refYear == 0 {
			c.sc.refYear = y
			c.resolvePending()
		}
		if s == srcSystem && c.sc.refDate[0] == 0 {
			c.sc.refDate = [3]int{y, mo, d}
		}
		return
	}
}

// flushPendingMD keeps the month/day mentions the scanner could not date yet.
func (c *checker) flushPendingMD(msg int, s src) {
	for _, p := range c.sc.pendingMD {
		c.pendingMD = append(c.pendingMD, pendingAt{msg: msg, src: s, md: p})
	}
	c.sc.pendingMD = c.sc.pendingMD[:0]
}

// resolvePending dates the pending month/day mentions once a year is known.
func (c *checker) resolvePending() {
	if len(c.pendingMD) == 0 {
		return
	}
	saved := c.buf
	c.buf = mentionBuf{}
	for _, p := range c.pendingMD {
		c.buf.reset()
		c.sc.out = &c.buf
		c.sc.ctx = mention{obj: -1, valObj: -1}
		c.sc.date(c.sc.refYear, p.md.month, p.md.day, int(p.md.start), int(p.md.end), nkDateYear)
		c.indexMentions(&c.buf, p.msg, p.src, nil, nil)
	}
	c.pendingMD = c.pendingMD[:0]
	c.buf = saved
	c.sc.out = &c.buf
}

// collectSmall remembers small integers of non-agent messages with their
// JSON key, for context matching.
func (c *checker) collectSmall(msg int, s src) {
	if s == srcSystem {
		return // a policy's "3 free checked bags" is a rule, not this user's bags
	}
	for i := range c.buf.ms {
		m := &c.buf.ms[i]
		if !m.small || (m.kind != mNum && m.kind != mMoney) {
			continue
		}
		c.small = append(c.small, smallOcc{v: m.num, msg: int32(msg), start: m.start, end: m.end, jsonKey: c.buf.jsonKey(m)})
	}
}

// userTurn handles a user message: a "yes" confirms what the agent's texts
// proposed since the previous yes.
func (c *checker) userTurn(msg int, content string) {
	c.lastUser = msg
	// The yes/no phrases are matched in the trimmed text, the pick phrases
	// in the whole one; both lowered once.
	trimmed := strings.TrimSpace(content)
	low := c.lowerContent(msg)
	lowTrim := low
	if len(trimmed) != len(content) {
		lowTrim = strings.ToLower(trimmed)
	}
	c.lastNo = c.refusal(lowTrim)
	c.lastYes = !c.lastNo && c.affirmative(lowTrim)
	pick := !c.lastNo && !c.lastYes && c.selection(low) // only a turn that is no "yes" needs a pick
	// What the agent said since the previous user message is what this
	// answer accepts (singles out); a workflow confirmation may also cover
	// what was proposed since the previous yes.
	recent := c.recent
	c.recent = c.recent[:0]
	c.turn++
	// A report of a write ("your new reservation ID is HATHAU") proposes
	// nothing: an answer right after it may accept what it says, but once
	// the user has answered something else it is no listing a later "yes"
	// confirms (task0-trial3: a yes to "try the larger certificate again"
	// is no yes to cancelling the reservation the report named).
	reported, reportTexts := c.reported, c.reportTexts
	c.reported, c.reportTexts = c.reported[:0], c.reportTexts[:0]
	if !c.lastYes && !pick {
		return
	}
	for _, id := range recent {
		e := &c.ents[id]
		e.confirmBy = int32(msg)
		if !e.confirmed.ok() {
			e.confirmed = e.agentText
		}
	}
	for _, id := range c.pending {
		c.ents[id].pending = false
	}
	if c.lastYes && (c.askedToConfirm(c.pendingTexts) || c.askedToConfirm(reportTexts)) {
		e0 := len(c.evEnts)
		c.evEnts = append(c.evEnts, c.pending...) // distinct: an entry is pending once
		c.evEnts = append(c.evEnts, reported...)
		t0 := len(c.evTexts)
		c.evTexts = append(c.evTexts, c.pendingTexts...)
		c.evTexts = append(c.evTexts, reportTexts...)
		ev := confirmEvent{user: msg, texts: c.evTexts[t0:len(c.evTexts):len(c.evTexts)], ents: c.evEnts[e0:len(c.evEnts):len(c.evEnts)]}
		c.events = append(c.events, ev)
	}
	c.pending = c.pending[:0]
	c.pendingTexts = c.pendingTexts[:0]
}

// confirmPrompts are what an agent says when it asks the user to approve
// an action: a "yes" only confirms an action after one of them.
var confirmPrompts = []string{"confirm", "proceed", "(yes/no)", "yes or no", "would you like", "shall i", "should i", "do you want", "go ahead", "is that correct", "is this correct", "are you sure"}

var confirmPromptSet = newPhraseSet(confirmPrompts)

// askedToConfirm reports whether one of the agent texts asked for
// approval.
func (c *checker) askedToConfirm(texts []int) bool {
	for _, m := range texts {
		if confirmPromptSet.contains(c.lowerContent(m)) {
			return true
		}
	}
	return false
}

// confirmEvent is a user "yes" and the agent texts it answered.
type confirmEvent struct {
	user  int
	texts []int
	ents  []int32 // entries the texts named
}

// writeDone is a successful consequential write and the "yes" it used.
type writeDone struct {
	msg, event int
	tool       string
}

// observation indexes a tool message; values that merely repeat the
// arguments of the call it answers are echoes.
func (c *checker) observation(msg int) {
	m := &c.t.Messages[msg]
	var echo []string
	var ci *callInfo
	if k := c.obsCall[msg]; k >= 0 {
		ci = &c.calls[k]
		echo = ci.argKeys
	}
	c.scanContent(m.Content, &c.buf)
	if !c.lastWasJSON {
		c.textMsgs = append(c.textMsgs, int32(msg))
	} else {
		c.jsonMsgs = append(c.jsonMsgs, int32(msg))
	}
	c.indexMentions(&c.buf, msg, srcTool, echo, nil)
	c.collectSmall(msg, srcTool)
	c.flushPendingMD(msg, srcTool)
	c.refFromMessage(msg, srcTool)
	if c.lastWasJSON {
		var recordEnts []int32
		if ci != nil && !ci.err && ci.action == ActionRead {
			recordEnts = ci.identEnts
			for _, e := range ci.identEnts {
				c.ents[e].readKey = true
			}
		}
		if ci != nil && !ci.err && c.rt.outputTools[ci.name] {
			// The observation's own values, for order rules satisfied by
			// a tool's output (a booking returns its reservation).
			recordEnts = append(recordEnts[:len(recordEnts):len(recordEnts)], -1-int32(msg))
		}
		c.kindCandidates(msg, echo, recordEnts)
	}
}

// finish computes the workflow indicator, masks, verdicts and queue flags.
func (c *checker) finish() {
	r := &c.res
	trajBroken := false
	for _, v := range r.Violations {
		if v.Trajectory {
			trajBroken = true
		}
	}
	r.Workflow = !trajBroken
	var trajReasons []string
	if r.R == 0 {
		trajReasons = append(trajReasons, ReasonTermFailed)
	}
	for _, v := range r.Violations {
		if v.Trajectory && !hasString(trajReasons, v.Code) {
			trajReasons = append(trajReasons, v.Code)
		}
	}
	r.Reasons = orderReasons(trajReasons)
	for i := range r.Decisions {
		d := &r.Decisions[i]
		decBroken := false
		for _, v := range r.Violations {
			if v.Decision == d.Ordinal && !v.Trajectory {
				decBroken = true
			}
		}
		d.Workflow = !trajBroken && !decBroken
		d.G = d.E * d.V
		if r.R == 1 && d.Workflow {
			d.Mask = d.G
		}
		d.Queued = d.Verdict == VerdictAmbiguous && r.R == 1 && d.Workflow
		for _, code := range trajReasons {
			if !hasString(d.Reasons, code) {
				d.Reasons = c.reasonChunks.add(d.Reasons, code)
			}
		}
		d.Reasons = orderReasons(d.Reasons)
	}
}

var reasonRank = func() map[string]int {
	m := map[string]int{}
	for i, c := range ReasonCodes {
		m[c] = i
	}
	return m
}()

func orderReasons(rs []string) []string {
	slices.SortStableFunc(rs, func(a, b string) int { return cmp.Compare(reasonRank[a], reasonRank[b]) })
	if rs == nil {
		return []string{}
	}
	return rs
}
