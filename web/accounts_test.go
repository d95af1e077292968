package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
	"groundwork/store"
	"groundwork/web"
)

// TestAdminDisablesAndResets: an admin disables an account and it stops
// working everywhere at once (its open session, its API token, new logins);
// enabling lets it log in again; a password reset shows the new password
// once and ends the account's sessions, and only the new password works.
func TestAdminDisablesAndResets(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-ada"), bcrypt.MinCost)
	if _, err := a.db.CreateUser(ctx, "ada", grounding.RoleAdmin, hash); err != nil {
		t.Fatal(err)
	}
	rita, _ := a.db.UserByName(ctx, "rita")
	ann, _ := a.db.UserByName(ctx, "ann")
	_, secret, err := a.db.CreateAPIToken(ctx, rita.ID, "ci")
	if err != nil {
		t.Fatal(err)
	}
	api := func() int {
		t.Helper()
		resp, _ := a.do(a.client(), "GET", "/api/export/smoke/masks.jsonl", nil, map[string]string{"Authorization": "Bearer " + secret})
		return resp.StatusCode
	}
	if got := api(); got != http.StatusOK {
		t.Fatalf("the token before disabling: %d", got)
	}
	admin, ritaC, annC := a.client(), a.client(), a.client()
	a.login(admin, "ada")
	a.login(ritaC, "rita")
	a.login(annC, "ann")
	post := func(c *http.Client, path string, form url.Values) (*http.Response, string) {
		t.Helper()
		return a.do(c, "POST", path, strings.NewReader(form.Encode()),
			a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	}
	loginAs := func(name, password string) (*http.Response, string) {
		t.Helper()
		return post(a.client(), "/login", url.Values{"name": {name}, "password": {password}, "next": {"/runs"}})
	}

	// Only an admin may; the annotator's try changes nothing.
	if resp, _ := post(annC, "/admin/users/"+itoa(rita.ID)+"/disable", nil); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an annotator disabling an account: %d, want 403", resp.StatusCode)
	}
	resp, body := post(admin, "/admin/users/"+itoa(rita.ID)+"/disable", nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Disabled rita") {
		t.Fatalf("disable rita = %d\n%s", resp.StatusCode, body)
	}
	if st := parse(t, body).Find(`[data-testid=user-row]:contains("rita") [data-testid=user-status]`).Text(); !strings.Contains(st, "disabled") {
		t.Errorf("rita's status on the accounts page = %q", st)
	}
	if resp, _ := a.do(ritaC, "GET", "/runs", nil, nil); resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Errorf("rita's open session after disabling: %d %q, want a redirect to log in", resp.StatusCode, resp.Header.Get("Location"))
	}
	if got := api(); got != http.StatusUnauthorized {
		t.Errorf("rita's API token after disabling: %d, want 401", got)
	}
	if resp, body := loginAs("rita", "password-rita"); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "This account is disabled") {
		t.Errorf("rita logging in while disabled = %d", resp.StatusCode)
	}
	if resp, body := loginAs("rita", "wrong password"); !strings.Contains(body, "Wrong name or password.") || strings.Contains(body, "disabled") {
		t.Errorf("a wrong password on a disabled account = %d: says more than 'wrong'", resp.StatusCode)
	}
	// The admin cannot lock themselves out.
	if resp, body := post(admin, "/admin/users/"+itoa(mustUserID(t, a, "ada"))+"/disable", nil); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "cannot disable your own account") {
		t.Errorf("an admin disabling themselves = %d", resp.StatusCode)
	}

	if resp, body := post(admin, "/admin/users/"+itoa(rita.ID)+"/enable", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Enabled rita") {
		t.Errorf("enable rita = %d", resp.StatusCode)
	}
	if resp, _ := loginAs("rita", "password-rita"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("rita logging in after enabling = %d", resp.StatusCode)
	}
	if got := api(); got != http.StatusUnauthorized {
		t.Errorf("rita's API token after enabling: %d; a revoked token stays revoked", got)
	}

	// A reset: the new password is shown once; ann is logged out; only the
	// new password works.
	resp, body = post(admin, "/admin/users/"+itoa(ann.ID)+"/password", nil)
	pw := strings.TrimSpace(parse(t, body).Find(`[data-testid=new-password]`).Text())
	if resp.StatusCode != http.StatusOK || len(pw) < 16 {
		t.Fatalf("reset ann's password = %d, new password %q", resp.StatusCode, pw)
	}
	if resp, _ := a.do(annC, "GET", "/runs", nil, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("ann's open session after the reset: %d, want a redirect to log in", resp.StatusCode)
	}
	if resp, _ := loginAs("ann", "password-ann"); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("ann's old password after the reset: %d, want 422", resp.StatusCode)
	}
	if resp, _ := loginAs("ann", pw); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("ann's new password: %d, want 303", resp.StatusCode)
	}
	if resp, _ := a.do(admin, "GET", "/admin/users", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("the admin's own session after resetting another's password: %d", resp.StatusCode)
	}
}

