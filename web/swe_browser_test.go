package web_test

import (
	"bufio"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"groundwork/web"
)

// serveDir starts `groundwork serve` on an existing data directory and
// returns its address and the admin password it prints on first start.
func serveDir(t *testing.T, dir string) servedApp {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- web.Run(ctx, []string{"groundwork", "serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-demo"},
			func(string) string { return "" }, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var app servedApp
	passRe := regexp.MustCompile(`^\s*password\s+(\S+)\s*$`)
	urlRe := regexp.MustCompile(`serving on (http://\S+)`)
	sc := bufio.NewScanner(pr)
	deadline := time.Now().Add(30 * time.Second)
	for app.URL == "" && time.Now().Before(deadline) && sc.Scan() {
		if m := passRe.FindStringSubmatch(sc.Text()); m != nil {
			app.Password = m[1]
		}
		if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
			app.URL = m[1]
		}
	}
	go func() {
		for sc.Scan() { // keep draining so serve never blocks on stdout
		}
	}()
	if app.URL == "" || app.Password == "" {
		t.Fatal("serve did not print its address and the admin password")
	}
	return app
}

// TestBrowserSWE imports SWE logs, metadata and results with the CLI, then in
// a browser compares two runs, opens a run's stage timelines, clicks a step
// to see its action, observation and reason under the bar (htmx), and opens
// the trajectory's diagnostics and the instance's evidence slices.
func TestBrowserSWE(t *testing.T) {
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"import", "--run", "mini", sweFixture("acme__calc-1.traj.json")},
		{"import", "--run", "openhands", sweFixture("openhands_output.jsonl")},
		{"import", sweFixture("instances.jsonl")},
		{"import", "--run", "mini", sweFixture("report_keyed.json")},
	} {
		if _, stderr, err := cli(t, dir, "", args...); err != nil {
			t.Fatalf("groundwork %v: %v\n%s", args, err, stderr)
		}
	}
	app := serveDir(t, dir)

	err := chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/swe"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), app.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=swe-compare-table]`)),
	)
	if err != nil {
		screenshot(t, ctx, "swe-00-login-failed")
		t.Fatalf("log in and see the SWE comparison: %v", err)
	}
	screenshot(t, ctx, "swe-01-compare")
	table := text(t, ctx, `[data-testid=swe-compare-table]`)
	for _, want := range []string{"mini", "openhands", "baseline", "paired on 1 instance", "over 1 instance"} {
		if !strings.Contains(table, want) {
			t.Errorf("comparison lacks %q:\n%s", want, table)
		}
	}

	err = chromedp.Do(ctx,
		chromedp.Click(`//table[@data-testid="swe-compare-table"]//a[normalize-space(text())="mini"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=swe-bar]`)),
	)
	if err != nil {
		t.Fatalf("open the mini run's timelines: %v", err)
	}
	screenshot(t, ctx, "swe-02-timelines")
	// The seventh step re-runs the reproduction script after the fix: a
	// fall-back to REP. Clicking it shows its detail under the bar.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`[data-testid=swe-bar] a:nth-child(7)`)),
		chromedp.WaitVisible(chromedp.CSS(`.swe-detail [data-testid=swe-step]`)),
	)
	if err != nil {
		t.Fatalf("click a step: %v", err)
	}
	screenshot(t, ctx, "swe-03-step")
	detail := text(t, ctx, `.swe-detail [data-testid=swe-step]`)
	for _, want := range []string{"python3 reproduce_issue.py", "runs a test while in PATCH: falls back to REP", "fall-back"} {
		if !strings.Contains(detail, want) {
			t.Errorf("step detail lacks %q:\n%s", want, detail)
		}
	}

	err = chromedp.Do(ctx,
		chromedp.Click(`//li[@data-testid="swe-timeline"]//a[normalize-space(text())="acme__calc-1"][1]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=swe-figures]`)),
	)
	if err != nil {
		t.Fatalf("open the trajectory's diagnostics: %v", err)
	}
	screenshot(t, ctx, "swe-04-trajectory")
	figures := text(t, ctx, `[data-testid=swe-figures]`)
	for _, want := range []string{"localization", "1.00", "reproduction", "verification", "completion", "resolved"} {
		if !strings.Contains(figures, want) {
			t.Errorf("figures lack %q:\n%s", want, figures)
		}
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/swe/instances/acme__calc-1"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=swe-total]`)),
	)
	if err != nil {
		t.Fatalf("open the evidence slices: %v", err)
	}
	screenshot(t, ctx, "swe-05-evidence")
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors (CSP violations show here): %v", p)
	}
}
