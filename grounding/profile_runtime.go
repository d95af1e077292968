package grounding

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// profileRuntime is a profile prepared for checking: compiled patterns,
// schemas and lookup tables. It is built once by ParseProfile and shared.
type profileRuntime struct {
	errPrefixes []string
	errPatterns []*regexp.Regexp
	threshold   float64
	choiceFail  bool
	// lastFour: a kind contradicts on last_four, so replies that name a
	// card by its last four digits are checked (lastFourClaims).
	lastFour     bool
	authored     bool
	choiceAction map[string]bool
	weakMax      float64
	weakTokens   map[string]bool // canonical keys
	yes, no      []string        // lower-case
	pick         []string
	yesSet       *phraseSet // yes and pick, for one-pass search
	pickSet      *phraseSet
	schemas      map[string]*toolSchema
	tools        map[string]*toolRuntime
	kinds        map[string]*kindRuntime
	kindList     []*kindRuntime // sorted by name for determinism
	// kindTails maps the JSON key a candidate value sits under (its own key,
	// or the array's) to the kinds whose patterns may match it; keyKinds are
	// the kinds whose patterns may match map keys; wildKinds match anything.
	kindTails map[string][]*kindRuntime
	// tailLens has bit n of entry b set when kindTails has a key of n
	// bytes (n < 64) starting with byte b, or bit 63 for a longer one:
	// most keys of an observation are no tail, and this answers them
	// without hashing.
	tailLens [256]uint64
	// writeWords are the action words of the write tools, for checking
	// replies that report a write as done.
	writeWords  []toolWords
	keyKinds    []*kindRuntime
	wildKinds   []*kindRuntime
	knowledge   map[string]map[string][]string // table → canonical value key → lower-case aliases
	order       []orderRuntime
	outputTools map[string]bool // tools named by an order rule's after_output
	confirm     *confirmRuntime
	conditions  []conditionRuntime
	claims      []policyClaimRuntime
	// claimPhrases finds the phrases of every list of every claim in one
	// pass over a reply; claimBits maps each phrase to the lists (one bit
	// per list of a claim's all) that hold it, and claims[i].need is the
	// bits a reply must have for claim i to be possible. nil when the
	// claims have more than 64 lists.
	claimPhrases  *phraseSet
	claimBits     map[string]uint64
	claimRules    bool // some condition has claims phrases
	allowances    []allowanceRuntime
	compensations []compensationRuntime
	charges       []chargeRuntime
	sameDay       []sameDayRuntime
	original      []originalRuntime
	upcoming      []upcomingRuntime
	itemOptions   *ItemOptionsRule
	facts         []factRuntime
	// gate finds the phrases of the reply checks in one pass (check_gate.go).
	gate replyGateRuntime
}

type conditionRuntime struct {
	route      *RouteRule // defaults filled; nil when none
	tools      map[string]bool
	arg        string
	rule       string
	within     *WithinRule
	unlessPast string
	describe   string
	allow      []allowRuntime
	// allowedClaims and deniedClaims are the claims phrases, lower-case;
	// claimSet finds any of them in one pass.
	allowedClaims, deniedClaims []string
	claimSet                    *phraseSet
	claimKind                   map[string]uint8 // phrase → claimDenied | claimAllowed
	gate                        uint64           // the claims' bit in the reply gate
}

type policyClaimRuntime struct {
	all         [][]string // lower-case
	first       *phraseSet // all[0], found in one pass
	unless      []string
	unlessReply *phraseSet // nil when none
	unlessUser  *phraseSet // nil when none
	with        *phraseSet // nil when none
	withUser    *phraseSet // nil when none
	userAny     bool       // withUser: any earlier user message, not the latest
	repliesOnly bool       // not checked in call arguments
	onlyOffer   bool       // only the transfer is flagged (TransferOnly)
	need        uint64     // profileRuntime.claimBits a reply must hold
	// unlessResult: lower-case phrases of a visible tool result that make
	// the claim fine.
	unlessResult []string
	unlessAfter  map[string]bool // nil when none
	statements   bool
	questions    bool
	fails        bool // a fail, not ambiguous
	tools        bool // the tools, not the policy, contradict it
	transfer     bool
	note         string
}

