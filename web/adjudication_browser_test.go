package web_test

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// serveAdjudication prepares a data directory the way a team would: the
// fixture imported with `groundwork import`, two annotators added with
// `groundwork user add`, then `groundwork serve` on it. It returns the URL
// and the data directory.
func serveAdjudication(t *testing.T) (string, string) {
	t.Helper()
	return serveFixture(t, adjudicationFixture, "adj")
}

// serveFixture is serveAdjudication with another fixture, imported as run.
func serveFixture(t *testing.T, fixture, run string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	env := func(string) string { return "" }
	cmd := func(stdin string, args ...string) {
		t.Helper()
		var out strings.Builder
		err := web.Run(context.Background(), append([]string{"groundwork"}, args...), env, strings.NewReader(stdin), &out, &out)
		if err != nil {
			t.Fatalf("groundwork %v: %v\n%s", args, err, out.String())
		}
	}
	cmd("", "import", "--data", dir, "--run", run, fixture)
	cmd("password-ann\n", "user", "add", "ann", "--role", "annotator", "--data", dir)
	cmd("password-bea\n", "user", "add", "bea", "--role", "annotator", "--data", dir)

	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- web.Run(ctx, []string{"groundwork", "serve", "--addr", "127.0.0.1:0", "--data", dir, "--no-demo"},
			env, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	urlRe := regexp.MustCompile(`serving on (http://\S+)`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return u, dir
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not print its address within 30 s")
	}
	return "", ""
}

func browserLogin(t *testing.T, ctx context.Context, base, name string) {
	t.Helper()
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/login?next=%2Freview"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), name),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-"+name),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`)),
	)
	if err != nil {
		screenshot(t, ctx, "adj-login-"+name)
		t.Fatalf("%s logs in and sees the review screen: %v", name, err)
	}
}

func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// markHiddenJS names the first scroll box, between the review screen's
// evidence mark and its pane, that has the mark outside its visible
// rectangle ("" when every box shows it, or there is no mark).
const markHiddenJS = `(function () {
	var m = document.querySelector("#review mark.evidence");
	if (!m) return "";
	var r = m.getBoundingClientRect();
	for (var b = m.parentElement; b && b.id !== "review"; b = b.parentElement) {
		var st = getComputedStyle(b);
		if (!/(auto|scroll)/.test(st.overflowY + st.overflowX)) continue;
		var q = b.getBoundingClientRect();
		if (r.top < q.top || r.bottom > q.bottom || r.left < q.left || r.right > q.right) {
			return b.tagName + "." + b.className + " (" + Math.round(r.top - q.top) + "px down, " + Math.round(r.left - q.left) + "px across)";
		}
	}
	return "";
})()`

// typedKey presses a printable key as a keyboard does: one keydown that
// carries its text, so a handler that prevents the keydown's default also
// keeps the character out of whatever it focused. (chromedp.KeyEvent sends
// the character as a separate event, which no handler can prevent: "n"
// focused the note and then typed an "n" into it.)
func typedKey(key string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: key, Text: key, UnmodifiedText: key}
		if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, down); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: key})
		return err
	})
}

// currentItem is the id of the item on the review screen.
func currentItem(t *testing.T, ctx context.Context) string {
	return evalString(t, ctx, `(document.querySelector("#review") || {dataset: {}}).dataset.item || ""`)
}

// requestHold holds the browser's requests that match a URL pattern, with
// the DevTools Fetch domain, until the test lets one go on or answers it.
type requestHold struct {
	ctx    context.Context
	mu     sync.Mutex
	paused []fetch.RequestID
}

func holdRequests(t *testing.T, ctx context.Context) *requestHold {
	t.Helper()
	h := &requestHold{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			h.mu.Lock()
			h.paused = append(h.paused, e.RequestID)
			h.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// start holds the requests whose URL matches pattern from now on.
func (h *requestHold) start(t *testing.T, pattern string) {
	t.Helper()
	h.mu.Lock()
	h.paused = nil
	h.mu.Unlock()
	err := chromedp.Do(h.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: pattern}}})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// one waits (up to 5 s) for a held request and returns it; more than one
// held is an error (what was sent twice).
func (h *requestHold) one(t *testing.T, what string) fetch.RequestID {
	t.Helper()
	for range 100 {
		h.mu.Lock()
		n := len(h.paused)
		var id fetch.RequestID
		if n > 0 {
			id = h.paused[0]
		}
		h.mu.Unlock()
		switch {
		case n == 1:
			return id
		case n > 1:
			t.Fatalf("%d %s requests held, want 1", n, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s request was sent", what)
	return ""
}

// release lets a held request go on to the server and stops holding.
func (h *requestHold) release(t *testing.T, id fetch.RequestID) {
	t.Helper()
	h.end(t, func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id})
		return err
	})
}

// answer answers a held request in the browser instead of the server and
// stops holding.
func (h *requestHold) answer(t *testing.T, p fetch.FulfillRequestParams) {
	t.Helper()
	h.end(t, func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.FulfillRequest, p)
		return err
	})
}

func (h *requestHold) end(t *testing.T, do func(context.Context, *chromedp.Target) error) {
	t.Helper()
	err := chromedp.Do(h.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if err := do(ctx, tg); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, fetch.Disable, cdp.Empty{})
		return err
	}))
	if err != nil {
		t.Fatal(err)
	}
}

func mineToday(t *testing.T, ctx context.Context) string {
	return evalString(t, ctx, `document.querySelector("[data-testid=mine-today]").textContent.trim()`)
}

// press types key on the review screen and waits until the screen shows
// another item than before (or, with sameItem, a fresh notice).
func press(t *testing.T, ctx context.Context, key, shot string) string {
	t.Helper()
	before := currentItem(t, ctx)
	// Mark the old screen: the swap replaces #review, so the mark goes.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("#review").dataset.old = "1", true`)); err != nil {
		t.Fatal(err)
	}
	// Keys judge an item only once it has settled on screen (data-ready).
	if err := chromedp.Do(ctx, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)), chromedp.KeyEvent(key)); err != nil {
		t.Fatalf("press %q: %v", key, err)
	}
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`(function () { var r = document.querySelector("#review"); return !!r && !r.dataset.old && !document.querySelector(".htmx-request"); })()`,
		chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil {
		screenshot(t, ctx, shot+"-failed")
		t.Fatalf("after %q the review screen was not swapped: %v", key, err)
	}
	screenshot(t, ctx, shot)
	after := currentItem(t, ctx)
	t.Logf("%q: item %s → %s, %s", key, before, after, mineToday(t, ctx))
	return after
}

