package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"groundwork/grounding"
)

func loginStore(t *testing.T) *fakeStore {
	hash, err := bcrypt.GenerateFromPassword([]byte("correct horse"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeStore{t: t, UserByNameFn: func(name string) (grounding.User, error) {
		if name != "ann" {
			return grounding.User{}, grounding.ErrNotFound
		}
		return grounding.User{ID: 7, Name: "ann", Role: grounding.RoleAnnotator, PasswordHash: hash}, nil
	}}
}

func TestLogin(t *testing.T) {
	tests := []struct {
		name     string
		user     string
		password string
		next     string
		status   int // plain request
		location string
	}{
		{"success", "ann", "correct horse", "/trajectories/5?from=20", 303, "/trajectories/5?from=20"},
		{"success default next", "ann", "correct horse", "", 303, "/runs"},
		{"success unsafe next", "ann", "correct horse", "//evil.example/x", 303, "/runs"},
		{"wrong password", "ann", "wrong", "/runs", 422, ""},
		{"unknown user", "bob", "correct horse", "/runs", 422, ""},
	}
	for _, tt := range tests {
		for _, m := range modes {
			t.Run(tt.name+"/"+m.name, func(t *testing.T) {
				sess := &fakeSessions{}
				h := testRouter(loginStore(t), sess, nil, t.TempDir(), 1)
				form := url.Values{"name": {tt.user}, "password": {tt.password}, "next": {tt.next}}
				req := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				rec, doc := do(t, h, req, m.htmx)
				if tt.status == 303 {
					if !sess.renewed || sess.values[SessionUserID] != int64(7) {
						t.Errorf("session: renewed %v, values %v", sess.renewed, sess.values)
					}
					if m.htmx {
						if rec.Code != 204 || rec.Header().Get(HXRedirect) != tt.location {
							t.Errorf("htmx login = %d, HX-Redirect %q, want %q", rec.Code, rec.Header().Get(HXRedirect), tt.location)
						}
					} else if rec.Code != 303 || rec.Header().Get("Location") != tt.location {
						t.Errorf("login = %d, Location %q, want %q", rec.Code, rec.Header().Get("Location"), tt.location)
					}
					return
				}
				if rec.Code != 422 {
					t.Fatalf("status = %d, want 422", rec.Code)
				}
				if sess.renewed || len(sess.values) != 0 {
					t.Errorf("failed login touched the session")
				}
				if s := doc.Find(`[data-testid=login-error]`).Text(); s != wrongCredentials {
					t.Errorf("error = %q", s)
				}
				if strings.Contains(rec.Body.String(), tt.password) {
					t.Errorf("the password was echoed back")
				}
				if v, _ := doc.Find(`input[name=name]`).Attr("value"); v != tt.user {
					t.Errorf("name not kept: %q", v)
				}
				if !hasHTML(rec) {
					t.Errorf("the re-rendered form should be a full page")
				}
			})
		}
	}
}

func TestLogout(t *testing.T) {
	for _, m := range modes {
		sess := &fakeSessions{}
		h := testRouter(loginStore(t), sess, nil, t.TempDir(), 1)
		rec, _ := do(t, h, httptest.NewRequest("POST", "/logout", nil), m.htmx)
		if !sess.destroyed {
			t.Errorf("%s: session not destroyed", m.name)
		}
		if m.htmx && rec.Header().Get(HXRedirect) != "/login" || !m.htmx && rec.Header().Get("Location") != "/login" {
			t.Errorf("%s: logout = %d %v", m.name, rec.Code, rec.Header())
		}
	}
}

func TestLoginForm(t *testing.T) {
	h := testRouter(loginStore(t), &fakeSessions{}, nil, t.TempDir(), 1)
	rec, doc := do(t, h, httptest.NewRequest("GET", "/login?next=/runs/3", nil), false)
	if rec.Code != 200 || doc.Find(`[data-testid=login]`).Length() != 1 {
		t.Fatalf("login form: %d", rec.Code)
	}
	if v, _ := doc.Find(`input[name=next]`).Attr("value"); v != "/runs/3" {
		t.Errorf("next = %q", v)
	}
}

func TestLoginFormLoggedIn(t *testing.T) {
	h := testRouter(loginStore(t), &fakeSessions{}, researcher, t.TempDir(), 1)
	rec, _ := do(t, h, httptest.NewRequest("GET", "/login?next=/runs/3", nil), false)
	if rec.Code != 303 || rec.Header().Get("Location") != "/runs/3" {
		t.Errorf("logged-in GET /login = %d %q", rec.Code, rec.Header().Get("Location"))
	}
}

func TestSafeNext(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "/runs"},
		{"/runs/1?success=yes", "/runs/1?success=yes"},
		{"/trajectories/5#d3", "/trajectories/5#d3"},
		{"//evil.example", "/runs"},
		{"/\\evil.example", "/runs"},
		{"https://evil.example/", "/runs"},
		{"javascript:alert(1)", "/runs"},
		{"runs", "/runs"},
		{"/runs\n/x", "/runs"},
		{"/%2F/evil.example", "/%2F/evil.example"}, // a path on this site, not a host
	}
	for _, tt := range tests {
		if got := SafeNext(tt.in); got != tt.want {
			t.Errorf("SafeNext(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Failed logins are throttled (handlers/throttle.go): per name and
// address 10, then one per 30 s; per name from any address 50, then one
// per 10 s; per address 100, then one per second. While throttled even
// the right password is refused without being compared; a success gives
// its tokens back and forgets the name's failures. Attempts sent in
// parallel count too.
func TestLoginThrottle(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	st := loginStore(t)
	sess := &fakeSessions{}
	auth := NewAuth(quietLog(), st, sess)
	auth.throttle.now = func() time.Time { return now }
	login := func(name, password, addr string) *httptest.ResponseRecorder {
		t.Helper()
		form := url.Values{"name": {name}, "password": {password}}
		req := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		auth.Login(rec, req)
		return rec
	}
	for i := range 10 {
		if rec := login("ann", "guess"+strconv.Itoa(i), "10.0.0.1:5000"); rec.Code != 422 {
			t.Fatalf("wrong password %d = %d, want 422", i, rec.Code)
		}
	}
	rec := login("Ann ", "correct horse", "10.0.0.1:5001") // the same client, the same account
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" || !strings.Contains(rec.Body.String(), "Try again in 30 seconds") {
		t.Fatalf("the right password after 10 failures = %d, Retry-After %q; want 429 and 30", rec.Code, rec.Header().Get("Retry-After"))
	}
	if sess.renewed {
		t.Error("a throttled login was let in")
	}
	// Another client is not locked out of ann by the first one's guesses.
	if rec := login("ann", "correct horse", "10.0.0.2:6000"); rec.Code != 303 {
		t.Fatalf("ann from another address = %d, want 303", rec.Code)
	}
	// The success forgot ann's failures, from every address.
	if rec := login("ann", "correct horse", "10.0.0.1:5002"); rec.Code != 303 {
		t.Errorf("ann from the first address after a success = %d, want 303", rec.Code)
	}
	// Many addresses guessing one account: 50, then one per 10 s (the
	// buckets directly: an unknown name costs a full bcrypt comparison).
	th := auth.throttle
	for i := range 50 {
		if a, _ := th.admit("bob", "10.1.0."+strconv.Itoa(i)+":1"); a == nil {
			t.Fatalf("bob's guess %d from a new address was refused", i)
		}
	}
	if a, d := th.admit("bob", "10.2.0.1:1"); a != nil || d != 10*time.Second {
		t.Errorf("bob's 51st guess from a new address: admitted %v, wait %s; want refused, 10s", a != nil, d)
	}
	// One address spraying names: 100, then one per second.
	for i := range 100 {
		th.admit("user"+strconv.Itoa(i), "10.3.0.1:1")
	}
	if rec := login("ann", "correct horse", "10.3.0.1:2"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("the 101st try from one address = %d, Retry-After %q; want 429 and 1", rec.Code, rec.Header().Get("Retry-After"))
	}
	now = now.Add(31 * time.Second)
	if rec := login("ann", "correct horse", "10.3.0.1:2"); rec.Code != 303 {
		t.Errorf("after 31 s the right password = %d, want 303", rec.Code)
	}
	// Guesses sent in parallel: 10 are compared, the rest refused.
	codes := make(chan int, 30)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- login("ann", "parallel"+strconv.Itoa(i), "10.4.0.1:1").Code
		}()
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[422] != 10 || n[http.StatusTooManyRequests] != 20 {
		t.Errorf("30 parallel guesses: %v; want 10 compared (422), 20 refused (429)", n)
	}
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.1:5000": "10.0.0.1", "[2001:db8::1]:443": "2001:db8::1", "pipe": "pipe"} {
		if got := addrKey(in); got != want {
			t.Errorf("addrKey(%q) = %q, want %q", in, got, want)
		}
	}
}
