package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserCoverage opens the coverage page of the demo pool in Chromium:
// no console error (the CSP allows everything it draws), the heatmaps are
// there, filtering the deficit table by an atom swaps only the table, and a
// heatmap cell leads to its trajectories and from there to a decision view.
func TestBrowserCoverage(t *testing.T) {
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	app := serveFresh(t)

	err := chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/login"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), app.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`nav a[href="/coverage"]`)),
		chromedp.Click(chromedp.CSS(`nav a[href="/coverage"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="heatmap-transitions"] svg`)),
	)
	if err != nil {
		screenshot(t, ctx, "coverage-failed")
		t.Fatalf("open the coverage page: %v", err)
	}
	screenshot(t, ctx, "coverage")
	for _, id := range []string{"heatmap-horizon", "heatmap-domain-action", "deficits", "selection"} {
		if s := text(t, ctx, `[data-testid="`+id+`"]`); s == "" {
			t.Errorf("%s is empty", id)
		}
	}

	// Filter the deficit table by its first atom: only the table changes.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#deficits details summary`)),
		chromedp.Click(chromedp.CSS(`#deficits input[name=atom]`)),
		chromedp.WaitVisible(chromedp.CSS(`#deficits details[open] input[name=atom]:checked`)),
	)
	if err != nil {
		screenshot(t, ctx, "coverage-filter-failed")
		t.Fatalf("filter by atom: %v", err)
	}
	// The filtered table arrives by htmx after the click: wait for it.
	var s string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		// The node is replaced by the swap: a read may hit the old one.
		got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[data-testid="deficit-summary"]`)))
		if err == nil {
			s = got
		}
		if strings.Contains(s, " have ") || strings.Contains(s, " has ") {
			break
		}
	}
	if !strings.Contains(s, " have ") && !strings.Contains(s, " has ") {
		t.Errorf("deficit summary after filtering = %q", s)
	}

	// A transitions cell → its trajectories → a decision view.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid="heatmap-transitions"] a.hm-link rect`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="cell-trajectory"] a`)),
		chromedp.Click(chromedp.CSS(`[data-testid="cell-trajectory"] a`)),
		chromedp.WaitVisible(chromedp.CSS(`.decision`)),
	)
	if err != nil {
		screenshot(t, ctx, "coverage-cell-failed")
		t.Fatalf("follow a heatmap cell to a decision view: %v", err)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("console problems: %v", p)
	}
}
