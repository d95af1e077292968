package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"groundwork/grounding"
	"groundwork/web"
	"groundwork/web/demo"
)

// checkProjections opens every trajectory of a run and checks, for every
// decision card, that the visible pane shows exactly the last visible
// messages before the decision (grounding.VisibleBefore), that the "earlier"
// button counts the rest, and that the hidden pane holds exactly the hidden
// messages before the decision.
func checkProjections(t *testing.T, a *app, c *http.Client, runID int64, src io.Reader, file string) {
	t.Helper()
	ctx := context.Background()
	want := map[string]*grounding.Trajectory{}
	for tr, err := range grounding.Read(src, file, grounding.FormatAuto) {
		if err != nil {
			t.Fatal(err)
		}
		want[tr.ID] = tr
	}
	page, err := a.db.Trajectories(ctx, grounding.TrajectoryFilter{RunID: runID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range page.Rows {
		tr := want[row.ExtID]
		ds := grounding.Decisions(tr)
		var cards []*goquery.Selection
		path := fmt.Sprintf("/trajectories/%d", row.ID)
		for from := 0; from < len(ds); {
			url := path
			if from > 0 {
				url = fmt.Sprintf("%s/decisions?from=%d", path, from)
			}
			resp, body := a.do(c, "GET", url, nil, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s = %d", url, resp.StatusCode)
			}
			n := 0
			parse(t, body).Find(`[data-testid=decision]`).Each(func(_ int, s *goquery.Selection) {
				cards = append(cards, s)
				n++
			})
			if n == 0 {
				t.Fatalf("%s: no decisions from %d", row.ExtID, from)
			}
			from += n
		}
		for i, d := range ds {
			card := cards[i]
			vis := grounding.VisibleBefore(tr, d.Message)
			shown := vis[max(0, len(vis)-4):]
			got := indexes(card.Find(`[data-testid=visible-pane] .msg`))
			if fmt.Sprint(got) != fmt.Sprint(shown) {
				t.Errorf("%s decision %d: visible pane shows messages %v, want %v", row.ExtID, i, got, shown)
			}
			earlier := 0
			if b := card.Find(`[data-testid=visible-pane] [data-testid=earlier]`); b.Length() > 0 {
				f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(b.Text()), "…"))
				earlier, _ = strconv.Atoi(f[0])
			}
			if earlier != len(vis)-len(shown) {
				t.Errorf("%s decision %d: %d earlier messages announced, want %d", row.ExtID, i, earlier, len(vis)-len(shown))
			}
			hidMsgs, _ := grounding.HiddenKnownAt(tr, d.Message)
			if got := indexes(card.Find(`[data-testid=hidden-item][data-index!=""]`)); fmt.Sprint(got) != fmt.Sprint(hidMsgs) {
				t.Errorf("%s decision %d: hidden pane shows messages %v, want %v", row.ExtID, i, got, hidMsgs)
			}
		}
	}
}

func indexes(s *goquery.Selection) []int {
	var out []int
	s.Each(func(_ int, m *goquery.Selection) {
		v, _ := m.Attr("data-index")
		n, _ := strconv.Atoi(v)
		out = append(out, n)
	})
	return out
}

func TestDemoProjections(t *testing.T) {
	a := startApp(t)
	res, err := web.ImportBytes(context.Background(), a.db, demo.RunName, demo.FileName, demo.JSONL)
	if err != nil {
		t.Fatal(err)
	}
	c := a.client()
	a.login(c, "rita")
	checkProjections(t, a, c, res.RunID, bytes.NewReader(demo.JSONL), demo.FileName)
}

func TestRealTauProjections(t *testing.T) {
	needRealTau(t)
	a := startApp(t)
	res, err := web.Importer{DB: a.db}.ImportFile(context.Background(), "", realTauAirline, "gpt-4o-airline.json", grounding.FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	c := a.client()
	a.login(c, "rita")
	f, err := os.Open(realTauAirline)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkProjections(t, a, c, res.RunID, f, "gpt-4o-airline.json")
}