func mustUserID(t *testing.T, a *app, name string) int64 {
	t.Helper()
	u, err := a.db.UserByName(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u.ID
}

// ritaApp serves the app with cfg over a fresh SQLite database holding one
// researcher, rita (password "password-rita").
func ritaApp(t *testing.T, cfg web.Config) *app {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "groundwork.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hash, _ := bcrypt.GenerateFromPassword([]byte("password-rita"), bcrypt.MinCost)
	if _, err := db.CreateUser(ctx, "rita", grounding.RoleResearcher, hash); err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := web.NewHandler(cfg, db, &fakeImporter{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &app{t: t, url: srv.URL, db: db}
}

// TestBaseURL: behind a TLS proxy the app sees plain HTTP; --base-url (or
// $GROUNDWORK_BASE_URL) with https marks the session cookie Secure, and a
// new token's example command names the public address.
func TestBaseURL(t *testing.T) {
	ctx := context.Background()
	a := ritaApp(t, web.Config{BaseURL: "https://gw.example.org/"})
	c := a.client()
	form := url.Values{"name": {"rita"}, "password": {"password-rita"}, "next": {"/runs"}}
	resp, _ := a.do(c, "POST", "/login", strings.NewReader(form.Encode()),
		a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded"}))
	if len(resp.Cookies()) == 0 || !resp.Cookies()[0].Secure {
		t.Fatalf("login behind https://gw.example.org set %v; want a Secure session cookie", resp.Cookies())
	}
	// The jar keeps Secure cookies for https only: carry it by hand.
	cookie := resp.Cookies()[0].Name + "=" + resp.Cookies()[0].Value
	_, body := a.do(c, "POST", "/tokens", strings.NewReader(url.Values{"name": {"ci"}}.Encode()),
		a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}))
	if !strings.Contains(parse(t, body).Text(), "'https://gw.example.org/api/export/RUN/sft.jsonl'") {
		t.Errorf("the new token's example does not name the public address:\n%s", body)
	}
	// serve refuses a base URL it cannot use, before listening.
	err := web.Run(ctx, []string{"groundwork", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0", "--base-url", "gw.example.org"},
		func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "expected http://HOST or https://HOST") {
		t.Errorf("serve --base-url gw.example.org = %v", err)
	}
}

// TestBrowserDisableAccount: the admin adds an account in the browser and
// disables it; the page asks first, and declining changes nothing.
func TestBrowserDisableAccount(t *testing.T) {
	ctx := newBrowser(t)
	problems := consoleProblems(t, ctx)
	app := serveFresh(t)
	err := chromedp.Do(ctx,
		chromedp.Navigate(app.URL+"/login?next=%2Fadmin%2Fusers"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=password]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "admin"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), app.Password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-form]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=user-form] input[name=name]`), "zoe"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=user-form] input[name=password]`), "zoe-password-1"),
		chromedp.Submit(chromedp.CSS(`[data-testid=user-form] input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=user-created]`)),
	)
	if err != nil {
		screenshot(t, ctx, "accounts-add")
		t.Fatalf("add an account: %v", err)
	}
	status := `[...document.querySelectorAll("[data-testid=user-row]")].filter(r => r.textContent.includes("zoe")).map(r => r.querySelector("[data-testid=user-status]").textContent.trim()).join()`
	evalString(t, ctx, `window.asked = "", window.confirm = function (q) { window.asked = q; return false; }, ""`)
	if err := chromedp.Do(ctx, chromedp.Click(`//tr[contains(., "zoe")]//button[@data-testid="disable"]`)); err != nil {
		t.Fatal(err)
	}
	if asked := evalString(t, ctx, `window.asked`); !strings.Contains(asked, "Disable zoe?") {
		t.Errorf("disable asked %q first", asked)
	}
	if got := evalString(t, ctx, status); got != "active" {
		t.Errorf("after declining, zoe is %q", got)
	}
	evalString(t, ctx, `window.confirm = function () { return true; }, ""`)
	err = chromedp.Do(ctx,
		chromedp.Click(`//tr[contains(., "zoe")]//button[@data-testid="disable"]`),
		chromedp.WaitVisible(`//p[@data-testid="user-created"][contains(., "Disabled zoe")]`),
	)
	if err != nil {
		screenshot(t, ctx, "accounts-disable")
		t.Fatalf("disable zoe: %v", err)
	}
	if got := evalString(t, ctx, status); got != "disabled" {
		t.Errorf("after disabling, zoe is %q", got)
	}
	screenshot(t, ctx, "accounts-disabled")
	if p := problems(); len(p) > 0 {
		t.Errorf("console errors: %v", p)
	}
}

