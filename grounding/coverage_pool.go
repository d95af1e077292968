package grounding

import (
	"cmp"
	"slices"
	"strings"
)

// PoolTrajectory is one trajectory as coverage sees it. The store fills it
// from what it keeps per trajectory; nothing here needs the messages.
type PoolTrajectory struct {
	// ID is the store's trajectory id and Run its run id; opaque here.
	ID     int64  `json:"id"`
	Run    int64  `json:"run"`
	ExtID  string `json:"ext_id"`
	Parent string `json:"parent"`
	Domain string `json:"domain"`
	// Task groups parents for the breadth stage of structured selection;
	// empty means Domain. (A τ-bench task is one parent, its trials the
	// parent's trajectories, so the store groups by domain.)
	Task string `json:"task,omitempty"`
	// Path is the canonical path key, "" unless the trajectory is
	// certified.
	Path string `json:"path"`
	// Supervised counts decisions with m_t = 1.
	Supervised int `json:"supervised"`
	// Tokens are its certified target tokens (CertifiedTokens).
	Tokens int `json:"tokens"`
}

// Certified reports whether the trajectory has a canonical path.
func (t *PoolTrajectory) Certified() bool { return t.Path != "" }

// PoolPath is one distinct canonical path of a pool.
type PoolPath struct {
	Key string `json:"key"`
	ID  string `json:"id"` // PathID(Key)
	PathShape
	// Trajectories are the certified trajectories with this path, as
	// indexes into Pool.Trajectories; their number is the support n_S(p).
	Trajectories []int32 `json:"-"`
	atoms        []int32
}

// Support is n_S(p): the certified trajectories of the pool with this path.
func (p *PoolPath) Support() int { return len(p.Trajectories) }

// Recovery reports whether the path recovers from a real error.
func (p *PoolPath) Recovery() bool { return p.Recoveries > 0 }

// PoolParent is one parent interaction (run, parent id) of a pool: the unit
// a selection budget counts.
type PoolParent struct {
	Run  int64  `json:"run"`
	ID   string `json:"id"`
	Task string `json:"task"`
	// Trajectories are all its trajectories; Certified the certified ones
	// (indexes into Pool.Trajectories).
	Trajectories []int32 `json:"-"`
	Certified    []int32 `json:"-"`
	paths        []pathCount
	atoms        []int32
}

type pathCount struct{ path, n int32 }

// Pool is a set of trajectories (one run or several) prepared for coverage:
// distinct paths with their supports, parents, atoms and the three heatmaps.
// Everything in it is independent of the model scale; Analyze adds the
// scale. Build it once per pool with NewPool and share it: it is read-only
// afterwards.
type Pool struct {
	// Trajectories are sorted by (run, ext id, id), whatever the input order.
	Trajectories []PoolTrajectory
	// Paths are the distinct canonical paths, sorted by key.
	Paths []PoolPath
	// Parents are sorted by (run, id).
	Parents []PoolParent
	// Atoms are every atom of the pool's paths, sorted.
	Atoms []string
	// Runs counts the distinct runs.
	Runs int

	// Transitions, HorizonRecovery and DomainAction are the heatmaps
	// (without deficit marks; Analyze sets the depth).
	Transitions     Heatmap
	HorizonRecovery Heatmap
	DomainAction    Heatmap

	audit    PoolAudit
	pathOf   []int32 // trajectory → path index, -1 when not certified
	parentOf []int32 // trajectory → parent index
	pathByID map[string]int32
	atomIdx  map[string]int32
	// axis holds the tokens the transition heatmap shows; the others are
	// grouped under TokenOther.
	axis map[string]int
}

// TokenOther labels the heatmap row and column that group the tokens beyond
// MaxTransitionAxis.
const TokenOther = "(other)"

// MaxTransitionAxis is how many distinct tokens the transition heatmap shows
// on each axis (besides start and (other)), the most supported first.
const MaxTransitionAxis = 24

