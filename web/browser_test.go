package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"groundwork/web"
)

// chromiumPath finds Debian's chromium. Without it the browser tests skip,
// except under CI=true where a missing browser is a failure.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM_PATH"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found (set CHROMIUM_PATH or apt-get install chromium): the browser tests must run in CI")
	}
	t.Skip("chromium not found (apt-get install chromium, or set CHROMIUM_PATH): skipping the browser test")
	return ""
}

// newBrowser starts headless Chromium with the flags this machine needs.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	// A whole session's deadline, not a latency goal: under go test ./...
	// the browser shares two cores with the store suite and its Postgres,
	// and TestBrowserAdjudication (10.6 s alone) once needed 36 s there.
	ctx, cancelC := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	return ctx
}

// servedApp is groundwork started the way a newcomer starts it: `serve` on an
// empty data directory, reading the printed address and admin password.
type servedApp struct {
	URL      string
	Password string
}

func serveFresh(t *testing.T) servedApp {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	env := map[string]string{}
	go func() {
		done <- web.Run(ctx, []string{"groundwork", "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()},
			func(k string) string { return env[k] }, strings.NewReader(""), pw, io.Discard)
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
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for app.URL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("serve exited before printing its address")
			}
			if m := passRe.FindStringSubmatch(line); m != nil {
				app.Password = m[1]
			}
			if m := urlRe.FindStringSubmatch(line); m != nil {
				app.URL = m[1]
			}
		case <-timeout:
			t.Fatal("serve did not print its address within 30 s")
		}
	}
	go func() {
		for range lines { // keep draining so serve never blocks on stdout
		}
	}()
	if app.Password == "" {
		t.Fatal("serve did not print the admin password on first start")
	}
	return app
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("GROUNDWORK_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("artifact directory: %v", err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Errorf("save screenshot: %v", err)
	}
}

// consoleProblems collects console errors and uncaught exceptions of the tab
// until the test ends; a page that logs one is broken for a user.
func consoleProblems(t *testing.T, ctx context.Context) func() []string {
	t.Helper()
	if err := chromedp.Do(ctx); err != nil { // start the browser and the tab
		t.Fatalf("start chromium: %v", err)
	}
	var (
		mu       sync.Mutex
		problems []string
	)
	cctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	msgs := chromedp.Console(cctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s %s:%d %s", m.Type, m.URL, m.Line+1, m.Text))
				mu.Unlock()
			}
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), problems...)
	}
}

func text(t *testing.T, ctx context.Context, css string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		t.Fatalf("read text of %s: %v", css, err)
	}
	return s
}

