package grounding

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Selection stages, in the order structured selection runs them (SPEC §4).
const (
	StageCore    = "core"    // the fixed core, taken first
	StageBreadth = "breadth" // one parent per task not yet covered
	StageAtoms   = "atoms"   // parents adding the most uncovered atoms
	StagePaths   = "paths"   // parents adding the most uncovered paths
	StageDeficit = "deficit" // greedy on capped support Σ_p min(n(p), d_s)
	StageFill    = "fill"    // nothing adds support: the rest by size
)

// SelectionStages lists the stages in order.
var SelectionStages = []string{StageCore, StageBreadth, StageAtoms, StagePaths, StageDeficit, StageFill}

// SelectionMetrics measure a selection of parents at a target depth.
type SelectionMetrics struct {
	Parents      int `json:"parents"`
	Trajectories int `json:"trajectories"` // certified trajectories of the selected parents
	// Paths counts distinct canonical paths covered; Capped the capped
	// support Σ_p min(n(p), d_s); Atoms the distinct atoms covered;
	// RecoveryPaths the covered paths with a recovery.
	Paths         int `json:"paths"`
	Capped        int `json:"capped"`
	Atoms         int `json:"atoms"`
	RecoveryPaths int `json:"recovery_paths"`
}

// Selection is a set of parents chosen under a budget.
type Selection struct {
	// Parents are indexes into Pool.Parents, in the order they were
	// picked; Stages[i] names the stage that picked Parents[i].
	Parents []int            `json:"parents"`
	Stages  []string         `json:"stages"`
	Metrics SelectionMetrics `json:"metrics"`
}

// StageCount returns how many parents stage picked.
func (s *Selection) StageCount(stage string) int {
	n := 0
	for _, st := range s.Stages {
		if st == stage {
			n++
		}
	}
	return n
}

// CheckBudget returns an error wrapping ErrInvalid when budget is not a
// number of parents structured or random selection can take from p: at
// least one, and at most the parents with a certified trajectory.
func (p *Pool) CheckBudget(budget int) error {
	n := p.CertifiedParents()
	switch {
	case budget <= 0:
		return fmt.Errorf("the budget must be at least 1 parent interaction, not %d: %w", budget, ErrInvalid)
	case budget > n:
		return fmt.Errorf("the budget of %d parent interactions exceeds the %d with a certified trajectory in this pool: %w", budget, n, ErrInvalid)
	}
	return nil
}

// Metrics measures the selection of parents (indexes into p.Parents) at
// target depth d.
func (p *Pool) Metrics(parents []int, d int) SelectionMetrics {
	m := SelectionMetrics{Parents: len(parents)}
	n := make([]int32, len(p.Paths))
	atoms := make([]bool, len(p.Atoms))
	for _, pi := range parents {
		par := &p.Parents[pi]
		m.Trajectories += len(par.Certified)
		for _, pc := range par.paths {
			n[pc.path] += pc.n
		}
		for _, a := range par.atoms {
			atoms[a] = true
		}
	}
	for i, c := range n {
		if c == 0 {
			continue
		}
		m.Paths++
		m.Capped += min(int(c), d)
		if p.Paths[i].Recoveries > 0 {
			m.RecoveryPaths++
		}
	}
	for _, ok := range atoms {
		if ok {
			m.Atoms++
		}
	}
	return m
}