// Heatmap is a matrix of counts. Values is row-major.
type Heatmap struct {
	Rows   []string `json:"rows"`
	Cols   []string `json:"cols"`
	Values []int    `json:"values"`
	// Paths counts the distinct paths behind each cell (transitions only).
	Paths []int `json:"paths,omitempty"`
	// Trajectories counts the trajectories behind each cell when Values
	// counts something else (domain × action counts decisions).
	Trajectories []int `json:"trajectories,omitempty"`
	// Depth is the target depth: a cell with 0 < value < Depth is a deficit.
	// Zero marks none.
	Depth int `json:"depth,omitempty"`
}

// At returns the value of cell (r, c).
func (h *Heatmap) At(r, c int) int { return h.Values[r*len(h.Cols)+c] }

// Deficit reports whether cell (r, c) is seen but below the target depth.
func (h *Heatmap) Deficit(r, c int) bool {
	v := h.At(r, c)
	return h.Depth > 0 && v > 0 && v < h.Depth
}

// Max returns the largest value.
func (h *Heatmap) Max() int {
	m := 0
	for _, v := range h.Values {
		m = max(m, v)
	}
	return m
}

// heatmapActions are the columns of the domain × action heatmap, in order.
var heatmapActions = []string{ActionRead, ActionWrite, ActionIrreversibleWrite, ActionTransfer, ActionCompute, ActionThink, ActionRespond}

// NewPool prepares ts for coverage. The result does not depend on the order
// of ts.
func NewPool(ts []PoolTrajectory) *Pool { return NewPoolFrom(nil, ts) }

// NewPoolFrom is NewPool reusing what prev (nil: nothing) already parsed
// of the paths both have: a pool rebuilt after a few verdicts parses only
// the paths it has not seen.
func NewPoolFrom(prev *Pool, ts []PoolTrajectory) *Pool {
	p := &Pool{Trajectories: slices.Clone(ts), pathByID: map[string]int32{}, atomIdx: map[string]int32{}}
	byKey := func(a, b PoolTrajectory) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), strings.Compare(a.ExtID, b.ExtID), cmp.Compare(a.ID, b.ID))
	}
	if !slices.IsSortedFunc(p.Trajectories, byKey) {
		slices.SortFunc(p.Trajectories, byKey)
	}
	n := len(p.Trajectories)
	p.pathOf = make([]int32, n)
	p.parentOf = make([]int32, n)

	// Distinct paths, sorted by key. Each key is hashed once: trajectories
	// first get the path's index in first-seen order, renumbered after the
	// sort.
	keys := map[string]int32{}
	var distinct []string
	runs := map[int64]bool{}
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		runs[t.Run] = true
		p.pathOf[i] = -1
		if t.Path == "" {
			continue
		}
		k, ok := keys[t.Path]
		if !ok {
			k = int32(len(distinct))
			keys[t.Path] = k
			distinct = append(distinct, t.Path)
		}
		p.pathOf[i] = k
	}
	p.Runs = len(runs)
	order := make([]int32, len(distinct)) // sorted position → first-seen index
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(distinct[a], distinct[b]) })
	renumber := make([]int32, len(distinct)) // first-seen index → sorted position
	for pos, k := range order {
		renumber[k] = int32(pos)
	}
	for i, k := range p.pathOf {
		if k >= 0 {
			p.pathOf[i] = renumber[k]
		}
	}
	p.Paths = make([]PoolPath, len(distinct))
	atomSet := map[string]bool{}
	for i, first := range order {
		k := distinct[first]
		if prev != nil {
			if j, ok := slices.BinarySearchFunc(prev.Paths, k, func(pp PoolPath, k string) int { return strings.Compare(pp.Key, k) }); ok {
				// Shapes are read-only: sharing them is safe.
				p.Paths[i] = PoolPath{Key: k, ID: prev.Paths[j].ID, PathShape: prev.Paths[j].PathShape}
			}
		}
		if p.Paths[i].Key == "" {
			p.Paths[i] = PoolPath{Key: k, ID: PathID(k), PathShape: ShapeOf(k)}
		}
		p.pathByID[p.Paths[i].ID] = int32(i)
		for _, a := range p.Paths[i].Atoms {
			atomSet[a] = true
		}
	}
	for a := range atomSet {
		p.Atoms = append(p.Atoms, a)
	}
	slices.Sort(p.Atoms)
	for i, a := range p.Atoms {
		p.atomIdx[a] = int32(i)
	}
	for i := range p.Paths {
		pp := &p.Paths[i]
		for _, a := range pp.Atoms {
			pp.atoms = append(pp.atoms, p.atomIdx[a])
		}
	}

	// Parents, sorted by (run, id).
	type pkey struct {
		run int64
		id  string
	}
	parentIdx := map[pkey]int32{}
	var pkeys []pkey
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		k := pkey{t.Run, t.Parent}
		pi, ok := parentIdx[k]
		if !ok {
			pi = int32(len(pkeys))
			parentIdx[k] = pi
			pkeys = append(pkeys, k)
		}
		p.parentOf[i] = pi
	}
	porder := make([]int32, len(pkeys))
	for i := range porder {
		porder[i] = int32(i)
	}
	slices.SortFunc(porder, func(a, b int32) int {
		return cmp.Or(cmp.Compare(pkeys[a].run, pkeys[b].run), strings.Compare(pkeys[a].id, pkeys[b].id))
	})
	prenumber := make([]int32, len(pkeys))
	p.Parents = make([]PoolParent, len(pkeys))
	for pos, k := range porder {
		prenumber[k] = int32(pos)
		p.Parents[pos] = PoolParent{Run: pkeys[k].run, ID: pkeys[k].id}
	}
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		pi := prenumber[p.parentOf[i]]
		p.parentOf[i] = pi
		par := &p.Parents[pi]
		par.Trajectories = append(par.Trajectories, int32(i))
		if par.Task == "" {
			par.Task = cmp.Or(t.Task, t.Domain)
		}
		if pi := p.pathOf[i]; pi >= 0 {
			p.Paths[pi].Trajectories = append(p.Paths[pi].Trajectories, int32(i))
			par.Certified = append(par.Certified, int32(i))
		}
	}
	// Each parent's paths with their counts and its atoms, as sorted
	// slices: most parents have a handful of trajectories, and maps per
	// parent would cost more than they save.
	var pis, atoms []int32
	for i := range p.Parents {
		par := &p.Parents[i]
		pis, atoms = pis[:0], atoms[:0]
		for _, ti := range par.Certified {
			pi := p.pathOf[ti]
			pis = append(pis, pi)
			atoms = append(atoms, p.Paths[pi].atoms...)
		}
		slices.Sort(pis)
		for k := 0; k < len(pis); {
			j := k
			for j < len(pis) && pis[j] == pis[k] {
				j++
			}
			par.paths = append(par.paths, pathCount{pis[k], int32(j - k)})
			k = j
		}
		slices.Sort(atoms)
		par.atoms = slices.Clone(slices.Compact(atoms))
	}
	p.audit = p.computeAudit()
	p.buildTransitions()
	p.buildHorizonRecovery()
	p.buildDomainAction()
	return p
}

