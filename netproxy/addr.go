package netproxy

import "net/netip"

// blockedRange is an address range the proxy never dials unless an allow
// pattern names the address itself (an explicit IP grant).
type blockedRange struct {
	prefix netip.Prefix
	why    string
}

// blockedRanges lists what a name must not resolve to: every range that
// reaches the host itself, its LAN or its cloud provider rather than the
// internet. IPv4-mapped IPv6 addresses are unmapped before the check.
func blockedRanges() []blockedRange {
	r := func(s, why string) blockedRange { return blockedRange{netip.MustParsePrefix(s), why} }
	return []blockedRange{
		r("0.0.0.0/8", "unspecified"),
		r("10.0.0.0/8", "private"),
		r("100.64.0.0/10", "carrier-grade NAT"),
		r("127.0.0.0/8", "loopback"),
		r("169.254.0.0/16", "link-local (cloud metadata)"),
		r("172.16.0.0/12", "private"),
		r("192.0.0.0/24", "IETF protocol assignments"),
		r("192.168.0.0/16", "private"),
		r("198.18.0.0/15", "benchmarking"),
		r("224.0.0.0/4", "multicast"),
		r("240.0.0.0/4", "reserved"),
		r("::/128", "unspecified"),
		r("::1/128", "loopback"),
		r("64:ff9b:1::/48", "local NAT64"),
		r("fc00::/7", "unique-local"),
		r("fe80::/10", "link-local"),
		r("fec0::/10", "site-local"),
		r("ff00::/8", "multicast"),
	}
}

// addrBlocked returns why a is never dialled for a name, or "" when it may
// be. NAT64 addresses (64:ff9b::/96) are judged by the IPv4 address they
// embed.
func addrBlocked(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() && netip.MustParsePrefix("64:ff9b::/96").Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, r := range blockedRanges() {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	return ""
}