type allowRuntime struct {
	field  string
	values []string   // lower-case
	words  *phraseSet // lower-case; nil when none
}

type toolWords struct {
	tool  string
	words []string
}

type toolRuntime struct {
	action string
	args   map[string]ArgProfile // normalized path ("flights[*].date") → spec
}

type kindRuntime struct {
	idx         int // position in profileRuntime.kindList
	name        string
	spec        KindProfile
	recordWords [][]string // phraseWords of spec.RecordPhrases
	patterns    [][]string
	// tailOf is, per pattern, X when the pattern is **.X (X a key), else
	// "": such a pattern matches every path whose last segment is X.
	tailOf     []string
	contradict map[string]bool
}

type orderRuntime struct {
	tools       map[string]bool
	arg         string
	after       map[string]bool
	afterArg    string
	afterOutput map[string]bool
	decision    bool
}

type confirmRuntime struct {
	actions  map[string]bool
	tools    map[string]bool
	except   map[string]bool
	decision bool
	priced   map[string]bool
	unpriced []string // lower-case
	gate     uint64   // unpriced's bit in the reply gate
}

// toolSchema is one tool's parameters schema, compiled.
type toolSchema struct {
	raw    json.RawMessage
	schema *jsonschema.Schema
	err    error          // the schema itself does not compile
	doc    map[string]any // decoded, for role inference (enum, type, format)
}

var defaultYes = []string{"yes", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed", "i confirm", "proceed",
	"go ahead", "sounds good", "that works", "please do", "correct", "that's right", "that is right", "absolutely",
	"definitely", "i agree", "let's do it", "book it", "do it"}

// defaultPick are phrases with which a user selects one of the options the
// agent listed: they single the option out but do not confirm an action.
var defaultPick = []string{"go with", "choose", "i choose", "pick", "i'll take", "i will take", "select", "i prefer", "i'd prefer", "i would prefer"}

var defaultNo = []string{"no", "nope", "not", "don't", "do not", "wait", "hold on", "actually", "cancel that", "never mind", "nevermind"}