// PathByID returns the index of the path with this PathID, or -1.
func (p *Pool) PathByID(id string) int {
	if i, ok := p.pathByID[id]; ok {
		return int(i)
	}
	return -1
}

// PathOf returns the index in Paths of trajectory i's path, or -1.
func (p *Pool) PathOf(i int) int { return int(p.pathOf[i]) }

// ParentOf returns the index in Parents of trajectory i's parent.
func (p *Pool) ParentOf(i int) int { return int(p.parentOf[i]) }

// CertifiedParents counts the parents with at least one certified
// trajectory: the candidates of a selection.
func (p *Pool) CertifiedParents() int { return p.audit.CertifiedParents }

// PoolAudit holds the pool audit figures of SPEC §4 for a pool at a scale.
// The embedded Audit has Trajectories, Certified, Supervised (over certified
// and uncertified trajectories alike), AtMostTwoSupervised and
// CertifiedAfterError with their shares (over certified trajectories) set,
// as grounding.Audit defines them; its per-decision counts are left zero.
type PoolAudit struct {
	Audit
	Runs             int `json:"runs"`
	Parents          int `json:"parents"`
	CertifiedParents int `json:"certified_parents"`
	// Paths counts distinct canonical paths; RecoveryPaths those with a
	// recovery.
	Paths         int `json:"paths"`
	RecoveryPaths int `json:"recovery_paths"`
	// Depth is the scale's target depth d_s, and Below, At and Above count
	// paths with support below, at and above it.
	Depth int `json:"depth"`
	Below int `json:"below"`
	At    int `json:"at"`
	Above int `json:"above"`
}

