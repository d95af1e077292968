package web_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// acceptDialogs accepts every JavaScript dialog of the tab (the "leave
// site?" of a reload with a note typed) and counts them.
func acceptDialogs(t *testing.T, ctx context.Context) *atomic.Int32 {
	t.Helper()
	var n atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			n.Add(1)
			go chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
				return err
			}))
		}
	}); err != nil {
		t.Fatal(err)
	}
	return &n
}

// noteReads waits (up to 5 s) for the review screen to show item with the
// note field reading want, and fails saying what it shows instead.
func noteReads(t *testing.T, ctx context.Context, item, want, after string) {
	t.Helper()
	js := `(function () { var r = document.querySelector("#review[data-item]"), n = document.querySelector("#review [data-note-input]");
		return !!r && !!n && r.dataset.item === "` + item + `" && n.value === ` + "`" + want + "`" + `; })()`
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		screenshot(t, ctx, "note-survives-"+strings.ReplaceAll(after, " ", "-"))
		got := evalString(t, ctx, `(function () { var r = document.querySelector("#review"), n = document.querySelector("#review [data-note-input]");
			return location.pathname + " item " + (r ? r.dataset.item : "none") + ", note " + JSON.stringify(n ? n.value : null); })()`)
		t.Fatalf("after %s: %s; want item %s with the note %q", after, got, item, want)
	}
}