func compileProfile(p *Profile, file string) (*profileRuntime, error) {
	rt := &profileRuntime{
		threshold:    1,
		weakMax:      9,
		choiceAction: map[string]bool{ActionWrite: true, ActionIrreversibleWrite: true},
		weakTokens:   map[string]bool{},
		schemas:      map[string]*toolSchema{},
		tools:        map[string]*toolRuntime{},
		kinds:        map[string]*kindRuntime{},
		knowledge:    map[string]map[string][]string{},
		yes:          defaultYes,
		no:           defaultNo,
		pick:         defaultPick,
	}
	bad := func(key, format string, args ...any) error {
		return &ProfileError{File: file, Key: key, Problem: fmt.Sprintf(format, args...)}
	}
	rt.errPrefixes = p.Errors.Prefixes
	for _, s := range p.Errors.Patterns {
		rt.errPatterns = append(rt.errPatterns, regexp.MustCompile(s)) // validated
	}
	if p.Success.RewardThreshold != nil {
		rt.threshold = *p.Success.RewardThreshold
	}
	rt.choiceFail = p.Choice == "fail"
	rt.authored = p.Authored
	if len(p.ChoiceActions) > 0 {
		rt.choiceAction = map[string]bool{}
		for _, a := range p.ChoiceActions {
			rt.choiceAction[a] = true
		}
	}
	if p.Weak.MaxInt != nil {
		rt.weakMax = float64(*p.Weak.MaxInt)
	}
	for _, t := range p.Weak.Tokens {
		rt.weakTokens[stringKey(t)] = true
	}
	for i, s := range p.Schemas {
		ts := compileToolSchema(s.Parameters)
		if ts.err != nil {
			return nil, bad(fmt.Sprintf("schemas[%d].parameters", i), "not a usable JSON Schema: %v", ts.err)
		}
		rt.schemas[s.Name] = ts
	}
	for _, name := range sortedKeys(p.Tools) {
		tp := p.Tools[name]
		if tp.Action != ActionWrite && tp.Action != ActionIrreversibleWrite {
			continue
		}
		var ws []string
		for _, w := range actionWords(name) {
			if w != "flight" && w != "reservation" { // named by nearly every sentence
				ws = append(ws, w)
			}
		}
		if len(ws) > 0 {
			rt.writeWords = append(rt.writeWords, toolWords{tool: name, words: ws})
		}
	}
	for name, tp := range p.Tools {
		tr := &toolRuntime{action: tp.Action, args: map[string]ArgProfile{}}
		for path, a := range tp.Args {
			tr.args[normalizeArgPath(path)] = a
		}
		rt.tools[name] = tr
	}
	for name, k := range p.Kinds {
		if slices.Contains(k.Contradict, "last_four") {
			rt.lastFour = true
		}
		kr := &kindRuntime{name: name, spec: k, contradict: map[string]bool{}}
		for _, p := range k.RecordPhrases {
			kr.recordWords = append(kr.recordWords, phraseWords(p))
		}
		for _, pat := range k.Paths {
			segs := splitPattern(pat)
			tail := ""
			if len(segs) == 2 && segs[0] == "**" && segs[1] != "*" && segs[1] != "**" {
				tail = segs[1]
			}
			kr.patterns = append(kr.patterns, segs)
			kr.tailOf = append(kr.tailOf, tail)
		}
		for _, c := range k.Contradict {
			kr.contradict[c] = true
		}
		rt.kinds[name] = kr
	}
	rt.kindTails = map[string][]*kindRuntime{}
	for _, name := range sortedKeys(rt.kinds) {
		k := rt.kinds[name]
		k.idx = len(rt.kindList)
		rt.kindList = append(rt.kindList, k)
		tails, keyed, wild := map[string]bool{}, false, false
		for _, pat := range k.patterns {
			last := pat[len(pat)-1]
			switch {
			case last != "*" && last != "**":
				tails[last] = true
			case len(pat) >= 2 && pat[len(pat)-2] != "*" && pat[len(pat)-2] != "**":
				tails[pat[len(pat)-2]] = true // array items under that key
				keyed = true                  // or the keys of a map under it
			default:
				wild = true
			}
		}
		for _, t := range sortedKeys(tails) {
			rt.kindTails[t] = append(rt.kindTails[t], k)
			if t != "" {
				rt.tailLens[t[0]] |= 1 << min(len(t), 63)
			}
		}
		if keyed {
			rt.keyKinds = append(rt.keyKinds, k)
		}
		if wild {
			rt.wildKinds = append(rt.wildKinds, k)
		}
	}
	for table, m := range p.Knowledge {
		t := map[string][]string{}
		for val, aliases := range m {
			low := make([]string, 0, len(aliases))
			for _, a := range aliases {
				low = append(low, strings.ToLower(strings.TrimSpace(a)))
			}
			t[stringKey(val)] = low
		}
		rt.knowledge[table] = t
	}
	for i, r := range p.Workflow.Order {
		o := orderRuntime{tools: setOf(r.Tools), arg: normalizeArgPath(r.Arg), after: setOf(r.After), afterArg: normalizeArgPath(r.AfterArg),
			afterOutput: setOf(r.AfterOutput), decision: r.Level == "decision"}
		if r.AfterArg == "" {
			o.afterArg = o.arg
		}
		if len(o.tools) == 0 || len(o.after) == 0 {
			return nil, bad(fmt.Sprintf("workflow.order[%d]", i), "tools and after must not be empty")
		}
		rt.order = append(rt.order, o)
		for t := range o.afterOutput {
			if rt.outputTools == nil {
				rt.outputTools = map[string]bool{}
			}
			rt.outputTools[t] = true
		}
	}
	if c := p.Workflow.Confirm; c != nil {
		rt.confirm = &confirmRuntime{actions: setOf(c.Actions), tools: setOf(c.Tools), except: setOf(c.Except), decision: c.Level != "trajectory",
			priced: setOf(c.Priced), unpriced: lowerAll(c.Unpriced)}
		if len(c.Yes) > 0 {
			rt.yes = lowerAll(c.Yes)
		}
		if len(c.No) > 0 {
			rt.no = lowerAll(c.No)
		}
	}
	for _, r := range p.Workflow.Conditions {
		cr := conditionRuntime{tools: setOf(r.Tools), arg: r.Arg, rule: r.Rule, within: r.Within, unlessPast: r.UnlessPast, describe: r.Describe}
		if ro := r.Route; ro != nil {
			rr := *ro
			rr.Origin = cmp.Or(rr.Origin, "origin")
			rr.Destination = cmp.Or(rr.Destination, "destination")
			rr.Trip = cmp.Or(rr.Trip, "flight_type")
			cr.route = &rr
		}
		for _, a := range r.Allow {
			ar := allowRuntime{field: a.Field, values: lowerAll(a.Values)}
			if len(a.UserWords) > 0 {
				ar.words = newPhraseSet(lowerAll(a.UserWords))
			}
			cr.allow = append(cr.allow, ar)
		}
		if r.Claims != nil {
			cr.allowedClaims, cr.deniedClaims = lowerAll(r.Claims.Allowed), lowerAll(r.Claims.Denied)
			cr.claimSet = newPhraseSet(append(slices.Clip(cr.allowedClaims), cr.deniedClaims...))
			cr.claimKind = map[string]uint8{}
			for _, p := range cr.deniedClaims {
				cr.claimKind[p] |= claimDenied
			}
			for _, p := range cr.allowedClaims {
				cr.claimKind[p] |= claimAllowed
			}
			rt.claimRules = true
		}
		rt.conditions = append(rt.conditions, cr)
	}
	for _, a := range p.Allowances {
		ar := allowanceRuntime{AllowanceRule: a, tools: setOf(a.Tools), free: map[string]map[string]int{}}
		for tier, classes := range a.Free {
			t := map[string]int{}
			for class, n := range classes {
				t[strings.ToLower(class)] = n
			}
			ar.free[strings.ToLower(tier)] = t
		}
		ar.items = lowerAll(a.Items)
		classes := map[string]bool{}
		for _, t := range ar.free {
			for class := range t {
				classes[class] = true
			}
		}
		ar.tierWords = allowanceWords(slices.Sorted(maps.Keys(ar.free)))
		ar.classWords = allowanceWords(slices.Sorted(maps.Keys(classes)))
		rt.allowances = append(rt.allowances, ar)
	}
	for _, cr := range p.Compensations {
		rt.compensations = append(rt.compensations, compensationRuntime{CompensationRule: cr, tools: setOf(cr.Tools)})
	}
	for _, cr := range p.Charges {
		rt.charges = append(rt.charges, chargeRuntime{ChargeRule: cr, tools: setOf(cr.Tools)})
	}
	for _, op := range p.OriginalPayment {
		rt.original = append(rt.original, originalRuntime{OriginalPaymentRule: op, phrases: lowerAll(op.Phrases)})
	}
	rt.itemOptions = p.ItemOptions
	for _, rf := range p.RecordFacts {
		rt.facts = append(rt.facts, factRuntime{RecordFactRule: rf, phrases: lowerAll(rf.Phrases)})
	}
	for _, ut := range p.UpcomingTotal {
		rt.upcoming = append(rt.upcoming, upcomingRuntime{UpcomingTotalRule: ut, phrases: lowerAll(ut.Phrases)})
	}
	for _, sd := range p.SameDay {
		rt.sameDay = append(rt.sameDay, sameDayRuntime{SameDayRule: sd, claims: lowerAll(sd.Claims), none: lowerAll(sd.None)})
	}
	for _, pc := range p.PolicyClaims {
		r := policyClaimRuntime{unless: lowerAll(pc.Unless), note: "states a rule the policy contradicts: " + pc.Note,
			statements: pc.Statements, questions: pc.Questions, unlessResult: lowerAll(pc.UnlessResult), transfer: pc.Transfer || pc.TransferOnly}
		if len(pc.UnlessAfter) > 0 {
			r.unlessAfter = setOf(pc.UnlessAfter)
		}
		if len(pc.UnlessReply) > 0 {
			r.unlessReply = newPhraseSet(lowerAll(pc.UnlessReply))
		}
		if pc.Fact {
			r.note = "states what no visible tool result shows: " + pc.Note
		}
		if pc.Asks {
			r.note = "asks the user what the tools show: " + pc.Note
		}
		if pc.ContradictsTools {
			r.note, r.fails, r.tools = pc.Note, true, true
		}
		r.fails = r.fails || pc.Fails
		r.repliesOnly = pc.RepliesOnly || pc.TransferOnly
		r.onlyOffer = pc.TransferOnly
		if len(pc.With) > 0 {
			r.with = newPhraseSet(lowerAll(pc.With))
		}
		if len(pc.WithUser) > 0 {
			r.withUser, r.userAny = newPhraseSet(lowerAll(pc.WithUser)), pc.WithUserAny
		}
		if len(pc.UnlessUser) > 0 {
			r.unlessUser = newPhraseSet(lowerAll(pc.UnlessUser))
		}
		for _, g := range pc.All {
			r.all = append(r.all, lowerAll(g))
		}
		if len(r.all) > 0 {
			r.first = newPhraseSet(r.all[0])
		}
		rt.claims = append(rt.claims, r)
	}
	lists := 0
	for _, r := range rt.claims {
		lists += len(r.all)
	}
	if lists > 0 && lists <= 64 {
		rt.claimBits = map[string]uint64{}
		var phrases []string
		bit := 0
		for i := range rt.claims {
			r := &rt.claims[i]
			for _, g := range r.all {
				for _, p := range g {
					if _, ok := rt.claimBits[p]; !ok {
						phrases = append(phrases, p)
					}
					rt.claimBits[p] |= 1 << bit
				}
				r.need |= 1 << bit
				bit++
			}
		}
		rt.claimPhrases = newPhraseSet(phrases)
	}
	rt.yesSet, rt.pickSet = newPhraseSet(rt.yes), newPhraseSet(rt.pick)
	rt.gate = newReplyGateRuntime(rt)
	return rt, nil
}

