package handlers

import (
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// loginThrottle limits failed logins per account name and per client
// address with token buckets (golang.org/x/time/rate): a key may fail
// burst times in a row, then once per every. Only failures spend; a
// success forgets the name's failures. While a key has no token left, the
// login is refused before the password is even compared, so guessing runs
// at the refill rate at most: for a name, 10 at once and then one every 30 s
// (about 3,000 a day instead of thousands a minute). The address bucket is
// larger (behind a proxy every user shares one address) and stops one
// client from spraying many names.
type loginThrottle struct {
	mu    sync.Mutex
	names map[string]*rate.Limiter
	addrs map[string]*rate.Limiter
	now   func() time.Time
}

const (
	nameBurst, addrBurst = 10, 50
	nameEvery, addrEvery = 30 * time.Second, 2 * time.Second
	// throttleKeys bounds each map; beyond it, buckets that have refilled
	// are dropped (they hold nothing a new bucket would not).
	throttleKeys = 10_000
)

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{names: map[string]*rate.Limiter{}, addrs: map[string]*rate.Limiter{}, now: time.Now}
}

func nameKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// addrKey is the client's host without the port.
func addrKey(remote string) string {
	if i := strings.LastIndexByte(remote, ':'); i > 0 && !strings.HasSuffix(remote, "]") {
		return strings.Trim(remote[:i], "[]")
	}
	return remote
}

// wait is how long until name and addr may try again, 0 when they may now.
func (t *loginThrottle) wait(name, addr string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var d time.Duration
	for _, l := range []*rate.Limiter{t.names[nameKey(name)], t.addrs[addrKey(addr)]} {
		if l == nil {
			continue
		}
		if tokens := l.TokensAt(now); tokens < 1 {
			// The bucket refills at l.Limit() tokens a second.
			d = max(d, time.Duration((1-tokens)/float64(l.Limit())*float64(time.Second)))
		}
	}
	return d
}

// failed spends one try of name and of addr.
func (t *loginThrottle) failed(name, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	bucket(t.names, nameKey(name), nameEvery, nameBurst, now).AllowN(now, 1)
	bucket(t.addrs, addrKey(addr), addrEvery, addrBurst, now).AllowN(now, 1)
}

// succeeded forgets the name's failures.
func (t *loginThrottle) succeeded(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, nameKey(name))
}

func bucket(m map[string]*rate.Limiter, key string, every time.Duration, burst int, now time.Time) *rate.Limiter {
	if l := m[key]; l != nil {
		return l
	}
	if len(m) >= throttleKeys {
		for k, l := range m {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(m, k)
			}
		}
	}
	l := rate.NewLimiter(rate.Every(every), burst)
	m[key] = l
	return l
}