func (p *Pool) computeAudit() PoolAudit {
	a := PoolAudit{Runs: p.Runs, Parents: len(p.Parents), Paths: len(p.Paths)}
	a.Verdicts = map[Verdict]int{}
	a.Reasons = map[string]int{}
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		a.Trajectories++
		a.Supervised += t.Supervised
		if t.Path == "" {
			continue
		}
		a.Certified++
		if t.Supervised <= 2 {
			a.AtMostTwoSupervised++
		}
		if p.Paths[p.pathOf[i]].Recoveries > 0 {
			a.CertifiedAfterError++
		}
	}
	for i := range p.Parents {
		if len(p.Parents[i].Certified) > 0 {
			a.CertifiedParents++
		}
	}
	for i := range p.Paths {
		if p.Paths[i].Recoveries > 0 {
			a.RecoveryPaths++
		}
	}
	a.AtMostTwoSupervisedShare = share(a.AtMostTwoSupervised, a.Certified)
	a.CertifiedAfterErrorShare = share(a.CertifiedAfterError, a.Certified)
	return a
}

// buildTransitions fills the transition heatmap: cell (a, b) is the number
// of certified trajectories whose path contains the step a → b.
func (p *Pool) buildTransitions() {
	total := map[string]int{}
	for i := range p.Paths {
		pp := &p.Paths[i]
		seen := map[string]bool{}
		for _, tr := range pp.Transitions {
			for _, tok := range tr {
				if tok != TokenStart && !seen[tok] {
					seen[tok] = true
					total[tok] += pp.Support()
				}
			}
		}
	}
	toks := make([]string, 0, len(total))
	for t := range total {
		toks = append(toks, t)
	}
	slices.SortFunc(toks, func(a, b string) int { return cmp.Or(cmp.Compare(total[b], total[a]), strings.Compare(a, b)) })
	other := len(toks) > MaxTransitionAxis
	if other {
		toks = toks[:MaxTransitionAxis]
	}
	// Axis order: start, then the shown tokens by action order and name,
	// so related tokens sit together, then end:ok, then (other).
	slices.SortFunc(toks, func(a, b string) int {
		return cmp.Or(cmp.Compare(tokenRank(a), tokenRank(b)), strings.Compare(a, b))
	})
	// Rows are where a step comes from (start, never end:ok), columns
	// where it goes (never start).
	var rows, cols []string
	rows = append(rows, TokenStart)
	for _, t := range toks {
		if t != TokenEndOK {
			rows = append(rows, t)
		}
		cols = append(cols, t)
	}
	if other {
		rows = append(rows, TokenOther)
		cols = append(cols, TokenOther)
	}
	p.axis = make(map[string]int, len(toks))
	for _, t := range toks {
		p.axis[t] = 0
	}
	h := Heatmap{Rows: rows, Cols: cols, Values: make([]int, len(rows)*len(cols)), Paths: make([]int, len(rows)*len(cols))}
	for i := range p.Paths {
		pp := &p.Paths[i]
		cells := map[int]bool{}
		for _, tr := range pp.Transitions {
			cells[axisIndex(rows, tr[0])*len(cols)+axisIndex(cols, tr[1])] = true
		}
		for c := range cells {
			h.Values[c] += pp.Support()
			h.Paths[c]++
		}
	}
	p.Transitions = h
}

// tokenRank orders transition tokens on the heatmap axes by action.
func tokenRank(tok string) int {
	switch tok {
	case TokenStart:
		return -1
	case TokenError:
		return 90
	case TokenEndOK:
		return 100
	}
	r := 0
	if strings.HasPrefix(tok, recoverPre) {
		r = 50
	}
	if i := slices.Index(heatmapActions, tokenAction(tok)); i >= 0 {
		return r + i
	}
	return r + len(heatmapActions)
}

// axisIndex is the index of token tok on a transition heatmap axis, the
// (other) entry (always last) when the axis does not show it.
func axisIndex(axis []string, tok string) int {
	if i := slices.Index(axis, tok); i >= 0 {
		return i
	}
	return len(axis) - 1
}