// TestBrowserAdjudication: an annotator logs in, adjudicates three items
// with the keyboard, undoes one and sees progress change, each next item
// swapped in without a page load; a second annotator working at the same
// time is never shown an item the first one holds.
func TestBrowserAdjudication(t *testing.T) {
	base, dir := serveAdjudication(t)
	ann := newBrowser(t)
	problems := consoleProblems(t, ann)
	bea := newBrowser(t)
	beaProblems := consoleProblems(t, bea)

	browserLogin(t, ann, base, "ann")
	browserLogin(t, bea, base, "bea")
	screenshot(t, ann, "adj-01-review")

	// The screen: three panes, why queued, the argument in question lit.
	for _, sel := range []string{"[data-testid=visible-pane]", "[data-testid=action-pane]", "[data-testid=hidden-pane]", "[data-testid=why]", "[data-testid=question]"} {
		if n := evalString(t, ann, `String(document.querySelectorAll("`+sel+`").length)`); n == "0" {
			t.Errorf("review screen lacks %s", sel)
		}
	}
	if lit := evalString(t, ann, `String(document.querySelectorAll("#review button.arg[data-question].evidence-target").length)`); lit != "1" {
		t.Errorf("the argument in question is not pre-highlighted (%s lit)", lit)
	}
	if got := mineToday(t, ann); got != "0 today" {
		t.Errorf("progress before any verdict = %q", got)
	}
	remaining := evalString(t, ann, `document.querySelector("[data-testid=remaining]").textContent.trim()`)
	if remaining != "14 left" {
		t.Errorf("remaining = %q, want 14 left", remaining)
	}

	beaItem := currentItem(t, bea)
	held := []string{currentItem(t, ann)}
	if held[0] == beaItem {
		t.Fatalf("both annotators were handed item %s", beaItem)
	}
	// A full page load would lose this marker.
	if _, err := chromedp.Run(ann, chromedp.Evaluate[bool](`window.__noReload = true`)); err != nil {
		t.Fatal(err)
	}

	// Three verdicts with the keyboard: a, r, a. Each is pressed from the
	// bottom of the page; the next item must open at its top, where its
	// "why queued" is, with the mark of its question inside every scroll
	// box that holds it.
	for i, key := range []string{"a", "r", "a"} {
		if y := evalString(t, ann, `window.scrollTo(0, document.body.scrollHeight), String(window.scrollY)`); y == "0" {
			t.Fatalf("the review page does not scroll (scrollY %s): the test cannot tell a reset", y)
		}
		next := press(t, ann, key, "adj-0"+string(rune('2'+i))+"-after-"+key)
		if y := evalString(t, ann, `(function(){var r=document.querySelector("[data-testid=why]").getBoundingClientRect();return String(Math.round(window.scrollY))+" "+String(Math.round(r.top))})()`); !strings.HasPrefix(y, "0 ") {
			t.Errorf("after %q the next item opens scrolled (scrollY, top of why queued: %s), want at the top", key, y)
		}
		if hid := evalString(t, ann, markHiddenJS); hid != "" {
			t.Errorf("after %q the evidence mark is scrolled out of %s", key, hid)
		}
		// The mark must not move the text it marks: a margin or padding
		// reads as spaces inside an id in monospace JSON.
		if box := evalString(t, ann, `(function(){var m=document.querySelector("#review mark.evidence"); if(!m) return "none"; var s=getComputedStyle(m); return [s.marginLeft,s.marginRight,s.paddingLeft,s.paddingRight].join(" ")})()`); box != "0px 0px 0px 0px" && box != "none" {
			t.Errorf("after %q the evidence mark has margins and padding %s: it shifts the marked text", key, box)
		}
		if slices.Contains(held, next) {
			t.Errorf("after %q the screen shows item %s again", key, next)
		}
		if next == beaItem {
			t.Errorf("ann was handed bea's item %s", next)
		}
		held = append(held, next)
		if want := string(rune('1'+i)) + " today"; mineToday(t, ann) != want {
			t.Errorf("after %d verdicts progress = %q, want %q", i+1, mineToday(t, ann), want)
		}
	}
	notice := evalString(t, ann, `document.querySelector("[data-testid=notice]").textContent`)
	if !strings.Contains(notice, "Recorded") {
		t.Errorf("notice after a verdict = %q", notice)
	}

	// u: the last verdict is undone, its item comes back, progress drops.
	back := press(t, ann, "u", "adj-05-after-undo")
	if back != held[2] {
		t.Errorf("undo shows item %s, want the last judged %s", back, held[2])
	}
	if got := mineToday(t, ann); got != "2 today" {
		t.Errorf("progress after undo = %q, want 2 today", got)
	}
	if ok := evalString(t, ann, `String(window.__noReload === true)`); ok != "true" {
		t.Errorf("a verdict reloaded the page instead of swapping the next item in")
	}

	// ? shows the shortcuts, Escape closes them.
	if err := chromedp.Do(ann, chromedp.KeyEvent("?"), chromedp.WaitVisible(chromedp.CSS(`#shortcuts`))); err != nil {
		t.Errorf("? does not show the shortcuts: %v", err)
	}
	screenshot(t, ann, "adj-06-shortcuts")
	if err := chromedp.Do(ann, chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(chromedp.CSS(`#shortcuts`))); err != nil {
		t.Errorf("Escape does not close the shortcuts: %v", err)
	}
	// n goes to the note, Enter saves it.
	if err := chromedp.Do(ann, typedKey("n"), chromedp.KeyEvent("the user named the city only"), chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=my-notes]`))); err != nil {
		screenshot(t, ann, "adj-07-note-failed")
		t.Fatalf("n, typing and Enter do not save a note: %v", err)
	}
	if notes := evalString(t, ann, `document.querySelector("[data-testid=my-notes]").textContent`); !strings.HasSuffix(strings.TrimSpace(notes), " the user named the city only") {
		t.Errorf("notes = %q", notes)
	}
	screenshot(t, ann, "adj-07-note")
	// The saved note leaves the field: the next key acts on the item.
	if got := evalString(t, ann, `document.activeElement ? document.activeElement.tagName : ""`); got == "TEXTAREA" {
		t.Errorf("after saving a note the focus stays in the note field: a verdict key would type into it")
	}

	// bea, still at work, keeps her item on reload and is then handed a
	// new one: never one ann holds.
	if err := chromedp.Do(bea, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`))); err != nil {
		t.Fatal(err)
	}
	if got := currentItem(t, bea); got != beaItem {
		t.Errorf("bea's reload shows item %s, want her claim %s", got, beaItem)
	}
	// (held[3], shown to ann before her undo, was released by it: the undo
	// gave her held[2] back, and one annotator holds one item at a time.)
	beaNext := press(t, bea, "a", "adj-08-bea")
	annNow := currentItem(t, ann)
	if beaNext == annNow || slices.Contains(held[:3], beaNext) {
		t.Errorf("bea was handed %s; ann holds %s and judged %v", beaNext, annNow, held[:3])
	}

	// The store agrees: ann has two standing verdicts and one undone.
	db, err := store.Open(context.Background(), filepath.Join(dir, "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.RunByName(context.Background(), "adj")
	if err != nil {
		t.Fatal(err)
	}
	page, err := db.Queue(context.Background(), grounding.QueueFilter{RunID: run.ID, State: grounding.QueueDone})
	if err != nil || len(page.Items) != 3 {
		t.Errorf("done items = %d, %v; want 3 (ann's two standing verdicts and bea's)", len(page.Items), err)
	}
	for _, p := range [][]string{problems(), beaProblems()} {
		if len(p) > 0 {
			t.Errorf("console errors: %v", p)
		}
	}
}

// TestBrowserJudgeFromTrajectory: a reader on a trajectory page follows a
// queued decision's "judge it" to the review screen, which shows that
// decision (not the queue's first item); the verdict key then moves on
// to the run's next item.
func TestBrowserJudgeFromTrajectory(t *testing.T) {
	base, dir := serveAdjudication(t)
	ann := newBrowser(t)
	problems := consoleProblems(t, ann)
	browserLogin(t, ann, base, "ann")
	first := currentItem(t, ann)

	// The queue's last item: never the one the queue hands out first.
	var item, href string
	err := chromedp.Do(ann,
		chromedp.Navigate(base+"/queue"),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-row]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	item = evalString(t, ann, `(function () { var r = document.querySelectorAll("[data-testid=queue-row]"); return r[r.length-1].dataset.item; })()`)
	href = evalString(t, ann, `(function () { var r = document.querySelectorAll("[data-testid=queue-row]"); return r[r.length-1].querySelector("a").getAttribute("href"); })()`)
	if item == first {
		t.Fatalf("fixture: the queue's last item %s is the one it hands out first", item)
	}
	_, anchor, _ := strings.Cut(href, "#")
	err = chromedp.Do(ann,
		chromedp.Navigate(base+href),
		chromedp.WaitVisible(chromedp.CSS(`#`+anchor+` [data-testid=judge]`)),
	)
	if err != nil {
		screenshot(t, ann, "judge-01-trajectory-failed")
		t.Fatalf("the queued decision %s has no judge link: %v", href, err)
	}
	screenshot(t, ann, "judge-01-trajectory")
	// j and k step through the decision cards, naming each in the address.
	key, want := "j", evalString(t, ann, `(function () { var c = document.querySelector("#`+anchor+`").nextElementSibling; return c && c.matches("article.decision") ? c.id : ""; })()`)
	if want == "" {
		key, want = "k", evalString(t, ann, `(function () { var c = document.querySelector("#`+anchor+`").previousElementSibling; return c && c.matches("article.decision") ? c.id : ""; })()`)
	}
	if want == "" {
		t.Fatalf("fixture: decision %s is the trajectory's only one", anchor)
	}
	if err := chromedp.Do(ann, typedKey(key)); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ann, `location.hash`); got != "#"+want {
		t.Errorf("%s from #%s went to %q, want #%s", key, anchor, got, want)
	}
	// The card takes the focus, so Tab goes on into it, not to the page top.
	if got := evalString(t, ann, `document.activeElement.id`); got != want {
		t.Errorf("after %s the focus is on %q, want the card #%s", key, got, want)
	}
	if err := chromedp.Do(ann, chromedp.Navigate(base+href), chromedp.WaitVisible(chromedp.CSS(`#`+anchor+` [data-testid=judge]`))); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ann,
		chromedp.Click(chromedp.CSS(`#`+anchor+` [data-testid=judge]`)),
		chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`)),
	)
	if err != nil {
		t.Fatalf("judge it: %v", err)
	}
	screenshot(t, ann, "judge-02-review")
	if got := currentItem(t, ann); got != item {
		t.Errorf("the review screen shows item %s, want the decision's item %s", got, item)
	}
	// A note typed and left unsaved (Esc) goes with the verdict key.
	if err := chromedp.Do(ann, typedKey("n"), chromedp.SendKeys(chromedp.CSS(`[data-note-input]`), "typed, never saved"),
		chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	// A link away (htmx boosts it: no unload) asks first; declined, the
	// screen and the note stay.
	evalString(t, ann, `window.asked = "", window.confirm = function (q) { window.asked = q; return false; }, ""`)
	if err := chromedp.Do(ann, chromedp.Click(chromedp.CSS(`#review a[href^="/queue"]`))); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a navigation, if one started, would have swapped the body
	if asked := evalString(t, ann, `window.asked`); !strings.Contains(asked, "note") {
		t.Errorf("leaving with an unsaved note asked %q, want a question about the note", asked)
	}
	if got := evalString(t, ann, `location.pathname + " " + (document.querySelector("[data-note-input]") || {value: "gone"}).value`); got != "/review typed, never saved" {
		t.Errorf("after declining to leave: %q, want the review screen with the note", got)
	}
	next := press(t, ann, "a", "judge-03-next")
	if next == item || next == "" {
		t.Errorf("after the verdict the screen shows item %q, want the queue's next", next)
	}
	db, err := store.Open(context.Background(), filepath.Join(dir, "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path, _, _ := strings.Cut(strings.SplitN(href, "#", 2)[0], "?")
	id, err := strconv.ParseInt(strings.TrimPrefix(path, "/trajectories/"), 10, 64)
	ord, err2 := strconv.Atoi(strings.TrimPrefix(anchor, "d"))
	if err != nil || err2 != nil {
		t.Fatalf("decision link %q: %v %v", href, err, err2)
	}
	hist, err := db.History(context.Background(), id, ord)
	if err != nil || len(hist.Events) == 0 {
		t.Fatalf("history of %s: %+v, %v", href, hist, err)
	}
	if e := hist.Events[len(hist.Events)-1]; e.Kind != grounding.EventVerdict || e.Verdict != grounding.VerdictPass || e.Note != "typed, never saved" {
		t.Errorf("last event = %+v; want ann's pass with the unsaved note", e)
	}
	if loc := evalString(t, ann, `location.search`); strings.Contains(loc, "trajectory=") {
		t.Errorf("after the verdict the URL still names the decision: %s", loc)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}

// TestBrowserReviewKeysAreSafe: keys never judge an item nobody has seen.
// A held key acts once; a second press as the next item appears does
// nothing; and text typed into the note while a verdict is on its way (the
// answer held back 600 ms) lands in the next item's note, focused, instead
// of being lost and its letters taken as commands ("orders" holds an r).
func TestBrowserReviewKeysAreSafe(t *testing.T) {
	base, dir := serveAdjudication(t)
	ann := newBrowser(t)
	problems := consoleProblems(t, ann)
	browserLogin(t, ann, base, "ann")
	ready := chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`))
	key := func(k string, repeat bool) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			down := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: k, Text: k, UnmodifiedText: k, AutoRepeat: &repeat}
			_, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, down)
			return err
		})
	}
	swapped := func(from string) {
		t.Helper()
		_, err := chromedp.Run(ann, chromedp.Poll[bool](`(function () { var r = document.querySelector("#review"); return !!r && r.dataset.item !== "`+from+`" && !document.querySelector(".htmx-request"); })()`,
			chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil {
			t.Fatalf("the item %s was not replaced: %v", from, err)
		}
	}
	verdicts := func() []grounding.VerdictEvent {
		t.Helper()
		db, err := store.Open(context.Background(), filepath.Join(dir, "groundwork.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		u, err := db.UserByName(context.Background(), "ann")
		if err != nil {
			t.Fatal(err)
		}
		page, err := db.Queue(context.Background(), grounding.QueueFilter{State: "all", Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		var out []grounding.VerdictEvent
		for _, it := range page.Items {
			h, err := db.History(context.Background(), it.TrajectoryID, it.Ordinal)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range h.Events {
				if e.UserID == u.ID && e.Kind == grounding.EventVerdict {
					out = append(out, e)
				}
			}
		}
		return out
	}

	// A key held down: one press, then the keyboard's repeats.
	first := currentItem(t, ann)
	if err := chromedp.Do(ann, ready, key("a", false)); err != nil {
		t.Fatal(err)
	}
	for range 15 {
		if err := chromedp.Do(ann, key("a", true)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(33 * time.Millisecond)
	}
	swapped(first)
	time.Sleep(600 * time.Millisecond)
	if got := mineToday(t, ann); got != "1 today" {
		t.Errorf("after holding a for half a second: %s, want 1 verdict", got)
	}

	// A double press: the second lands as the next item appears.
	second := currentItem(t, ann)
	if err := chromedp.Do(ann, ready, typedKey("a")); err != nil {
		t.Fatal(err)
	}
	swapped(second)
	if err := chromedp.Do(ann, typedKey("a")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	if got := mineToday(t, ann); got != "2 today" {
		t.Errorf("after a double press: %s, want 2 verdicts", got)
	}

	// A double click on the approve button: the second click lands on the
	// next item's button, in the same place.
	if err := chromedp.Do(ann, ready); err != nil {
		t.Fatal(err)
	}
	dbl := currentItem(t, ann)
	evalString(t, ann, `(document.querySelector("[data-testid=approve]").click(), setTimeout(function () { document.querySelector("[data-testid=approve]").click(); }, 80), "")`)
	swapped(dbl)
	time.Sleep(600 * time.Millisecond)
	if got := mineToday(t, ann); got != "3 today" {
		t.Errorf("after a double click: %s, want 3 verdicts", got)
	}

	// Typing a note while the verdict is on its way.
	hold := holdRequests(t, ann)
	if err := chromedp.Do(ann, ready); err != nil {
		t.Fatal(err)
	}
	hold.start(t, "*/verdict")
	third := currentItem(t, ann)
	if err := chromedp.Do(ann, typedKey("a"), typedKey("n"), chromedp.KeyEvent("see orders")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(600 * time.Millisecond)
	hold.release(t, hold.one(t, "verdict"))
	swapped(third)
	time.Sleep(600 * time.Millisecond)
	got := evalString(t, ann, `(function () { var n = document.querySelector("[data-note-input]"); return n.value + "|" + (document.activeElement === n); })()`)
	if got != "see orders|true" {
		t.Errorf("the note typed while the verdict was on its way: %q, want it in the next item's note, focused", got)
	}
	if got := mineToday(t, ann); got != "4 today" {
		t.Errorf("after typing during the swap: %s, want 4 verdicts", got)
	}
	vs := verdicts()
	for _, v := range vs {
		if v.Verdict != grounding.VerdictPass {
			t.Errorf("a %s verdict was recorded on decision %d: typed letters taken as a command", v.Verdict, v.Ordinal)
		}
	}
	if len(vs) != 4 {
		t.Errorf("%d verdicts in the store, want 4", len(vs))
	}
	screenshot(t, ann, "keys-safe")

	// Typing on while a note is being saved: what came after Enter stays
	// in the field.
	hold.start(t, "*/note")
	evalString(t, ann, `(document.querySelector("[data-note-input]").value = "", "")`)
	if err := chromedp.Do(ann, chromedp.Focus(chromedp.CSS(`[data-note-input]`)), chromedp.KeyEvent("first"), chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(" second")); err != nil {
		t.Fatal(err)
	}
	hold.release(t, hold.one(t, "note"))
	if err := chromedp.Do(ann, chromedp.WaitVisible(`//*[@data-testid="my-notes"][contains(., "first")]`)); err != nil {
		t.Fatal(err)
	}
	// The saved note shows as soon as htmx swaps; the text typed meanwhile
	// goes back into the field when the swap settles, a moment later.
	noteState := `(function () { var n = document.querySelector("[data-note-input]"); return n.value + "|" + (document.activeElement === n); })()`
	if _, err := chromedp.Run(ann, chromedp.Poll[bool](noteState+` === "second|true"`, chromedp.WithPollingTimeout(3*time.Second))); err != nil {
		t.Errorf("typing on while a note was saved left %q in the field, want the later text, focused", evalString(t, ann, noteState))
	}

	// A skip by mistake: u takes it back, and the item returns.
	evalString(t, ann, `(document.querySelector("[data-note-input]").value = "", document.activeElement.blur(), "")`)
	skippedItem := currentItem(t, ann)
	press(t, ann, "s", "keys-skip")
	if got := press(t, ann, "u", "keys-unskip"); got != skippedItem {
		t.Errorf("u after a skip shows item %s, want the skipped %s back", got, skippedItem)
	}
	if got := evalString(t, ann, `document.querySelector("[data-testid=notice]").textContent`); !strings.Contains(got, "Skip taken back") {
		t.Errorf("notice after taking a skip back: %q", got)
	}
	// Screen readers hear it from a live region that is never swapped out.
	if got := evalString(t, ann, `document.querySelector("#announce[role=status]").textContent`); !strings.Contains(got, "Skip taken back") {
		t.Errorf("the live region says %q after taking a skip back", got)
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}

// TestBrowserReviewBusyKeepsNote: when the database is busy (SQLite while
// an import holds its lock) a verdict is refused with 503 and the same
// item; the note that went with the refused verdict stays in its field,
// the focus is not moved into it (so the next a still judges), and the
// keys act at once. The 503 is made in the browser: the verdict request is
// held and answered with the item's own screen.
func TestBrowserReviewBusyKeepsNote(t *testing.T) {
	base, _ := serveAdjudication(t)
	ann := newBrowser(t)
	browserLogin(t, ann, base, "ann")
	hold := holdRequests(t, ann)
	if err := chromedp.Do(ann, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`))); err != nil {
		t.Fatal(err)
	}
	hold.start(t, "*/verdict")
	item := currentItem(t, ann)
	screen := evalString(t, ann, `document.querySelector("#review").outerHTML`)
	const note = "two cards listed, none named"
	evalString(t, ann, `(function () { var n = document.querySelector("[data-note-input]"); n.value = "`+note+`"; n.blur(); return ""; })()`)
	if err := chromedp.Do(ann, typedKey("a")); err != nil {
		t.Fatal(err)
	}
	hold.answer(t, fetch.FulfillRequestParams{RequestID: hold.one(t, "verdict"), ResponseCode: 503,
		ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: "text/html; charset=utf-8"}, {Name: "Retry-After", Value: "5"}},
		Body:            []byte(screen)})
	_, err := chromedp.Run(ann, chromedp.Poll[bool](`!document.querySelector(".htmx-request") && document.querySelector("#review[data-ready]") !== null`,
		chromedp.WithPollingTimeout(5*time.Second)))
	if err != nil {
		t.Fatalf("the review screen did not settle after the 503: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	if got := currentItem(t, ann); got != item {
		t.Errorf("after a 503 the screen shows item %s, want the same item %s", got, item)
	}
	if got := evalString(t, ann, `document.querySelector("[data-note-input]").value`); got != note {
		t.Errorf("after a 503 the note reads %q; want the note that went with the refused verdict, %q", got, note)
	}
	if got := evalString(t, ann, `document.activeElement && document.activeElement.matches("[data-note-input]") ? "note" : "elsewhere"`); got != "elsewhere" {
		t.Errorf("after a 503 the focus is in the note field: the next a would type, not judge")
	}
}
