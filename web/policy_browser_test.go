package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// policyFixture: two cancellations of NO6JO3 that the record at message 3
// (economy, booked two weeks before, no insurance) does not allow; in
// policy-far the record is further back than a decision normally shows.
const policyFixture = "testdata/policy-record.jsonl"

// policyMarkJS names where the evidence mark of the card holding the
// policy finding is: "message N: TEXT", or "none".
const policyMarkJS = `(function () {
	var b = document.querySelector("button[data-policy-arg]");
	var card = b ? b.closest(".decision") : document.querySelector("#review");
	var m = card && card.querySelector("mark.evidence");
	if (!m) return "none";
	var msg = m.closest(".msg");
	return "message " + (msg ? msg.dataset.index : "?") + (msg && msg.classList.contains("evidence-target") ? " (outlined)" : "") + ": " + m.textContent;
})()`

// tagPolicyArg marks the trajectory page's first policy finding button,
// so chromedp can click it as a user does.
const tagPolicyArg = `(function () {
	var b = [...document.querySelectorAll("button.arg")].find(function (b) { return b.querySelector(".mono").textContent.trim() === "policy"; });
	if (!b) return "none";
	b.setAttribute("data-policy-arg", "");
	return b.dataset.msg + " " + b.dataset.needle;
})()`

// TestBrowserPolicyRecord: a policy finding highlights the record it cites.
// On the trajectory page, clicking the finding, or the "see the record in
// message 3" link under it, marks the record's id in message 3; on the
// review screen the finding in question is marked there at once, also when
// the record lies further back than a decision normally shows.
func TestBrowserPolicyRecord(t *testing.T) {
	base, _ := serveFixture(t, policyFixture, "policy")
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	browserLogin(t, ctx, base, "ann")
	// The review screen first: the item in question is lit at once.
	for i := range 2 {
		if got := evalString(t, ctx, policyMarkJS); got != "message 3 (outlined): NO6JO3" {
			screenshot(t, ctx, "policy-review-failed")
			t.Errorf("review item %d: evidence mark at %s, want the record's id in message 3", i+1, got)
		}
		screenshot(t, ctx, "policy-review-"+string(rune('1'+i)))
		if i == 0 {
			press(t, ctx, "s", "policy-review-skipped")
		}
	}

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs"),
		chromedp.Click(`//a[normalize-space(text())="policy"]`),
		chromedp.Click(`//a[normalize-space(text())="policy-near"]`),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=decision] [data-testid=args]`)),
	)
	if err != nil {
		screenshot(t, ctx, "policy-trajectory-failed")
		t.Fatalf("open the trajectory: %v", err)
	}
	if got := evalString(t, ctx, tagPolicyArg); got != "3 NO6JO3" {
		t.Fatalf("policy finding points at %q, want message 3, needle NO6JO3", got)
	}
	if got := evalString(t, ctx, policyMarkJS); got != "none" {
		t.Errorf("before a click the evidence mark is at %s", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[data-policy-arg]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, policyMarkJS); got != "message 3 (outlined): NO6JO3" {
		t.Errorf("clicking the finding marks %s, want the record's id in message 3", got)
	}
	screenshot(t, ctx, "policy-trajectory-clicked")
	// The link under it, on a fresh page.
	err = chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`[data-testid=record-link]`)))
	if err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, tagPolicyArg); got != "3 NO6JO3" {
		t.Fatalf("after a reload the policy finding points at %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("[data-testid=record-link]").textContent.trim()`); got != "see the record in message 3" {
		t.Errorf("record link reads %q", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-testid=record-link]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, ctx, policyMarkJS); got != "message 3 (outlined): NO6JO3" {
		t.Errorf("clicking the record link marks %s, want the record's id in message 3", got)
	}
	if lit := evalString(t, ctx, `String(document.querySelector("button[data-policy-arg]").classList.contains("evidence-target"))`); lit != "true" {
		t.Errorf("the record link does not light its finding")
	}
	screenshot(t, ctx, "policy-trajectory-link")
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}
