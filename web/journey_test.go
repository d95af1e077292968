package web_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// failedRequests records every response of 400 or more, and every request
// that failed outright, seen by the tab until the test ends.
func failedRequests(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	var (
		mu  sync.Mutex
		bad []string
	)
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	responses := chromedp.Events(cctx, network.ResponseReceived)
	failures := chromedp.Events(cctx, network.LoadingFailed)
	go func() {
		for ev, err := range responses {
			if err != nil {
				return
			}
			if ev.Response != nil && ev.Response.Status >= 400 {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%d %s", ev.Response.Status, ev.Response.URL))
				mu.Unlock()
			}
		}
	}()
	go func() {
		for ev, err := range failures {
			if err != nil {
				return
			}
			if ev.Canceled {
				continue // a navigation replacing an in-flight request
			}
			mu.Lock()
			bad = append(bad, "failed: "+ev.ErrorText)
			mu.Unlock()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bad...)
	}
}

// TestNewcomerJourney is the first hour of a new user, in a browser: start
// groundwork on an empty data directory, follow the printed login, see the
// demo pool, open a run and a trajectory, adjudicate the queued decision with
// the keyboard, open the coverage page, compare the demo's SWE runs and
// download an export. It saves a
// screenshot of each step (GROUNDWORK_ARTIFACTS) and fails on any console
// error or failed request.
func TestNewcomerJourney(t *testing.T) {
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	failed := failedRequests(t, ctx)
	app := serveFresh(t)

	step := func(name string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			screenshot(t, ctx, "journey-failed-"+name)
			t.Fatalf("%s: %v", name, err)
		}
		screenshot(t, ctx, "journey-"+name)
	}
	step("01-login",
		chromedp.Navigate(app.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), app.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(`//a[normalize-space(text())="demo"]`),
	)
	step("02-run",
		chromedp.Click(`//a[normalize-space(text())="demo"]`),
		chromedp.WaitVisible(`//a[normalize-space(text())="airline-demo-change-0"]`),
	)
	step("03-trajectory",
		chromedp.Click(`//a[normalize-space(text())="airline-demo-change-0"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=decision] [data-testid=hidden-pane]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=verdict][data-verdict=ambiguous]`)),
	)
	step("04-review",
		chromedp.Navigate(app.URL+"/review"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=approve]`)),
	)
	if got := text(t, ctx, `[data-testid=mine-today]`); !strings.HasPrefix(strings.TrimSpace(got), "0") {
		t.Errorf("before any verdict, mine today = %q", got)
	}
	first := attr(t, ctx, `[data-testid=review]`, "data-item")
	// The demo queue holds more than one item: the verdict lands and the
	// next item swaps in.
	step("05-adjudicated",
		chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)),
		chromedp.KeyEvent("a"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=review]:not([data-item="`+first+`"])`)),
	)
	if got := text(t, ctx, `[data-testid=mine-today]`); !strings.HasPrefix(strings.TrimSpace(got), "1") {
		t.Errorf("after approving with the keyboard, mine today = %q, want 1", got)
	}
	step("06-coverage",
		chromedp.Navigate(app.URL+"/coverage"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=audit]`)),
		chromedp.WaitVisible(chromedp.CSS(`svg`)),
	)
	// The SWE demo: two agents compared on the same instances.
	step("07-swe",
		chromedp.Navigate(app.URL+"/swe"),
		chromedp.WaitVisible(`//a[normalize-space(text())="demo-swe-base"]`),
		chromedp.WaitVisible(`//a[normalize-space(text())="demo-swe-ladder"]`),
	)
	if got := text(t, ctx, `main table`); !strings.Contains(got, "0.58") || !strings.Contains(got, "+0.42") {
		t.Errorf("SWE comparison of the demo runs: want base localization 0.58 and the ladder's +0.42, got %q", got)
	}
	step("08-export",
		chromedp.Navigate(app.URL+"/export"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=export-link]`)),
	)
	// Download what the link points at, with the browser's session, and
	// look at it as a pipeline would.
	var got struct {
		Status int    `json:"status"`
		Type   string `json:"type"`
		Body   string `json:"body"`
	}
	dl, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]any](`(async () => {
		const a = document.querySelector('[data-testid=export-link]');
		const r = await fetch(a.href);
		return {status: r.status, type: r.headers.get('content-type'), body: await r.text()};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("download the export: %v", err)
	}
	got.Status = int(dl["status"].(float64))
	got.Type, _ = dl["type"].(string)
	got.Body, _ = dl["body"].(string)
	if got.Status != 200 || got.Body == "" {
		t.Errorf("export download = %d %q, %d bytes", got.Status, got.Type, len(got.Body))
	}
	// Strings only the demo's hidden context holds (its teacher hint and
	// user instructions); the certificate id the hint leaked into a visible
	// reply is visible, so it may appear.
	for _, marker := range []string{"teacher note", "is refundable", "You are mia_li_3668", "You are Yusuf Rossi"} {
		if strings.Contains(got.Body, marker) {
			t.Errorf("the export contains hidden context %q", marker)
		}
	}
	time.Sleep(200 * time.Millisecond) // let late console messages arrive
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
	if f := failed(); len(f) > 0 {
		t.Errorf("failed requests: %v", f)
	}
}