// SelectStructured picks budget parents at target depth d: first the core
// (indexes into p.Parents; uncertified or repeated ones are skipped), then
// one parent per task not yet covered (task breadth, tasks in name order,
// each time the parent with the most atoms), then greedily the parents
// adding the most uncovered atoms, then the most uncovered paths, then the
// most capped support Σ_p min(n(p), d) (the deficit fill), and if budget
// remains once nothing adds support, the parents with the most certified
// trajectories. Ties go to the parent that comes first in p.Parents. It is
// deterministic. A budget CheckBudget refuses is returned as its error.
func (p *Pool) SelectStructured(budget, d int, core []int) (Selection, error) {
	if err := p.CheckBudget(budget); err != nil {
		return Selection{}, err
	}
	d = max(d, 1)
	g := newGreedy(p, d)
	for _, pi := range core {
		if len(g.sel.Parents) >= budget {
			break
		}
		if pi >= 0 && pi < len(p.Parents) && len(p.Parents[pi].Certified) > 0 && !g.taken[pi] {
			g.take(pi, StageCore)
		}
	}
	// Task breadth.
	covered := map[string]bool{}
	for _, pi := range g.sel.Parents {
		covered[p.Parents[pi].Task] = true
	}
	best := map[string]int{}
	var tasks []string
	for pi := range p.Parents {
		par := &p.Parents[pi]
		if len(par.Certified) == 0 || g.taken[pi] || covered[par.Task] {
			continue
		}
		b, ok := best[par.Task]
		if !ok {
			tasks = append(tasks, par.Task)
			best[par.Task] = pi
			continue
		}
		if len(par.atoms) > len(p.Parents[b].atoms) {
			best[par.Task] = pi
		}
	}
	slices.Sort(tasks)
	for _, task := range tasks {
		if len(g.sel.Parents) >= budget {
			break
		}
		g.take(best[task], StageBreadth)
	}
	g.run(budget, StageAtoms, g.atomGain)
	g.run(budget, StagePaths, g.pathGain)
	g.run(budget, StageDeficit, g.cappedGain)
	if len(g.sel.Parents) < budget {
		var rest []int
		for pi := range p.Parents {
			if !g.taken[pi] && len(p.Parents[pi].Certified) > 0 {
				rest = append(rest, pi)
			}
		}
		slices.SortStableFunc(rest, func(a, b int) int {
			return cmp.Compare(len(p.Parents[b].Certified), len(p.Parents[a].Certified))
		})
		for _, pi := range rest[:budget-len(g.sel.Parents)] {
			g.take(pi, StageFill)
		}
	}
	g.sel.Metrics = p.Metrics(g.sel.Parents, d)
	return g.sel, nil
}

// greedy is the state of a structured selection.
type greedy struct {
	p     *Pool
	d     int
	sel   Selection
	taken []bool
	n     []int32 // selected certified trajectories per path
	atoms []bool  // covered atoms
}

func newGreedy(p *Pool, d int) *greedy {
	return &greedy{p: p, d: d, taken: make([]bool, len(p.Parents)), n: make([]int32, len(p.Paths)), atoms: make([]bool, len(p.Atoms))}
}

func (g *greedy) take(pi int, stage string) {
	g.taken[pi] = true
	g.sel.Parents = append(g.sel.Parents, pi)
	g.sel.Stages = append(g.sel.Stages, stage)
	par := &g.p.Parents[pi]
	for _, pc := range par.paths {
		g.n[pc.path] += pc.n
	}
	for _, a := range par.atoms {
		g.atoms[a] = true
	}
}

// atomGain is how many uncovered atoms parent pi adds.
func (g *greedy) atomGain(pi int) int {
	n := 0
	for _, a := range g.p.Parents[pi].atoms {
		if !g.atoms[a] {
			n++
		}
	}
	return n
}

// pathGain is how many uncovered paths parent pi adds.
func (g *greedy) pathGain(pi int) int {
	n := 0
	for _, pc := range g.p.Parents[pi].paths {
		if g.n[pc.path] == 0 {
			n++
		}
	}
	return n
}

// cappedGain is the increase of Σ_p min(n(p), d) that parent pi brings.
func (g *greedy) cappedGain(pi int) int {
	n := 0
	for _, pc := range g.p.Parents[pi].paths {
		have := int(g.n[pc.path])
		if have < g.d {
			n += min(have+int(pc.n), g.d) - have
		}
	}
	return n
}

// run adds parents by largest gain until the budget is spent or no parent
// gains anything. Every gain function here is a coverage or capped-support
// function, monotone and submodular, so a parent's gain never grows as
// others are taken: the lazy evaluation (re-evaluate only the top of the
// heap) picks exactly what the plain greedy would, ties going to the lower
// index.
func (g *greedy) run(budget int, stage string, gain func(int) int) {
	if len(g.sel.Parents) >= budget {
		return
	}
	h := &gainHeap{}
	for pi := range g.p.Parents {
		if g.taken[pi] || len(g.p.Parents[pi].Certified) == 0 {
			continue
		}
		if v := gain(pi); v > 0 {
			h.items = append(h.items, gainItem{pi, v})
		}
	}
	heap.Init(h)
	for len(g.sel.Parents) < budget && h.Len() > 0 {
		top := heap.Pop(h).(gainItem)
		v := gain(top.parent)
		if v <= 0 {
			continue
		}
		if h.Len() > 0 && (gainItem{top.parent, v}).less(h.items[0]) {
			heap.Push(h, gainItem{top.parent, v})
			continue
		}
		g.take(top.parent, stage)
	}
}

type gainItem struct{ parent, gain int }

// less orders by larger gain first, then lower parent index.
func (a gainItem) less(b gainItem) bool {
	if a.gain != b.gain {
		return a.gain < b.gain
	}
	return a.parent > b.parent
}

