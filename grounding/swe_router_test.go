package grounding

import (
	"strings"
	"testing"
)

// classesOf reads a compact class string: e explore, w repro-write, r
// repro-run, p edit, s submit, o other.
func classesOf(s string) []SWEStepClass {
	m := map[rune]SWEStepClass{'e': SWEClassExplore, 'w': SWEClassReproWrite, 'r': SWEClassReproRun,
		'p': SWEClassEdit, 's': SWEClassSubmit, 'o': SWEClassOther}
	var out []SWEStepClass
	for _, c := range s {
		out = append(out, m[c])
	}
	return out
}

// routeString renders routes as stages, lower case for fall-backs.
func routeString(rs []SWERoute) string {
	var b strings.Builder
	for _, r := range rs {
		c := byte(r.Stage)
		if r.Fallback {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func TestRouteSWE(t *testing.T) {
	tests := []struct {
		name    string
		classes string
		want    string
	}{
		{"empty", "", ""},
		// From LOC: every class.
		{"LOC explore stays LOC", "e", "L"},
		{"LOC repro-write moves to REP", "w", "R"},
		{"LOC repro-run moves to REP", "r", "R"},
		{"LOC edit moves to PATCH (REP may be skipped)", "p", "P"},
		{"LOC submit keeps LOC", "s", "L"},
		{"LOC other keeps LOC", "o", "L"},
		// From REP: every class.
		{"REP explore once stays REP", "re", "RR"},
		{"REP explore twice stays REP", "ree", "RRR"},
		{"REP three explorations fall back to LOC", "reee", "RRRl"},
		{"REP repro-write stays REP", "rw", "RR"},
		{"REP repro-run stays REP", "wr", "RR"},
		{"REP edit moves to PATCH", "rp", "RP"},
		{"REP other keeps REP", "ro", "RR"},
		{"REP submit keeps REP", "rs", "RR"},
		// The exploration count: other steps neither count nor break it,
		// repro and edit steps reset it.
		{"other does not break the run", "reoee", "RRRRl"},
		{"repro-run resets the count", "reerees", "RRRRRRR"},
		{"repro-write resets the count", "reeweee", "RRRRRRl"},
		{"after the fall-back LOC explores freely", "reeeee", "RRRlLL"},
		{"after the fall-back forward again", "reeewp", "RRRlRP"},
		// From PATCH: every class.
		{"PATCH explore stays PATCH", "pe", "PP"},
		{"PATCH many explorations stay PATCH", "peeee", "PPPPP"},
		{"PATCH repro-write stays PATCH", "pw", "PP"},
		{"PATCH test run falls back to REP", "pr", "Pr"},
		{"PATCH edit stays PATCH", "pp", "PP"},
		{"PATCH other keeps PATCH", "po", "PP"},
		{"PATCH submit keeps PATCH", "ps", "PP"},
		// Both fall-backs in one trajectory.
		{"PATCH → REP → LOC → PATCH", "prpreeep", "PrPrRRlP"},
		{"REP after a PATCH fall-back counts explorations anew", "pree", "PrRR"},
		{"typical", "eewrepeprs", "LLRRRPPPrR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := RouteSWE(classesOf(tt.classes))
			if got := routeString(rs); got != tt.want {
				t.Errorf("RouteSWE(%q) = %q, want %q", tt.classes, got, tt.want)
			}
			for i, r := range rs {
				if r.Why == "" {
					t.Errorf("RouteSWE(%q)[%d] has no reason", tt.classes, i)
				}
			}
		})
	}
}

func TestRouteSWEReasons(t *testing.T) {
	rs := RouteSWE(classesOf("pr" + "eee"))
	if !strings.Contains(rs[1].Why, "falls back to REP") || !strings.Contains(rs[4].Why, "falls back to LOC") {
		t.Errorf("fall-back reasons = %q / %q", rs[1].Why, rs[4].Why)
	}
	if !strings.Contains(rs[2].Why, "1 of 3") {
		t.Errorf("exploration count reason = %q", rs[2].Why)
	}
}

func TestRouteSWEDeterministic(t *testing.T) {
	cs := classesOf("ewrepepreeeopswr")
	a, b := routeString(RouteSWE(cs)), routeString(RouteSWE(cs))
	if a != b {
		t.Errorf("RouteSWE is not deterministic: %q vs %q", a, b)
	}
}

func TestParseSWEStage(t *testing.T) {
	for in, want := range map[string]SWEStage{"LOC": SWEStageLOC, "rep": SWEStageREP, "P": SWEStagePATCH} {
		if got, ok := ParseSWEStage(in); !ok || got != want || got.String() != map[SWEStage]string{SWEStageLOC: "LOC", SWEStageREP: "REP", SWEStagePATCH: "PATCH"}[want] {
			t.Errorf("ParseSWEStage(%q) = %v, %v", in, got, ok)
		}
	}
	if _, ok := ParseSWEStage("x"); ok {
		t.Error("ParseSWEStage(x) ok")
	}
}
