package web

import (
	"net/netip"
	"testing"
)

func TestForwardedFor(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		hops   int
		want   string // "" = keep the connection's address
	}{
		{"no header", nil, 1, ""},
		{"one proxy", []string{"203.0.113.9"}, 1, "203.0.113.9"},
		{"one proxy, the client's own entry is ignored", []string{"198.51.100.99, 203.0.113.9"}, 1, "203.0.113.9"},
		{"two proxies", []string{"198.51.100.99, 203.0.113.9, 10.0.0.2"}, 2, "203.0.113.9"},
		{"two proxies over two header lines", []string{"198.51.100.99, 203.0.113.9", "10.0.0.2"}, 2, "203.0.113.9"},
		{"fewer entries than proxies", []string{"203.0.113.9"}, 2, "203.0.113.9"},
		{"IPv6", []string{"2001:db8::7"}, 1, "2001:db8::7"},
		{"IPv4 with a port", []string{"203.0.113.9:4711"}, 1, "203.0.113.9"},
		{"IPv6 with a port", []string{"[2001:db8::7]:4711"}, 1, "2001:db8::7"},
		{"IPv4-mapped IPv6", []string{"::ffff:203.0.113.9"}, 1, "203.0.113.9"},
		{"not an address", []string{"unknown"}, 1, ""},
		{"an empty entry", []string{"203.0.113.9, "}, 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, ok := forwardedFor(c.values, c.hops)
			got := ""
			if ok {
				got = a.String()
			}
			if got != c.want {
				t.Errorf("forwardedFor(%q, %d) = %q; want %q", c.values, c.hops, got, c.want)
			}
			if ok && netip.AddrPortFrom(a, 0).String() == "" {
				t.Errorf("no RemoteAddr form for %v", a)
			}
		})
	}
}
