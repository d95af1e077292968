package handlers

import (
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// loginThrottle limits login attempts with token buckets
// (golang.org/x/time/rate). An attempt spends a token of three buckets
// when it is admitted, before the password is compared, so attempts sent
// in parallel are counted too; a successful login gets its tokens back
// (and forgets the name's failures), so only failures use them up:
//
//   - name and address: 10, then one per 30 s. One client guessing one
//     account's password gets about 3,000 tries a day instead of
//     thousands a minute.
//   - name, from any address: 50, then one per 10 s. Guessing one account
//     from many addresses is slowed too. The price: whoever sustains more
//     than six failures a minute against a name keeps that account's
//     logins refused (429) while they do; accepted, as the alternative is
//     unlimited guessing.
//   - address, any name: 100, then one per second: one client trying many
//     names. Behind a proxy every user shares its address unless serve
//     --proxy-hops says how many proxies to look through (web/clientaddr.go
//     sets the request's RemoteAddr), hence the size.
//
// While an attempt's bucket is empty the login is refused with 429 and the
// time to wait.
type loginThrottle struct {
	mu      sync.Mutex
	buckets [3]throttleKind
	now     func() time.Time
}

type throttleKind struct {
	every time.Duration
	burst int
	m     map[string]*rate.Limiter
}

// throttleKeys bounds each map; beyond it, buckets that have refilled are
// dropped (they hold nothing a new bucket would not).
const throttleKeys = 10_000

func newLoginThrottle() *loginThrottle {
	return &loginThrottle{now: time.Now, buckets: [3]throttleKind{
		{every: 30 * time.Second, burst: 10, m: map[string]*rate.Limiter{}}, // name and address
		{every: 10 * time.Second, burst: 50, m: map[string]*rate.Limiter{}}, // name
		{every: time.Second, burst: 100, m: map[string]*rate.Limiter{}},     // address
	}}
}

func nameKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// addrKey is the client's host without the port.
func addrKey(remote string) string {
	if i := strings.LastIndexByte(remote, ':'); i > 0 && !strings.HasSuffix(remote, "]") {
		return strings.Trim(remote[:i], "[]")
	}
	return remote
}

func throttleKeysOf(name, addr string) [3]string {
	n, a := nameKey(name), addrKey(addr)
	return [3]string{n + "\x00" + a, n, a}
}

// admission is an admitted attempt: the tokens it spent, returned by
// succeeded.
type admission struct {
	t   *loginThrottle
	res [3]*rate.Reservation
	key string // the name's key
}

// admit spends one token of each of the attempt's buckets, or none and
// says how long until it may try again.
func (t *loginThrottle) admit(name, addr string) (*admission, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	keys := throttleKeysOf(name, addr)
	var wait time.Duration
	var ls [3]*rate.Limiter
	for i := range t.buckets {
		ls[i] = t.buckets[i].get(keys[i], now)
		if tokens := ls[i].TokensAt(now); tokens < 1 {
			// The bucket refills at Limit() tokens a second.
			wait = max(wait, time.Duration((1-tokens)/float64(ls[i].Limit())*float64(time.Second)))
		}
	}
	if wait > 0 {
		return nil, wait
	}
	a := &admission{t: t, key: keys[1]}
	for i, l := range ls {
		a.res[i] = l.ReserveN(now, 1)
	}
	return a, 0
}

// succeeded gives the attempt's tokens back and forgets the failures of
// its name (from its address and from any).
func (a *admission) succeeded() {
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, r := range a.res {
		r.CancelAt(now)
	}
	for k := range t.buckets[0].m {
		if strings.HasPrefix(k, a.key+"\x00") {
			delete(t.buckets[0].m, k)
		}
	}
	delete(t.buckets[1].m, a.key)
}

func (k *throttleKind) get(key string, now time.Time) *rate.Limiter {
	if l := k.m[key]; l != nil {
		return l
	}
	if len(k.m) >= throttleKeys {
		for key, l := range k.m {
			if l.TokensAt(now) >= float64(l.Burst()) {
				delete(k.m, key)
			}
		}
	}
	l := rate.NewLimiter(rate.Every(k.every), k.burst)
	k.m[key] = l
	return l
}
