package grounding

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The check golden test pins every output of Check, byte for byte: for each
// trajectory of a set of pools it stores the SHA-256 of json.Marshal of the
// Result. Performance work on the engine must keep it green; a deliberate
// rule change regenerates it with
//
//	go test ./grounding -run TestCheckGolden -update
//
// (and bumps EngineVersion). Pools built from ../shared/realdata are skipped
// with a message when that folder is absent, and their lines are then kept
// as they are under -update.

const checkGoldenFile = "testdata/check_golden.sha256"

// goldenPool is one named pool of trajectories and the profile to check it
// under (nil: ProfileFor(t.Domain), as the CLI does).
type goldenPool struct {
	name    string
	pool    []*Trajectory
	profile *Profile
	missing string // why the pool is absent, "" when present
}

// goldenRealLogs are the real τ-bench and τ²-bench logs Read understands.
var goldenRealLogs = []struct{ name, path string }{
	{"real-airline", tauAirline},
	{"real-retail-grok3", "../../shared/realdata/tau-bench-retail/tau_bench/tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"},
	{"real-tau2-sft", "../../shared/realdata/tau2-bench/data/tau2/sft-v1-small/sft-v1-small-openai/test_sft-v1-small.jsonl"},
	{"sample-airline", "testdata/check/airline-sample.jsonl"},
}

func readPool(path string) ([]*Trajectory, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pool []*Trajectory
	for tr, err := range Read(f, path, FormatAuto) {
		if err != nil {
			return nil, err
		}
		pool = append(pool, tr)
	}
	return pool, nil
}

func goldenPools(t *testing.T) []goldenPool {
	t.Helper()
	pools := []goldenPool{{name: "bench", pool: benchPool(200), profile: ProfileFor("airline")}}
	var gen []*Trajectory
	for tr := range Generate(GenOptions{Trajectories: 3000, Seed: 1, Kind: "mixed"}) {
		gen = append(gen, tr)
	}
	pools = append(pools, goldenPool{name: "gen-mixed", pool: gen})
	edge := edgePool(t)
	for _, prof := range EmbeddedProfiles() {
		p, err := LoadProfile(prof)
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, goldenPool{name: "edge@" + prof, pool: edge, profile: p})
	}
	for _, l := range goldenRealLogs {
		pool, err := readPool(l.path)
		if os.IsNotExist(err) {
			pools = append(pools, goldenPool{name: l.name, missing: err.Error()})
			for _, prof := range EmbeddedProfiles() {
				pools = append(pools, goldenPool{name: l.name + "@" + prof, missing: err.Error()})
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", l.path, err)
		}
		pools = append(pools, goldenPool{name: l.name, pool: pool})
		// The same log under every shipped profile exercises the rules a
		// domain's own profile leaves off.
		for _, prof := range EmbeddedProfiles() {
			p, err := LoadProfile(prof)
			if err != nil {
				t.Fatal(err)
			}
			pools = append(pools, goldenPool{name: l.name + "@" + prof, pool: pool, profile: p})
		}
	}
	return pools
}

// edgePool gathers small and odd trajectories: degenerate ones, the
// FuzzCheck seed corpus (as FuzzCheck decodes it) and the importer fixtures.
func edgePool(t *testing.T) []*Trajectory {
	t.Helper()
	one, zero := 1.0, 0.0
	pool := []*Trajectory{
		{ID: "empty", Domain: "airline", Reward: &one},
		{ID: "user-only", Domain: "airline", Reward: &zero, Messages: []Message{{Role: RoleUser, Content: "Hi, my id is mia_li_3668."}}},
		{ID: "reply-only", Messages: []Message{{Role: RoleAssistant, Content: "Your total is $250 on May 20th."}}},
	}
	seeds, err := filepath.Glob("testdata/fuzz/FuzzCheck/*")
	if err != nil {
		t.Fatal(err)
	}
	var inputs [][]byte
	g := lcg(7)
	for i := 0; i < 3; i++ {
		b, _ := json.Marshal(benchTrajectory(&g, i))
		inputs = append(inputs, b)
	}
	inputs = append(inputs, []byte("user\x00My id is mia_li_3668, fly May 20th at 7 PM, $250\x00assistant\x00{\"user_id\":\"mia_li_3668\"}\x00tool\x00{\"a\":[1,2,{\"b\":\"2024-05-20T15:00:00\"}]}"))
	for _, f := range seeds {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		_, lit, _ := strings.Cut(string(raw), "\n")
		lit = strings.TrimSpace(lit)
		lit = strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")")
		b, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		inputs = append(inputs, []byte(b))
	}
	for i, data := range inputs {
		var tr Trajectory
		if json.Unmarshal(data, &tr) != nil {
			tr = fuzzTrajectory(data)
		}
		tr.ID = fmt.Sprintf("fuzz-%d-%s", i, tr.ID)
		pool = append(pool, &tr)
	}
	fixtures, err := filepath.Glob("testdata/import/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		p, err := readPool(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pool = append(pool, p...)
	}
	return pool
}

