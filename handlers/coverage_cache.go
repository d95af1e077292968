package handlers

import (
	"bytes"
	"context"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"groundwork/grounding"
	"groundwork/views"
)

// poolCache keeps the prepared pools of the last few run sets, with their
// reports per scale and their selections, while the store's coverage
// version of those runs stays the same. A request reads the version (one
// small query) and answers from memory when it matches; when it does not,
// one request per run set rebuilds the pool while the others wait for it:
// from the cached rows and the few trajectories verdicts changed, or, after
// an import or a recheck, from the whole pool read again.
type poolCache struct {
	mu      sync.Mutex
	entries map[string]*poolEntry
	order   []string // least recently used first
	loading map[string]*sync.Mutex
	max     int
}

// poolEntry is one run set's pool at one coverage version.
type poolEntry struct {
	version string
	pool    *grounding.Pool

	mu      sync.Mutex
	reports map[grounding.Scale]*grounding.CoverageReport
	sels    map[selKey]*selResult
	// regions are built page regions by scale, filter and saved views: a
	// warm page only renders.
	regions map[string]*views.CoverageRegion
	// html holds each region rendered: the deficit table's path steps and
	// the heatmaps' cells made the render three quarters of a warm page's
	// CPU (2.8 of 3.7 ms), for bytes that change only with the key.
	html map[string]prerendered
}

// prerendered is a component's output kept to be written again: the bytes
// templ produced, escaped as templ escapes, so writing them is rendering
// the same component again without the work.
type prerendered []byte

func (p prerendered) Render(_ context.Context, w io.Writer) error {
	_, err := w.Write(p)
	return err
}

// regionHTML returns the region under key rendered, rendering it once.
func (e *poolEntry) regionHTML(ctx context.Context, key string, region *views.CoverageRegion) (prerendered, error) {
	e.mu.Lock()
	h, ok := e.html[key]
	e.mu.Unlock()
	if ok {
		return h, nil
	}
	var buf bytes.Buffer
	if err := views.CoverageRegionView(*region).Render(ctx, &buf); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.html == nil || len(e.html) > 64 {
		e.html = map[string]prerendered{}
	}
	e.html[key] = buf.Bytes()
	return buf.Bytes(), nil
}

type selKey struct {
	depth, budget int
	core          int64
}

type selResult struct {
	structured grounding.Selection
	random     grounding.RandomBaseline
}

// maxCachedPools bounds the cache: a 35,000-trajectory pool takes a few tens
// of MB.
const maxCachedPools = 8

func newPoolCache() *poolCache {
	return &poolCache{entries: map[string]*poolEntry{}, loading: map[string]*sync.Mutex{}, max: maxCachedPools}
}

// poolSource is the part of the store the cache reads.
type poolSource interface {
	CoverageVersion(ctx context.Context, runIDs []int64) (string, error)
	CoveragePool(ctx context.Context, runIDs []int64) ([]grounding.PoolTrajectory, string, error)
	// CoverageChanges returns the trajectories changed since version
	// since (ID, Path, Supervised, Tokens), or ok false when only a whole
	// new pool will do.
	CoverageChanges(ctx context.Context, runIDs []int64, since string) ([]grounding.PoolTrajectory, string, bool, error)
}

func runsKey(runs []int64) string {
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = strconv.FormatInt(r, 10)
	}
	return strings.Join(parts, ",")
}