func setOf(list []string) map[string]bool {
	m := make(map[string]bool, len(list))
	for _, s := range list {
		m[s] = true
	}
	return m
}

func lowerAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ToLower(s)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// normalizeArgPath turns every [n] into [*]: flights[0].date → flights[*].date.
func normalizeArgPath(p string) string {
	if strings.IndexByte(p, '[') < 0 {
		return p
	}
	return string(appendNormalizedArgPath(nil, p))
}

// appendNormalizedArgPath appends normalizeArgPath(p) to b.
func appendNormalizedArgPath(b []byte, p string) []byte {
	for i := 0; i < len(p); i++ {
		if p[i] == '[' {
			e := strings.IndexByte(p[i:], ']')
			if e > 1 && onlyDigits(p[i+1:i+e]) {
				b = append(b, "[*]"...)
				i += e
				continue
			}
		}
		b = append(b, p[i])
	}
	return b
}

// schemaCache shares compiled schemas across trajectories: a pool of logs
// usually repeats the same tools list on every line.
var schemaCache struct {
	sync.Mutex
	seed maphash.Seed
	m    map[uint64]*toolSchema
}

const schemaCacheMax = 4096

func cachedToolSchema(raw json.RawMessage) *toolSchema {
	schemaCache.Lock()
	if schemaCache.m == nil {
		schemaCache.m = map[uint64]*toolSchema{}
		schemaCache.seed = maphash.MakeSeed()
	}
	h := maphash.Bytes(schemaCache.seed, raw)
	ts, ok := schemaCache.m[h]
	schemaCache.Unlock()
	if ok && bytes.Equal(ts.raw, raw) {
		return ts
	}
	ts = compileToolSchema(raw)
	schemaCache.Lock()
	if len(schemaCache.m) < schemaCacheMax {
		schemaCache.m[h] = ts
	}
	schemaCache.Unlock()
	return ts
}