// resultDigest is the SHA-256 of a Result's JSON encoding.
func resultDigest(t *testing.T, r Result) string {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// goldenLine is one line of the digest file: pool, index, trajectory id,
// digest, tab-separated.
func goldenLine(pool string, i int, id, digest string) string {
	return fmt.Sprintf("%s\t%d\t%s\t%s", pool, i, id, digest)
}

func readGolden(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(checkGoldenFile)
	if os.IsNotExist(err) {
		return map[string][]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		pool, _, _ := strings.Cut(line, "\t")
		out[pool] = append(out[pool], line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckGolden compares every Result with the committed digests, then
// checks the pools again in reverse order, so that no cache or pooled state
// carried from one trajectory to the next can change an output.
func TestCheckGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("golden check of ~10,000 trajectories skipped in -short mode")
	}
	want := readGolden(t)
	pools := goldenPools(t)
	got := map[string][]string{}
	kept := map[string][]Result{}
	var order []string
	for _, gp := range pools {
		order = append(order, gp.name)
		if gp.missing != "" {
			t.Logf("pool %s skipped: real data not available (%s)", gp.name, gp.missing)
			continue
		}
		lines := make([]string, len(gp.pool))
		results := make([]Result, len(gp.pool))
		for i, tr := range gp.pool {
			results[i] = Check(tr, gp.profile)
			lines[i] = goldenLine(gp.name, i, tr.ID, resultDigest(t, results[i]))
		}
		got[gp.name] = lines
		kept[gp.name] = results
	}
	// Second pass, reversed: the outputs must not depend on what was
	// checked before.
	for k := len(pools) - 1; k >= 0; k-- {
		gp := pools[k]
		for i := len(gp.pool) - 1; i >= 0; i-- {
			tr := gp.pool[i]
			if l := goldenLine(gp.name, i, tr.ID, resultDigest(t, Check(tr, gp.profile))); l != got[gp.name][i] {
				t.Errorf("pool %s trajectory %d (%s): result differs when checked in reverse order", gp.name, i, tr.ID)
			}
		}
	}
	// The results of the first pass, after thousands of later checks: a
	// result must own its memory, not share the checker's pooled scratch.
	for _, gp := range pools {
		for i, r := range kept[gp.name] {
			if l := goldenLine(gp.name, i, gp.pool[i].ID, resultDigest(t, r)); l != got[gp.name][i] {
				t.Errorf("pool %s trajectory %d (%s): result changed after later checks: it shares the checker's scratch memory", gp.name, i, gp.pool[i].ID)
			}
		}
	}
	if covUpdating() {
		var b strings.Builder
		b.WriteString("# SHA-256 of json.Marshal(Check(t, p)) per trajectory; see check_golden_test.go.\n")
		for _, name := range order {
			lines, ok := got[name]
			if !ok {
				lines = want[name] // absent real data: keep what was there
			}
			for _, l := range lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		if err := os.MkdirAll(filepath.Dir(checkGoldenFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(checkGoldenFile, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if len(want) == 0 {
		t.Fatalf("%s is missing: run go test ./grounding -run TestCheckGolden -update on the reference engine", checkGoldenFile)
	}
	for _, name := range order {
		g, ok := got[name]
		if !ok {
			continue
		}
		w := want[name]
		if len(w) != len(g) {
			t.Errorf("pool %s: %d results, golden has %d", name, len(g), len(w))
		}
		bad := 0
		for i := range min(len(w), len(g)) {
			if w[i] != g[i] {
				bad++
				if bad <= 5 {
					t.Errorf("pool %s: got  %s\n\twant %s", name, g[i], w[i])
				}
			}
		}
		if bad > 5 {
			t.Errorf("pool %s: %d results differ in all", name, bad)
		}
	}
	for name := range want {
		if !slices.Contains(order, name) {
			t.Errorf("golden pool %s is no longer produced", name)
		}
	}
}
