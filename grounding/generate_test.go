package grounding

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func encodePool(t *testing.T, opt GenOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for tr := range Generate(opt) {
		if err := enc.Encode(tr); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestGenerateDeterministic: the same options give the same bytes, another
// seed gives another pool, and trajectory i does not depend on the pool size.
func TestGenerateDeterministic(t *testing.T) {
	a := encodePool(t, GenOptions{Trajectories: 50, Seed: 7, Kind: "mixed"})
	b := encodePool(t, GenOptions{Trajectories: 50, Seed: 7, Kind: "mixed"})
	c := encodePool(t, GenOptions{Trajectories: 50, Seed: 8, Kind: "mixed"})
	if !bytes.Equal(a, b) {
		t.Error("Generate is not deterministic for one seed")
	}
	if bytes.Equal(a, c) {
		t.Error("two seeds gave the same pool")
	}
	prefix := encodePool(t, GenOptions{Trajectories: 10, Seed: 7, Kind: "mixed"})
	if !bytes.HasPrefix(a, prefix) {
		t.Error("the first 10 trajectories change with the pool size")
	}
}

// TestGenerateRealistic re-imports a generated pool through the canonical
// importer and checks the properties the benchmarks rely on: several
// domains, errors followed by recoveries, hand-offs, hidden hints that leak
// and hints that do not, skewed lengths, SWE steps of every stage, and a
// grounding check that finds all three verdicts.
func TestGenerateRealistic(t *testing.T) {
	raw := encodePool(t, GenOptions{Trajectories: 600, Seed: 1, Kind: "mixed"})
	domains := map[string]int{}
	var lengths []int
	errors, transfers, hints, leaks, swe := 0, 0, 0, 0, 0
	verdicts := map[Verdict]int{}
	stages := map[string]int{}
	n := 0
	for tr, err := range Read(bytes.NewReader(raw), "pool.jsonl", FormatCanonical) {
		if err != nil {
			t.Fatalf("generated pool does not re-import: %v", err)
		}
		n++
		domains[tr.Domain]++
		lengths = append(lengths, len(Decisions(tr)))
		for _, m := range tr.Messages {
			if m.Error {
				errors++
			}
			if m.HiddenKind == HiddenTeacherHint {
				hints++
			}
			for _, c := range m.ToolCalls {
				if c.Name == "transfer_to_human_agents" {
					transfers++
				}
			}
		}
		if tr.Domain == DomainSWE {
			swe++
			for _, st := range DiagnoseSWE(tr, nil).Stages() {
				stages[st]++
			}
			continue
		}
		for _, d := range CheckDefault(tr).Decisions {
			verdicts[d.Verdict]++
			if slices.Contains(d.Reasons, ReasonHiddenLeak) {
				leaks++
			}
		}
	}
	if n != 600 {
		t.Fatalf("re-imported %d trajectories, want 600", n)
	}
	if len(domains) < 4 || swe < 60 || swe > 180 {
		t.Errorf("domains = %v (swe %d), want 3 τ domains and about a fifth SWE", domains, swe)
	}
	if errors < 30 || transfers < 5 || hints < 20 || leaks < 5 || leaks >= hints {
		t.Errorf("errors %d, transfers %d, hints %d, leaking decisions %d: want each present, and not every hint leaking", errors, transfers, hints, leaks)
	}
	for _, v := range []Verdict{VerdictPass, VerdictFail, VerdictAmbiguous} {
		if verdicts[v] == 0 {
			t.Errorf("no %s decisions in the generated pool: %v", v, verdicts)
		}
	}
	for _, st := range []string{"LOC", "REP", "PATCH"} {
		if stages[st] == 0 {
			t.Errorf("no %s steps in the generated SWE trajectories: %v", st, stages)
		}
	}
	slices.Sort(lengths)
	median, p95 := lengths[len(lengths)/2], lengths[len(lengths)*95/100]
	if p95 < 2*median {
		t.Errorf("decision counts median %d, p95 %d: want a long tail", median, p95)
	}
}
