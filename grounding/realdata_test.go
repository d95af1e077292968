package grounding

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realAirline is the τ-bench airline log (sierra-research/tau-bench,
// historical_trajectories/gpt-4o-airline.json), kept outside the repository.
var realAirline = filepath.Join("..", "..", "shared", "realdata", "tau-bench", "gpt-4o-airline.json")

// TestRealTauBenchAirline imports the real τ-bench log and checks the counts
// its MANIFEST states, plus a 1:1 message mapping against the source.
func TestRealTauBenchAirline(t *testing.T) {
	data, err := os.ReadFile(realAirline)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("real τ-bench log not found at %s: ../shared/realdata is not checked out", realAirline)
	}
	if err != nil {
		t.Fatal(err)
	}
	// The source's own traj lengths, decoded independently of the importer.
	var source []struct {
		Traj []json.RawMessage `json:"traj"`
	}
	if err := json.Unmarshal(data, &source); err != nil {
		t.Fatal(err)
	}

	f, err := os.Open(realAirline)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var trajs, calls, errorObs, decisions int
	parents := make(map[string]bool)
	for tr, err := range Read(f, "gpt-4o-airline.json", FormatAuto) {
		if err != nil {
			t.Fatalf("Read(gpt-4o-airline.json) error after %d trajectories: %v", trajs, err)
		}
		i := tr.Source.Index
		if i != trajs || tr.Source.Format != string(FormatTauBench) || tr.Source.Line < 2 {
			t.Fatalf("Read(gpt-4o-airline.json)[%d].Source = %+v, want tau-bench index %d with a line", trajs, tr.Source, trajs)
		}
		if len(tr.Messages) != len(source[i].Traj) {
			t.Errorf("Read(gpt-4o-airline.json)[%d] = %d messages, want %d (the traj length)", i, len(tr.Messages), len(source[i].Traj))
		}
		kinds := map[string]bool{}
		for _, h := range tr.Hidden {
			kinds[h.Kind] = true
		}
		if !kinds[HiddenUserInstruction] || !kinds[HiddenReferenceActions] {
			t.Errorf("Read(gpt-4o-airline.json)[%d].Hidden kinds = %v, want user_instruction and reference_actions", i, kinds)
		}
		if tr.Domain != "airline" || !strings.HasPrefix(tr.ID, "gpt-4o-airline-task") {
			t.Errorf("Read(gpt-4o-airline.json)[%d] id, domain = %q, %q; want gpt-4o-airline-task…, airline", i, tr.ID, tr.Domain)
		}
		for _, m := range tr.Messages {
			calls += len(m.ToolCalls)
			if m.Role == RoleTool && strings.HasPrefix(m.Content, "Error:") {
				errorObs++
				if !m.Error {
					t.Errorf("Read(gpt-4o-airline.json)[%d]: observation %q not marked as an error", i, m.Content)
				}
			}
		}
		// Every call of this log is answered, reused ids included.
		for _, d := range Decisions(tr) {
			decisions++
			if !d.IsReply() && d.Observation < 0 {
				t.Errorf("Decisions(%s) call %d at message %d has no observation, want one", tr.ID, d.Call, d.Message)
			}
		}
		parents[tr.Parent()] = true
		trajs++
	}
	if trajs != 200 || calls != 1164 || errorObs != 73 || len(parents) != 50 {
		t.Errorf("Read(gpt-4o-airline.json) = %d trajectories, %d tool calls, %d error observations, %d parents; want 200, 1164, 73, 50",
			trajs, calls, errorObs, len(parents))
	}
	if decisions < calls {
		t.Errorf("Decisions over gpt-4o-airline.json = %d, want at least the %d calls", decisions, calls)
	}
}