// gainHeap is a max-heap of gainItems.
type gainHeap struct{ items []gainItem }

func (h *gainHeap) Len() int           { return len(h.items) }
func (h *gainHeap) Less(i, j int) bool { return h.items[j].less(h.items[i]) }
func (h *gainHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *gainHeap) Push(x any)         { h.items = append(h.items, x.(gainItem)) }
func (h *gainHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// SelectRandom picks budget parents uniformly at random among those with a
// certified trajectory, from a PCG stream seeded with seed: the same seed
// always picks the same parents.
func (p *Pool) SelectRandom(budget, d int, seed uint64) (Selection, error) {
	if err := p.CheckBudget(budget); err != nil {
		return Selection{}, err
	}
	var cand []int
	for pi := range p.Parents {
		if len(p.Parents[pi].Certified) > 0 {
			cand = append(cand, pi)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	// A partial Fisher–Yates shuffle: the first budget entries are a
	// uniform sample without replacement.
	for i := range budget {
		j := i + rng.IntN(len(cand)-i)
		cand[i], cand[j] = cand[j], cand[i]
	}
	sel := Selection{Parents: slices.Clone(cand[:budget])}
	sel.Stages = make([]string, budget)
	for i := range sel.Stages {
		sel.Stages[i] = "random"
	}
	sel.Metrics = p.Metrics(sel.Parents, max(d, 1))
	return sel, nil
}

// Spread is the mean, sample standard deviation and range of a metric over
// seeds.
type Spread struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Min  int     `json:"min"`
	Max  int     `json:"max"`
}

// RandomBaseline is random selection of one budget over several seeds.
type RandomBaseline struct {
	Seeds         []uint64 `json:"seeds"`
	Paths         Spread   `json:"paths"`
	Capped        Spread   `json:"capped"`
	Atoms         Spread   `json:"atoms"`
	RecoveryPaths Spread   `json:"recovery_paths"`
	Trajectories  Spread   `json:"trajectories"`
}

// Random runs SelectRandom once per seed and summarizes the metrics.
func (p *Pool) Random(budget, d int, seeds []uint64) (RandomBaseline, error) {
	if err := p.CheckBudget(budget); err != nil {
		return RandomBaseline{}, err
	}
	b := RandomBaseline{Seeds: slices.Clone(seeds)}
	var paths, capped, atoms, rec, traj []int
	for _, s := range seeds {
		sel, err := p.SelectRandom(budget, d, s)
		if err != nil {
			return RandomBaseline{}, err
		}
		m := sel.Metrics
		paths = append(paths, m.Paths)
		capped = append(capped, m.Capped)
		atoms = append(atoms, m.Atoms)
		rec = append(rec, m.RecoveryPaths)
		traj = append(traj, m.Trajectories)
	}
	b.Paths, b.Capped, b.Atoms, b.RecoveryPaths, b.Trajectories = spread(paths), spread(capped), spread(atoms), spread(rec), spread(traj)
	return b, nil
}

// spread summarizes xs (sample standard deviation; 0 for one value).
func spread(xs []int) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	s := Spread{Min: xs[0], Max: xs[0]}
	sum := 0.0
	for _, x := range xs {
		sum += float64(x)
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean = sum / float64(len(xs))
	if len(xs) > 1 {
		ss := 0.0
		for _, x := range xs {
			ss += (float64(x) - s.Mean) * (float64(x) - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// DefaultSeeds are the seeds of the random baseline: 1 to 10.
func DefaultSeeds() []uint64 { return []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} }

// SingletonMissProbability is the probability that random selection of
// budget parents out of n misses one given parent (a path seen once): 1 − B/N.
func SingletonMissProbability(budget, n int) float64 {
	if n <= 0 {
		return 0
	}
	return 1 - float64(budget)/float64(n)
}

// ParentKey names a parent across runs for views and links: "run/parent".
func ParentKey(run int64, parent string) string {
	return strconv.FormatInt(run, 10) + "/" + parent
}

// ParentIndex returns the index in p.Parents of the parent with this key
// (ParentKey), or -1.
func (p *Pool) ParentIndex(key string) int {
	runText, id, ok := strings.Cut(key, "/")
	if !ok {
		return -1
	}
	run, err := strconv.ParseInt(runText, 10, 64)
	if err != nil {
		return -1
	}
	i, found := slices.BinarySearchFunc(p.Parents, PoolParent{Run: run, ID: id}, func(a, b PoolParent) int {
		return cmp.Or(cmp.Compare(a.Run, b.Run), strings.Compare(a.ID, b.ID))
	})
	if !found {
		return -1
	}
	return i
}