// buildHorizonRecovery fills the horizon × recoveries heatmap over certified
// trajectories: rows are supervised decisions per trajectory (bucketed),
// columns the number of recoveries.
func (p *Pool) buildHorizonRecovery() {
	h := Heatmap{Rows: HorizonBuckets, Cols: RecoveryBuckets, Values: make([]int, len(HorizonBuckets)*len(RecoveryBuckets))}
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		if t.Path == "" {
			continue
		}
		r := slices.Index(HorizonBuckets, HorizonBucket(t.Supervised))
		if r < 0 {
			continue
		}
		c := slices.Index(RecoveryBuckets, RecoveryBucket(p.Paths[p.pathOf[i]].Recoveries))
		h.Values[r*len(h.Cols)+c]++
	}
	p.HorizonRecovery = h
}

// buildDomainAction fills the domain × semantic action heatmap: each cell
// counts the certified decisions of that action in certified trajectories of
// that domain, and how many trajectories they are in. Think is a column only
// when some path has it.
func (p *Pool) buildDomainAction() {
	domains := map[string]bool{}
	think := false
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		if t.Path == "" {
			continue
		}
		domains[t.Domain] = true
		if p.Paths[p.pathOf[i]].Actions[ActionThink] > 0 {
			think = true
		}
	}
	var rows []string
	for d := range domains {
		rows = append(rows, d)
	}
	slices.Sort(rows)
	var cols []string
	for _, a := range heatmapActions {
		if a != ActionThink || think {
			cols = append(cols, a)
		}
	}
	h := Heatmap{Rows: rows, Cols: cols, Values: make([]int, len(rows)*len(cols)), Trajectories: make([]int, len(rows)*len(cols))}
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		if t.Path == "" {
			continue
		}
		r, _ := slices.BinarySearch(rows, t.Domain)
		for c, a := range cols {
			if n := p.Paths[p.pathOf[i]].Actions[a]; n > 0 {
				h.Values[r*len(cols)+c] += n
				h.Trajectories[r*len(cols)+c]++
			}
		}
	}
	p.DomainAction = h
}

// PathSupport is one path's support at a scale.
type PathSupport struct {
	Path    int `json:"path"` // index into Pool.Paths
	Support int `json:"support"`
	Target  int `json:"target"`
	// Deficit is δ_s(p; S) = max(0, d_s − n_S(p)).
	Deficit int `json:"deficit"`
}

// AtomSupport says how many paths and certified trajectories have an atom.
type AtomSupport struct {
	Atom         string `json:"atom"`
	Paths        int    `json:"paths"`
	Trajectories int    `json:"trajectories"`
}

// CoverageReport is a pool at one scale: the audit figures, every path's
// support and deficit, and the heatmaps with deficits marked.
type CoverageReport struct {
	Scale Scale     `json:"scale"`
	Audit PoolAudit `json:"audit"`
	// Paths lists every distinct path, largest deficit first, then by
	// support (largest first) and key.
	Paths           []PathSupport `json:"paths"`
	Atoms           []AtomSupport `json:"atoms"`
	Transitions     Heatmap       `json:"transitions"`
	HorizonRecovery Heatmap       `json:"horizon_recovery"`
	DomainAction    Heatmap       `json:"domain_action"`
	// Deficit is Σ_p δ_s(p; S) over the pool's paths.
	Deficit int `json:"deficit"`
}

// Analyze computes the report of pool p at scale s (Depth must be ≥ 1).
func Analyze(p *Pool, s Scale) *CoverageReport {
	d := max(s.Depth, 1)
	r := &CoverageReport{Scale: s, Audit: p.audit}
	r.Audit.Depth = d
	r.Paths = make([]PathSupport, len(p.Paths))
	for i := range p.Paths {
		n := p.Paths[i].Support()
		ps := PathSupport{Path: i, Support: n, Target: d, Deficit: max(0, d-n)}
		r.Paths[i] = ps
		r.Deficit += ps.Deficit
		switch {
		case n < d:
			r.Audit.Below++
		case n == d:
			r.Audit.At++
		default:
			r.Audit.Above++
		}
	}
	slices.SortFunc(r.Paths, func(a, b PathSupport) int {
		return cmp.Or(cmp.Compare(b.Deficit, a.Deficit), cmp.Compare(b.Support, a.Support), strings.Compare(p.Paths[a.Path].Key, p.Paths[b.Path].Key))
	})
	atomPaths := make([]int, len(p.Atoms))
	atomTraj := make([]int, len(p.Atoms))
	for i := range p.Paths {
		for _, a := range p.Paths[i].atoms {
			atomPaths[a]++
			atomTraj[a] += p.Paths[i].Support()
		}
	}
	for i, a := range p.Atoms {
		r.Atoms = append(r.Atoms, AtomSupport{Atom: a, Paths: atomPaths[i], Trajectories: atomTraj[i]})
	}
	r.Transitions = p.Transitions
	r.Transitions.Depth = d
	r.HorizonRecovery = p.HorizonRecovery
	r.DomainAction = p.DomainAction
	return r
}