// get returns the current pool of runs (sorted, distinct ids).
func (c *poolCache) get(ctx context.Context, src poolSource, runs []int64) (*poolEntry, error) {
	key := runsKey(runs)
	version, err := src.CoverageVersion(ctx, runs)
	if err != nil {
		return nil, err
	}
	if e := c.lookup(key, version); e != nil {
		return e, nil
	}
	c.mu.Lock()
	lk, ok := c.loading[key]
	if !ok {
		lk = &sync.Mutex{}
		c.loading[key] = lk
	}
	c.mu.Unlock()
	lk.Lock()
	defer lk.Unlock()
	// Whoever held the lock may have loaded this version meanwhile.
	if e := c.lookup(key, version); e != nil {
		return e, nil
	}
	rows, v, prev, err := c.load(ctx, src, key, runs)
	if err != nil {
		return nil, err
	}
	e := &poolEntry{version: v, pool: grounding.NewPoolFrom(prev, rows), reports: map[grounding.Scale]*grounding.CoverageReport{},
		sels: map[selKey]*selResult{}, regions: map[string]*views.CoverageRegion{}}
	c.mu.Lock()
	c.entries[key] = e
	c.touch(key)
	for len(c.order) > c.max {
		delete(c.entries, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	return e, nil
}

// load returns the pool rows of runs and their version: the cached rows
// patched with the trajectories verdicts changed since, when the store can
// tell (no import, no recheck meanwhile), else the whole pool read again;
// and the cached pool, whose parsed paths the new one can reuse.
func (c *poolCache) load(ctx context.Context, src poolSource, key string, runs []int64) ([]grounding.PoolTrajectory, string, *grounding.Pool, error) {
	c.mu.Lock()
	old := c.entries[key]
	c.mu.Unlock()
	if old != nil {
		changed, v, ok, err := src.CoverageChanges(ctx, runs, old.version)
		if err != nil {
			return nil, "", nil, err
		}
		if ok {
			rows := slices.Clone(old.pool.Trajectories)
			at := make(map[int64]int, len(changed))
			for _, ch := range changed {
				at[ch.ID] = 0
			}
			for i := range rows {
				if _, hit := at[rows[i].ID]; hit {
					at[rows[i].ID] = i
				}
			}
			for _, ch := range changed {
				if i, ok := at[ch.ID]; ok && rows[i].ID == ch.ID {
					rows[i].Path, rows[i].Supervised, rows[i].Tokens = ch.Path, ch.Supervised, ch.Tokens
				}
			}
			return rows, v, old.pool, nil
		}
	}
	rows, v, err := src.CoveragePool(ctx, runs)
	var prev *grounding.Pool
	if old != nil {
		prev = old.pool
	}
	return rows, v, prev, err
}

// lookup returns the cached entry of key if it is at version.
func (c *poolCache) lookup(key, version string) *poolEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.version != version {
		return nil
	}
	c.touch(key)
	return e
}

// touch marks key most recently used; c.mu is held.
func (c *poolCache) touch(key string) {
	if i := slices.Index(c.order, key); i >= 0 {
		c.order = slices.Delete(c.order, i, i+1)
	}
	c.order = append(c.order, key)
}

// report returns the pool's report at scale s, computed once.
func (e *poolEntry) report(s grounding.Scale) *grounding.CoverageReport {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.reports[s]
	if !ok {
		r = grounding.Analyze(e.pool, s)
		e.reports[s] = r
	}
	return r
}

// region returns the page region cached under key, built by build the first
// time. Regions are read-only once built.
func (e *poolEntry) region(key string, build func() views.CoverageRegion) *views.CoverageRegion {
	e.mu.Lock()
	r, ok := e.regions[key]
	e.mu.Unlock()
	if ok {
		return r
	}
	built := build() // without the lock: it asks e for reports
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.regions) > 64 {
		clear(e.regions)
	}
	e.regions[key] = &built
	return &built
}

// selection returns structured and random selection of budget at depth d
// with the core, computed once. A budget the pool refuses is an error
// wrapping grounding.ErrInvalid.
func (e *poolEntry) selection(d, budget int, coreID int64, core []int) (*selResult, error) {
	if err := e.pool.CheckBudget(budget); err != nil {
		return nil, err
	}
	k := selKey{d, budget, coreID}
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.sels[k]; ok {
		return r, nil
	}
	s, err := e.pool.SelectStructured(budget, d, core)
	if err != nil {
		return nil, err
	}
	rnd, err := e.pool.Random(budget, d, grounding.DefaultSeeds())
	if err != nil {
		return nil, err
	}
	r := &selResult{structured: s, random: rnd}
	if len(e.sels) > 64 {
		clear(e.sels)
	}
	e.sels[k] = r
	return r, nil
}
