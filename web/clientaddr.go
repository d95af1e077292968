package web

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr sets r.RemoteAddr to the client's address as the proxies in
// front of the app report it, for the login throttle's per-address
// buckets. hops is how many reverse proxies the operator put in front of
// the app (serve --proxy-hops); each appends the address that connected
// to it to X-Forwarded-For, so the client is the hops-th entry from the
// right. Entries further left are whatever the client sent and are never
// read: a client cannot choose the address it is counted under. With no
// X-Forwarded-For, or an entry that is not an IP address, the connection's
// own address stays.
//
// Hand-written rather than chi's middleware.RealIP, which believes the
// leftmost X-Forwarded-For entry or X-Real-IP from anyone, so a client
// could send a new address with every guess.
func clientAddr(hops int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		if hops <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a, ok := forwardedFor(r.Header.Values("X-Forwarded-For"), hops); ok {
				r.RemoteAddr = netip.AddrPortFrom(a, 0).String()
			}
			next.ServeHTTP(w, r)
		})
	}
}

// forwardedFor returns the hops-th address from the right of the
// X-Forwarded-For header values (several header lines count as one list,
// in order). When the list is shorter than hops, fewer proxies were in the
// way and its first entry, written by a proxy, is the client.
func forwardedFor(values []string, hops int) (netip.Addr, bool) {
	var list []string
	for _, v := range values {
		for e := range strings.SplitSeq(v, ",") {
			list = append(list, strings.TrimSpace(e))
		}
	}
	if len(list) == 0 {
		return netip.Addr{}, false
	}
	e := list[max(len(list)-hops, 0)]
	if a, err := netip.ParseAddr(e); err == nil {
		return a.Unmap(), true
	}
	// Some proxies write host:port or [v6]:port.
	if host, _, err := net.SplitHostPort(e); err == nil {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}
