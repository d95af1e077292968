package demo

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"groundwork/grounding"
)

// TestSWEDemoTellsItsStories diagnoses the SWE demo as the server does and
// checks that every trajectory still shows the behavior it was written to
// show: a router or diagnostics change that blurred one would leave the
// demo's comparison saying nothing.
func TestSWEDemoTellsItsStories(t *testing.T) {
	files := SWEFiles()
	if len(files) != 5 || files[0].Name != SWEInstancesFile || files[0].Run != "" {
		t.Fatalf("SWE demo files: want instances then two runs with results, got %d files", len(files))
	}
	insts := map[string]*grounding.SWEInstance{}
	for in, err := range grounding.ReadSWEInstances(bytes.NewReader(files[0].Data), files[0].Name) {
		if err != nil {
			t.Fatalf("instances: %v", err)
		}
		insts[in.InstanceID] = in
	}
	if len(insts) != SWEInstances {
		t.Fatalf("%d instances read, want %d", len(insts), SWEInstances)
	}
	for _, in := range insts {
		if len(in.FailToPass) == 0 || len(in.PatchFiles()) == 0 || !strings.Contains(in.TestPatch, "+def test_") {
			t.Errorf("%s: incomplete reference (F2P %v, patch files %v)", in.InstanceID, in.FailToPass, in.PatchFiles())
		}
	}

	type story struct {
		loc                float64
		repro, verif, done *bool
		stages             string
	}
	yes, no := new(bool), new(bool)
	*yes = true
	want := map[string]story{
		// The base model: what it found first, rarely checked.
		"demo-swe-base-acme__tally-101":   {loc: 1, repro: no, verif: no, done: yes},
		"demo-swe-base-acme__tally-117":   {loc: 0, repro: no, verif: no, done: yes},   // the wrong file
		"demo-swe-base-acme__tally-128":   {loc: 1, repro: yes, verif: no, done: yes},  // never re-ran
		"demo-swe-base-acme__tally-140":   {loc: 0.5, repro: no, verif: no, done: yes}, // one of two files
		"demo-swe-base-acme__tally-152":   {loc: 0, repro: no, verif: nil, done: no},   // step limit
		"demo-swe-base-acme__tally-163":   {loc: 1, repro: yes, verif: no, done: yes},  // re-ran, failed, submitted
		"demo-swe-ladder-acme__tally-101": {loc: 1, repro: yes, verif: yes, done: yes},
		"demo-swe-ladder-acme__tally-117": {loc: 1, repro: yes, verif: yes, done: yes},
		"demo-swe-ladder-acme__tally-128": {loc: 1, repro: no, verif: yes, done: yes}, // its script shows no bug
		"demo-swe-ladder-acme__tally-140": {loc: 1, repro: yes, verif: yes, done: yes},
		"demo-swe-ladder-acme__tally-152": {loc: 1, repro: yes, verif: yes, done: yes},
		"demo-swe-ladder-acme__tally-163": {loc: 1, repro: yes, verif: yes, done: yes, stages: "LLRRPrPrRR"}, // patch, refuted, patch again
	}
	seen := 0
	for _, f := range files[1:] {
		if strings.HasSuffix(f.Name, sweResultsSuffix) {
			var res map[string]struct{ Resolved bool }
			if err := json.Unmarshal(f.Data, &res); err != nil || len(res) != SWEInstances {
				t.Errorf("%s: %d results, err %v", f.Name, len(res), err)
			}
			continue
		}
		for tr, err := range grounding.Read(bytes.NewReader(f.Data), f.Name, grounding.FormatAuto) {
			if err != nil {
				t.Fatalf("%s: %v", f.Name, err)
			}
			w, ok := want[tr.ID]
			if !ok {
				t.Errorf("unexpected trajectory %s", tr.ID)
				continue
			}
			seen++
			d := grounding.DiagnoseSWE(tr, insts[grounding.SWEMetaOf(tr).InstanceID])
			if d.Localization == nil || *d.Localization != w.loc {
				t.Errorf("%s: localization %v, want %v (edited %v)", tr.ID, fmtPtr(d.Localization), w.loc, d.EditedFiles)
			}
			if !sameBool(d.Reproduction, w.repro) || !sameBool(d.Verification, w.verif) || d.Completed != *w.done {
				t.Errorf("%s: reproduction %v verification %v completed %v; want %v %v %v (stages %s)", tr.ID,
					fmtPtr(d.Reproduction), fmtPtr(d.Verification), d.Completed, fmtPtr(w.repro), fmtPtr(w.verif), *w.done, d.StageString())
			}
			if w.stages != "" && d.StageString() != w.stages {
				t.Errorf("%s: stages %s, want %s", tr.ID, d.StageString(), w.stages)
			}
			// The demo's commands use what earlier output showed: none
			// needs hidden context, an unseen tool, or contradicts it.
			r := grounding.Check(tr, nil)
			for _, dec := range r.Decisions {
				for _, why := range dec.Reasons {
					if why == "vis.hidden_leak" || why == "vis.tool_unseen" || why == "vis.contradiction" {
						t.Errorf("%s message %d: %s", tr.ID, dec.Message, why)
					}
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("read %d of the %d demo trajectories", seen, len(want))
	}
}

func sameBool(a, b *bool) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func fmtPtr[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// TestGeneratedIsDeterministic: the generated demo pool is the same bytes
// every time, so two fresh servers show the same pages.
func TestGeneratedIsDeterministic(t *testing.T) {
	a, b := Generated(), Generated()
	if !bytes.Equal(a, b) || bytes.Count(a, []byte("\n")) != GeneratedTrajectories {
		t.Fatalf("generated pool: %d and %d bytes, %d lines", len(a), len(b), bytes.Count(a, []byte("\n")))
	}
}