// TestBrowserDecisionPanes logs in as the printed admin, opens the demo run
// and a trajectory with a hidden teacher hint, and checks that the hint shows
// in the hidden pane of the decision and nowhere in the visible pane.
func TestBrowserDecisionPanes(t *testing.T) {
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	app := serveFresh(t)

	err := chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/runs"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), app.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
	)
	if err == nil {
		err = chromedp.Do(ctx, chromedp.WaitVisible(`//a[normalize-space(text())="demo"]`))
	}
	if err != nil {
		screenshot(t, ctx, "00-login-failed")
		t.Fatalf("log in and see the runs page: %v", err)
	}
	screenshot(t, ctx, "01-runs")
	err = chromedp.Do(ctx,
		chromedp.Click(`//a[normalize-space(text())="demo"]`),
		chromedp.WaitVisible(`//a[normalize-space(text())="airline-demo-cancel-0"]`),
	)
	if err != nil {
		t.Fatalf("open the demo run: %v", err)
	}
	screenshot(t, ctx, "02-run")
	runURL := evalString(t, ctx, `location.href`)
	err = chromedp.Do(ctx,
		chromedp.Click(`//a[normalize-space(text())="airline-demo-cancel-0"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=decision] [data-testid=hidden-pane]`)),
	)
	if err != nil {
		t.Fatalf("open the trajectory: %v", err)
	}
	screenshot(t, ctx, "03-trajectory")
	visible := text(t, ctx, `[data-testid=decision] [data-testid=visible-pane]`)
	action := text(t, ctx, `[data-testid=decision] [data-testid=action-pane]`)
	hidden := text(t, ctx, `[data-testid=decision] [data-testid=hidden-pane]`)
	if !strings.Contains(visible, "Please cancel my reservation NO6JO3") {
		t.Errorf("visible pane of the first decision = %q, want the user's request", visible)
	}
	if strings.Contains(visible, "certificate_9921331") {
		t.Errorf("visible pane shows the hidden teacher hint: %q", visible)
	}
	if !strings.Contains(hidden, "certificate_9921331") {
		t.Errorf("hidden pane = %q, want the teacher hint with certificate_9921331", hidden)
	}
	if !strings.Contains(action, "get_reservation_details") {
		t.Errorf("action pane = %q, want the get_reservation_details call", action)
	}
	// The last reply of this trajectory contains a <script> tag: it must show
	// as text, never run.
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page, "<script>alert('logs are untrusted')</script>") {
		t.Errorf("the script tag in the log is not shown as text on the page")
	}
	// Wide, the panes stand side by side, history first.
	panesOrder := `(() => {
		const card = document.querySelector("[data-testid=decision]");
		const v = card.querySelector("[data-testid=visible-pane]").getBoundingClientRect();
		const a = card.querySelector("[data-testid=action-pane]").getBoundingClientRect();
		return a.top < v.top - 1 ? "action above" : (v.right <= a.left + 1 ? "side by side" : "history above");
	})()`
	if got := evalString(t, ctx, panesOrder); got != "side by side" {
		t.Errorf("at 1400 px the panes are %s", got)
	}
	// A 900 px window: the panes stack with the action first, and the run
	// table drops the columns it can spare instead of scrolling sideways.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(900, 1000), chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, panesOrder); got != "action above" {
		t.Errorf("at 900 px the panes are %s, want the action above the history", got)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(runURL), chromedp.WaitVisible(chromedp.CSS(`[data-testid=trajectories]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "04-run-900px")
	fit := evalString(t, ctx, `(() => {
		const tb = document.querySelector("[data-testid=trajectories]");
		const wrap = tb.parentElement;
		const heads = [...tb.querySelectorAll("th")].filter(th => th.offsetParent !== null).map(th => th.textContent.trim());
		return (tb.scrollWidth <= wrap.clientWidth ? "fits" : "scrolls " + tb.scrollWidth + ">" + wrap.clientWidth) + ": " + heads.join(",");
	})()`)
	if !strings.HasPrefix(fit, "fits: ") || !strings.Contains(fit, "ambiguous,supervised") || strings.Contains(fit, "source") {
		t.Errorf("run table at 900 px: %s", fit)
	}
	// The admin's top bar (nine links) wraps instead of pushing the page
	// sideways: "log out" stays inside the window at 900 px and at 600 px.
	topbarFits := `(() => {
		const out = [...document.querySelectorAll("header button")].find(b => b.textContent.trim() === "log out");
		const r = out.getBoundingClientRect();
		const w = document.documentElement.clientWidth;
		return (document.documentElement.scrollWidth <= w && r.right <= w && r.left >= 0 ? "fits" : "overflows") +
			" scrollWidth " + document.documentElement.scrollWidth + " window " + w + " log out right " + Math.round(r.right);
	})()`
	if got := evalString(t, ctx, topbarFits); !strings.HasPrefix(got, "fits") {
		t.Errorf("top bar at 900 px: %s", got)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(600, 1000), chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`header`))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, topbarFits); !strings.HasPrefix(got, "fits") {
		t.Errorf("top bar at 600 px: %s", got)
	}
	screenshot(t, ctx, "04b-topbar-600px")
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}

// attr reads one attribute of the first element css matches.
func attr(t *testing.T, ctx context.Context, css, name string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(css), name))
	if err != nil || !v.Exists {
		t.Fatalf("read %s of %s: %v (exists %v)", name, css, err, v.Exists)
	}
	return v.Value
}