// maxSchemaDepth bounds the nesting of a tool schema the checks compile.
// Tool lists come from logs, and compiling costs grow with the cube of the
// nesting (santhosh-tekuri/jsonschema): 1,000 levels of {"properties":
// {"a": took 5 s and 9 GB, 2,000 levels 38 s and 70 GB; within the depth
// bound it still allocates some 500 bytes per byte of schema. Real tool
// schemas nest a handful of levels in a few KB (3.2 KB the largest seen);
// a deeper or larger one is not used, like an invalid one.
const (
	maxSchemaDepth = 64
	maxSchemaBytes = 256 << 10
)

// jsonDepth returns how deep raw, a JSON document, nests objects and
// arrays, without recursion. Brackets inside strings do not count.
func jsonDepth(raw []byte) int {
	depth, max := 0, 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			for i++; i < len(raw) && raw[i] != '"'; i++ {
				if raw[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			if depth > max {
				max = depth
			}
		case '}', ']':
			depth--
		}
	}
	return max
}

// compileToolSchema compiles a tool's parameters. A missing schema accepts
// any object.
func compileToolSchema(raw json.RawMessage) *toolSchema {
	ts := &toolSchema{raw: append(json.RawMessage(nil), raw...)}
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return ts
	}
	if len(raw) > maxSchemaBytes {
		ts.err = fmt.Errorf("parameters of %d bytes, more than %d", len(raw), maxSchemaBytes)
		return ts
	}
	if d := jsonDepth(raw); d > maxSchemaDepth {
		ts.err = fmt.Errorf("parameters nested %d levels deep, more than %d", d, maxSchemaDepth)
		return ts
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		ts.err = err
		return ts
	}
	m, ok := doc.(map[string]any)
	if !ok {
		ts.err = errors.New("parameters must be a JSON object")
		return ts
	}
	ts.doc = m
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///parameters.json", doc); err != nil {
		ts.err = err
		return ts
	}
	ts.schema, ts.err = c.Compile("mem:///parameters.json")
	return ts
}

