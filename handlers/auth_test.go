package handlers

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
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

// Failed logins are throttled per name (10, then one per 30 s) and per
// address (50, then one per 2 s); while throttled even the right password
// is refused without being compared; a success forgets the name's failures.
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
	rec := login("Ann ", "correct horse", "10.0.0.2:6000") // another address, the same account
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "30" || !strings.Contains(rec.Body.String(), "Try again in 30 seconds") {
		t.Fatalf("the right password after 10 failures = %d, Retry-After %q; want 429 and 30", rec.Code, rec.Header().Get("Retry-After"))
	}
	if sess.renewed {
		t.Error("a throttled login was let in")
	}
	now = now.Add(31 * time.Second)
	if rec := login("ann", "correct horse", "10.0.0.2:6000"); rec.Code != 303 {
		t.Fatalf("after 31 s the right password = %d, want 303", rec.Code)
	}
	// The success forgot ann's failures: a typo now is a plain 422.
	if rec := login("ann", "typo", "10.0.0.2:6000"); rec.Code != 422 {
		t.Errorf("a typo after a success = %d, want 422", rec.Code)
	}
	// One address spraying names runs out after 50 failures in a row (its
	// bucket refilled while ann waited).
	for i := range 50 {
		login("user"+strconv.Itoa(i), "x", "10.0.0.1:5001")
	}
	if rec := login("ann", "correct horse", "10.0.0.1:7000"); rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "2" {
		t.Errorf("the 51st try from one address = %d, Retry-After %q; want 429 and 2", rec.Code, rec.Header().Get("Retry-After"))
	}
	if rec := login("ann", "correct horse", "[2001:db8::1]:443"); rec.Code != 303 {
		t.Errorf("ann from another address = %d, want 303", rec.Code)
	}
}

func TestAddrKey(t *testing.T) {
	for in, want := range map[string]string{"10.0.0.1:5000": "10.0.0.1", "[2001:db8::1]:443": "2001:db8::1", "pipe": "pipe"} {
		if got := addrKey(in); got != want {
			t.Errorf("addrKey(%q) = %q, want %q", in, got, want)
		}
	}
}