// TestProxyHops: behind a proxy every request comes from the proxy's
// address. With --proxy-hops 1 the login throttle counts a client under the
// address the proxy appended to X-Forwarded-For, so one client's guesses
// do not lock out a colleague, and a client cannot pick a fresh address
// by sending its own X-Forwarded-For.
func TestProxyHops(t *testing.T) {
	for _, hops := range []int{0, 1} {
		t.Run(fmt.Sprintf("hops=%d", hops), func(t *testing.T) {
			a := ritaApp(t, web.Config{ProxyHops: hops})
			login := func(password, forwarded string) int {
				form := url.Values{"name": {"rita"}, "password": {password}, "next": {"/runs"}}
				resp, _ := a.do(a.client(), "POST", "/login", strings.NewReader(form.Encode()),
					a.sameOrigin(map[string]string{"Content-Type": "application/x-www-form-urlencoded", "X-Forwarded-For": forwarded}))
				return resp.StatusCode
			}
			for i := range 10 {
				if code := login("wrong password", "203.0.113.9"); code != http.StatusUnprocessableEntity {
					t.Fatalf("guess %d = %d; want 422", i+1, code)
				}
			}
			if code := login("wrong password", "203.0.113.9"); code != http.StatusTooManyRequests {
				t.Fatalf("the 11th guess = %d; want 429", code)
			}
			// The guesser claims another address in front of the proxy's entry.
			if code := login("wrong password", "198.51.100.99, 203.0.113.9"); code != http.StatusTooManyRequests {
				t.Errorf("a guess with a forged X-Forwarded-For entry = %d; want 429", code)
			}
			// Rita, at her own desk, behind the same proxy.
			want := http.StatusSeeOther
			if hops == 0 { // the header is not trusted: everyone is the proxy
				want = http.StatusTooManyRequests
			}
			if code := login("password-rita", "192.0.2.44"); code != want {
				t.Errorf("rita from another address = %d; want %d", code, want)
			}
		})
	}
	err := web.Run(context.Background(), []string{"groundwork", "serve", "--data", t.TempDir(), "--addr", "127.0.0.1:0"},
		func(k string) string {
			if k == "GROUNDWORK_PROXY_HOPS" {
				return "one"
			}
			return ""
		}, strings.NewReader(""), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `$GROUNDWORK_PROXY_HOPS "one": expected a number of proxies`) {
		t.Errorf(`serve with GROUNDWORK_PROXY_HOPS=one = %v`, err)
	}
}