// validateMemo remembers the outcome of validating a call's arguments: logs
// repeat the same calls (every trial of a task looks the same user up), and
// validating decodes the arguments into maps and walks the schema, which
// costs more than all the other checks of a typical read. The outcome is a
// pure function of the compiled schema and the argument bytes. The memo is
// shared by all checks and bounded in bytes; once full it stops growing.
var validateMemo struct {
	sync.RWMutex
	m     map[validateKey]string
	bytes int
}

type validateKey struct {
	ts   *toolSchema
	args string
}

const (
	validateMemoMaxBytes = 8 << 20
	validateMemoMaxArgs  = 4 << 10 // longer arguments are validated every time
)

// validate checks decoded-from-JSON arguments against the schema and returns
// a one-line problem, or "".
func (ts *toolSchema) validate(args json.RawMessage) string {
	if ts == nil || ts.schema == nil {
		return ""
	}
	if len(args) > validateMemoMaxArgs {
		return ts.validateNow(args)
	}
	validateMemo.RLock()
	p, ok := validateMemo.m[validateKey{ts, string(args)}]
	validateMemo.RUnlock()
	if ok {
		return p
	}
	p = ts.validateNow(args)
	validateMemo.Lock()
	if validateMemo.m == nil {
		validateMemo.m = map[validateKey]string{}
	}
	if n := len(args) + len(p) + 64; validateMemo.bytes+n <= validateMemoMaxBytes {
		k := validateKey{ts, string(args)}
		if _, dup := validateMemo.m[k]; !dup {
			validateMemo.m[k] = p
			validateMemo.bytes += n
		}
	}
	validateMemo.Unlock()
	return p
}