// FilterPaths returns the paths of ps that have every atom in atoms, keeping
// the order; underOnly keeps only those with a deficit.
func (p *Pool) FilterPaths(ps []PathSupport, atoms []string, underOnly bool) []PathSupport {
	want := make([]int32, 0, len(atoms))
	for _, a := range atoms {
		i, ok := p.atomIdx[a]
		if !ok {
			return nil // an atom no path has
		}
		want = append(want, i)
	}
	var out []PathSupport
	for _, s := range ps {
		if underOnly && s.Deficit == 0 {
			continue
		}
		if hasAllAtoms(p.Paths[s.Path].atoms, want) {
			out = append(out, s)
		}
	}
	return out
}

// hasAllAtoms reports whether the sorted set has every atom of want.
func hasAllAtoms(set, want []int32) bool {
	for _, w := range want {
		if _, ok := slices.BinarySearch(set, w); !ok {
			return false
		}
	}
	return true
}

// Cell says which trajectories a heatmap cell or a deficit table row stands
// for. Set one group of fields.
type Cell struct {
	// Path is a PathID.
	Path string
	// From and To are transition tokens (TokenStart, TokenOther allowed).
	From, To string
	// Horizon and Recoveries are bucket labels.
	Horizon, Recoveries string
	// Domain and Action: certified trajectories of the domain with a
	// certified decision of the action. HasDomain distinguishes the empty
	// domain from no domain filter.
	Domain    string
	HasDomain bool
	Action    string
	// Atoms: certified trajectories whose path has every one of them.
	Atoms []string
}

// Matching returns the certified trajectories behind c, as indexes into
// p.Trajectories in pool order.
func (p *Pool) Matching(c Cell) []int {
	var want []int32
	for _, a := range c.Atoms {
		i, ok := p.atomIdx[a]
		if !ok {
			return nil
		}
		want = append(want, i)
	}
	pathOK := make([]bool, len(p.Paths))
	for i := range p.Paths {
		pp := &p.Paths[i]
		ok := hasAllAtoms(pp.atoms, want)
		if ok && c.Path != "" {
			ok = pp.ID == c.Path
		}
		if ok && (c.From != "" || c.To != "") {
			ok = false
			for _, tr := range pp.Transitions {
				if p.axisMatch(c.From, tr[0]) && p.axisMatch(c.To, tr[1]) {
					ok = true
					break
				}
			}
		}
		if ok && c.Recoveries != "" {
			ok = RecoveryBucket(pp.Recoveries) == c.Recoveries
		}
		if ok && c.Action != "" {
			ok = pp.Actions[c.Action] > 0
		}
		pathOK[i] = ok
	}
	var out []int
	for i := range p.Trajectories {
		t := &p.Trajectories[i]
		pi := p.pathOf[i]
		if pi < 0 || !pathOK[pi] {
			continue
		}
		if c.Horizon != "" && HorizonBucket(t.Supervised) != c.Horizon {
			continue
		}
		if c.HasDomain && t.Domain != c.Domain {
			continue
		}
		out = append(out, i)
	}
	return out
}

// axisMatch reports whether token tok falls on the transition heatmap
// row or column labelled label ("" matches anything).
func (p *Pool) axisMatch(label, tok string) bool {
	if label == "" {
		return true
	}
	if label == TokenOther {
		_, shown := p.axis[tok]
		return !shown
	}
	return label == tok
}