// TestBrowserReviewNoteSurvivesLeaving: a note typed and not sent is not
// lost when the annotator leaves the review screen: a reload, the queue
// list and the Back button, a session that ended (the login page, then the
// review screen again) each bring the item back with the note in its
// field. Once the note is saved the page forgets its copy: a reload then
// shows an empty field.
func TestBrowserReviewNoteSurvivesLeaving(t *testing.T) {
	base, _ := serveAdjudication(t)
	ann := newBrowser(t)
	problems := consoleProblems(t, ann)
	dialogs := acceptDialogs(t, ann)
	browserLogin(t, ann, base, "ann")
	item := currentItem(t, ann)
	const note = "two cards listed, the user named neither"
	if err := chromedp.Do(ann, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)),
		chromedp.SendKeys(chromedp.CSS(`#review [data-note-input]`), note)); err != nil {
		t.Fatal(err)
	}

	// A reload (the browser asks first: closing the tab would lose it).
	if err := chromedp.Do(ann, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`))); err != nil {
		t.Fatalf("reload: %v", err)
	}
	noteReads(t, ann, item, note, "a reload")

	// The queue list (the page asks first, as a reminder; accepted), then
	// Back.
	if err := chromedp.Do(ann, chromedp.Click(chromedp.CSS(`#review a[href^="/queue"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-summary]`))); err != nil {
		t.Fatalf("open the queue list: %v", err)
	}
	if _, err := chromedp.Run(ann, chromedp.Evaluate[bool](`history.back(), true`)); err != nil {
		t.Fatal(err)
	}
	noteReads(t, ann, item, note, "the queue list and Back")
	screenshot(t, ann, "note-survives-back")

	// The session ends (its cookie is gone): the next key press lands on
	// the login page, without a "leave site?" question, and logging in
	// again brings the item back with its note. Nothing was judged.
	before := dialogs.Load()
	if err := chromedp.Do(ann, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.ClearBrowserCookies, cdp.Empty{})
		return err
	})); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ann, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)), chromedp.Focus(chromedp.CSS(`[data-testid=approve]`)), typedKey("a"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`))); err != nil {
		screenshot(t, ann, "note-survives-session-end-failed")
		t.Fatalf("after the session ended, a did not lead to the login page: %v", err)
	}
	if n := dialogs.Load() - before; n != 0 {
		t.Errorf("leaving for the login page asked %d times whether to leave: the note is kept, nothing to ask", n)
	}
	if err := chromedp.Do(ann,
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "password-ann"),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`))); err != nil {
		t.Fatalf("log in again: %v", err)
	}
	noteReads(t, ann, item, note, "the session ended and ann logged in again")
	if got := mineToday(t, ann); got != "0 today" {
		t.Errorf("after the refused key press, %s: want 0 today", got)
	}
	screenshot(t, ann, "note-survives-relogin")

	// Saved (Enter in the field): the page's copy goes, and a reload
	// shows an empty field with the note listed as saved.
	if err := chromedp.Do(ann, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)), chromedp.Focus(chromedp.CSS(`#review [data-note-input]`)),
		chromedp.KeyEvent(kb.Enter), chromedp.WaitVisible(chromedp.CSS(`[data-testid=my-notes]`))); err != nil {
		t.Fatalf("save the note: %v", err)
	}
	noteReads(t, ann, item, "", "saving the note")
	if kept := evalString(t, ann, `Object.keys(sessionStorage).filter(function (k) { return k.indexOf("groundwork.note.") === 0; }).join(" ")`); kept != "" {
		t.Errorf("after the note was saved the page still keeps %q", kept)
	}
	if err := chromedp.Do(ann, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#review[data-item]`))); err != nil {
		t.Fatalf("reload: %v", err)
	}
	noteReads(t, ann, item, "", "saving the note and a reload")
	if got := text(t, ann, `[data-testid=my-notes]`); !strings.Contains(got, note) {
		t.Errorf("my notes = %q, want the saved note", got)
	}
	// A refused verdict: the claim went away (another queue opened
	// elsewhere released it), so "a" with a note typed answers 409. The
	// note is saved all the same, the notice says so, and the page keeps
	// no copy.
	const refused = "the reservation id is in turn 3"
	if err := chromedp.Do(ann, chromedp.SendKeys(chromedp.CSS(`#review [data-note-input]`), refused), chromedp.KeyEvent(kb.Escape)); err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ann, chromedp.Evaluate[string](`fetch("/review?domain=elsewhere", {headers: {"HX-Request": "true"}}).then(function (r) { return String(r.status); })`, chromedp.EvalAwaitPromise))
	if err != nil || status != "200" {
		t.Fatalf("opening another queue: status %s, %v", status, err)
	}
	wctx, cancel := context.WithTimeout(ann, 10*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`)), chromedp.Focus(chromedp.CSS(`[data-testid=approve]`)), typedKey("a"),
		chromedp.WaitVisible(chromedp.CSS(`#review [data-testid=notice]`))); err != nil {
		screenshot(t, ann, "note-survives-refused-verdict-failed")
		t.Fatalf("a refused verdict: %v", err)
	}
	if err := chromedp.Do(wctx, chromedp.WaitReady(chromedp.CSS(`#review[data-ready]`))); err != nil {
		t.Fatal(err)
	}
	screenshot(t, ann, "note-survives-refused-verdict")
	if got := text(t, ann, `#review [data-testid=notice]`); !strings.HasPrefix(got, "Your note was saved; the verdict was not recorded because that item is not yours to judge") {
		t.Errorf("after a refused verdict the notice reads %q", got)
	}
	if got := mineToday(t, ann); got != "0 today" {
		t.Errorf("after the refused verdict, %s: want 0 today", got)
	}
	if kept := evalString(t, ann, `Object.keys(sessionStorage).filter(function (k) { return k.indexOf("groundwork.note.") === 0; }).join(" ")`); kept != "" {
		t.Errorf("after the refused verdict saved the note the page still keeps %q", kept)
	}
	if got := currentItem(t, ann); got == item && !strings.Contains(text(t, ann, `[data-testid=my-notes]`), refused) {
		t.Errorf("the item is on screen again without the note saved with the refused verdict")
	}

	// The verdicts refused with 409 and 401 (the session had ended) are
	// the failed loads the browser and htmx report, and meant.
	var p []string
	for _, m := range problems() {
		if !strings.Contains(m, "/verdict") || !(strings.Contains(m, "409") || strings.Contains(m, "401")) {
			p = append(p, m)
		}
	}
	if len(p) > 0 {
		t.Errorf("console problems: %q", p)
	}
}