// validateNow is validate without the memo.
func (ts *toolSchema) validateNow(args json.RawMessage) string {
	inst, ok := decodeAny(string(args))
	if !ok {
		return "arguments are not valid JSON"
	}
	err := ts.schema.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return schemaProblem(ve)
	}
	return err.Error()
}

// schemaProblem renders the innermost validation errors on one line:
// "/flights/0: missing property 'date'".
func schemaProblem(ve *jsonschema.ValidationError) string {
	printer := message.NewPrinter(language.English)
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := "/" + strings.Join(e.InstanceLocation, "/")
			leaves = append(leaves, loc+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], "…")
	}
	return strings.Join(leaves, "; ")
}

// propertySchema finds the schema of an argument path inside a tool's
// parameters, following properties, items and local $refs.
func (ts *toolSchema) propertySchema(path []jsonSeg) map[string]any {
	if ts == nil || ts.doc == nil {
		return nil
	}
	cur := ts.doc
	for _, s := range path {
		cur = ts.resolve(cur)
		if cur == nil {
			return nil
		}
		if s.key == "" && s.index >= 0 {
			items, _ := cur["items"].(map[string]any)
			cur = firstAlternative(ts.resolve(items), ts)
			continue
		}
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[s.key].(map[string]any)
		cur = next
	}
	return firstAlternative(ts.resolve(cur), ts)
}

// resolve follows a local "$ref": "#/$defs/X" (or #/definitions/X).
func (ts *toolSchema) resolve(s map[string]any) map[string]any {
	for i := 0; i < 8 && s != nil; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		if !strings.HasPrefix(ref, "#/") {
			return s
		}
		cur := any(ts.doc)
		for _, part := range strings.Split(ref[2:], "/") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		s, _ = cur.(map[string]any)
	}
	return s
}

// firstAlternative picks the first branch of anyOf/oneOf that has
// properties or a type (τ² schemas wrap items in anyOf).
func firstAlternative(s map[string]any, ts *toolSchema) map[string]any {
	if s == nil {
		return nil
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return ts.resolve(m)
			}
		}
	}
	return s
}

// hasEnum reports whether schema s lists allowed values (enum or const).
func hasEnum(s map[string]any) bool {
	var buf []byte
	found := false
	eachEnum(s, func(string) bool { found = true; return false }, &buf)
	return found
}

// enumHas reports whether key is the canonical key of one of the values
// schema s allows; buf is scratch for the keys, which it makes no strings of.
func enumHas(s map[string]any, key string, buf *[]byte) bool {
	found := false
	eachEnum(s, func(k string) bool { found = k == key; return !found }, buf)
	return found
}

// eachEnum calls yield with the canonical key of each value schema s
// allows (its enum, then its const), built in *buf and valid only during the
// call, until yield returns false.
func eachEnum(s map[string]any, yield func(string) bool, buf *[]byte) {
	if s == nil {
		return
	}
	one := func(v any) bool {
		b := (*buf)[:0]
		switch x := v.(type) {
		case string:
			b = appendStringKey(b, x)
		case json.Number:
			f, err := strconv.ParseFloat(string(x), 64)
			if err != nil {
				return true
			}
			b = appendNumberKey(b, f)
		case bool:
			b = appendStringKey(b, strconv.FormatBool(x))
		default:
			return true
		}
		*buf = b
		return yield(unsafe.String(unsafe.SliceData(b), len(b)))
	}
	if e, ok := s["enum"].([]any); ok {
		for _, v := range e {
			if !one(v) {
				return
			}
		}
	}
	if c, ok := s["const"]; ok {
		one(c)
	}
}

