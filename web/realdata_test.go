package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"groundwork/grounding"
	"groundwork/web"
)

// realTauAirline is the public τ-bench log shared beside the repository.
var realTauAirline = filepath.Join("..", "..", "shared", "realdata", "tau-bench", "gpt-4o-airline.json")

func needRealTau(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(realTauAirline); err != nil {
		tb.Skipf("real τ-bench log not found at %s (../shared/realdata is not checked out): %v", realTauAirline, err)
	}
}

// TestRealTauEveryTrajectoryOpens imports the real τ-bench airline log and
// opens every trajectory page, following the decision pages to the end, so
// each of its 2,544 decisions is rendered once with its three panes.
func TestRealTauEveryTrajectoryOpens(t *testing.T) {
	needRealTau(t)
	a := startApp(t)
	ctx := context.Background()
	res, err := web.Importer{DB: a.db}.ImportFile(ctx, "", realTauAirline, "gpt-4o-airline.json", grounding.FormatAuto)
	if err != nil {
		t.Fatalf("import real log: %v", err)
	}
	if res.Trajectories != 200 {
		t.Fatalf("imported %d trajectories, want 200", res.Trajectories)
	}
	c := a.client()
	a.login(c, "rita")

	page, err := a.db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: res.RunID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Rows) != 200 {
		t.Fatalf("run lists %d trajectories, want 200", len(page.Rows))
	}
	total := 0
	for _, row := range page.Rows {
		path := fmt.Sprintf("/trajectories/%d", row.ID)
		resp, body := a.do(c, "GET", path, nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s (%s) = %d", path, row.ExtID, resp.StatusCode)
		}
		n := countDecisions(t, body)
		for from := n; from < row.Decisions; {
			resp, body := a.do(c, "GET", fmt.Sprintf("%s/decisions?from=%d", path, from), nil, map[string]string{"HX-Request": "true"})
			if resp.StatusCode != 200 {
				t.Fatalf("decisions page of %s from %d = %d", row.ExtID, from, resp.StatusCode)
			}
			k := countDecisions(t, body)
			if k == 0 {
				t.Fatalf("decisions page of %s from %d is empty, want %d more", row.ExtID, from, row.Decisions-from)
			}
			from += k
			n += k
		}
		if n != row.Decisions {
			t.Errorf("%s shows %d decisions, want %d", row.ExtID, n, row.Decisions)
		}
		total += n
	}
	if total != 2544 {
		t.Errorf("rendered %d decisions in all, want 2544 (1,164 tool calls and 1,380 text replies)", total)
	}
}

func countDecisions(t *testing.T, body string) int {
	t.Helper()
	return parse(t, body).Find(`[data-testid=decision]`).Length()
}