func schemaType(s map[string]any) string {
	if s == nil {
		return ""
	}
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if str, ok := e.(string); ok && str != "null" {
				return str
			}
		}
	}
	return ""
}

// decodeAny decodes a JSON document into the values jsonschema validates
// (maps, slices, json.Number, strings, booleans, nil). It is a small
// recursive-descent decoder: arguments are validated for every call, and
// this is several times cheaper than a json.Decoder per call.
func decodeAny(src string) (any, bool) {
	d := anyDecoder{src: src}
	v := d.value(0)
	d.ws()
	return v, !d.bad && d.pos == len(src)
}

type anyDecoder struct {
	src string
	pos int
	bad bool
}

func (d *anyDecoder) ws() {
	for d.pos < len(d.src) && spaceByte(d.src[d.pos]) {
		d.pos++
	}
}

func (d *anyDecoder) value(depth int) any {
	d.ws()
	if d.pos >= len(d.src) || depth > 512 {
		d.bad = true
		return nil
	}
	switch c := d.src[d.pos]; {
	case c == '{':
		d.pos++
		m := map[string]any{}
		d.ws()
		if d.pos < len(d.src) && d.src[d.pos] == '}' {
			d.pos++
			return m
		}
		for !d.bad {
			d.ws()
			k, ok := d.str()
			if !ok {
				d.bad = true
				return nil
			}
			d.ws()
			if d.pos >= len(d.src) || d.src[d.pos] != ':' {
				d.bad = true
				return nil
			}
			d.pos++
			m[k] = d.value(depth + 1)
			d.ws()
			if d.pos < len(d.src) && d.src[d.pos] == ',' {
				d.pos++
				continue
			}
			if d.pos < len(d.src) && d.src[d.pos] == '}' {
				d.pos++
				return m
			}
			d.bad = true
		}
		return nil
	case c == '[':
		d.pos++
		a := []any{}
		d.ws()
		if d.pos < len(d.src) && d.src[d.pos] == ']' {
			d.pos++
			return a
		}
		for !d.bad {
			a = append(a, d.value(depth+1))
			d.ws()
			if d.pos < len(d.src) && d.src[d.pos] == ',' {
				d.pos++
				continue
			}
			if d.pos < len(d.src) && d.src[d.pos] == ']' {
				d.pos++
				return a
			}
			d.bad = true
		}
		return nil
	case c == '"':
		s, ok := d.str()
		if !ok {
			d.bad = true
		}
		return s
	case strings.HasPrefix(d.src[d.pos:], "true"):
		d.pos += 4
		return true
	case strings.HasPrefix(d.src[d.pos:], "false"):
		d.pos += 5
		return false
	case strings.HasPrefix(d.src[d.pos:], "null"):
		d.pos += 4
		return nil
	default:
		start := d.pos
		for d.pos < len(d.src) {
			c := d.src[d.pos]
			if digitByte(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E' {
				d.pos++
				continue
			}
			break
		}
		n := json.Number(d.src[start:d.pos])
		if _, err := n.Float64(); err != nil || start == d.pos {
			d.bad = true
			return nil
		}
		return n
	}
}

func (d *anyDecoder) str() (string, bool) {
	if d.pos >= len(d.src) || d.src[d.pos] != '"' {
		return "", false
	}
	i := d.pos + 1
	esc := false
	for i < len(d.src) && d.src[i] != '"' {
		if d.src[i] == '\\' {
			esc = true
			i++
		}
		i++
	}
	if i >= len(d.src) {
		return "", false
	}
	raw := d.src[d.pos : i+1]
	d.pos = i + 1
	if !esc {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal([]byte(raw), &s) != nil {
		return "", false
	}
	return s, true
}

// tailKinds returns the kinds whose patterns end at JSON key k
// (kindTails[k]).
func (rt *profileRuntime) tailKinds(k string) []*kindRuntime {
	if k != "" && rt.tailLens[k[0]]&(1<<min(len(k), 63)) == 0 {
		return nil
	}
	return rt.kindTails[k]
}
