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
		r("::/96", "IPv4-compatible (deprecated)"),
		r("64:ff9b:1::/48", "local NAT64"),
		r("fc00::/7", "unique-local"),
		r("fe80::/10", "link-local"),
		r("fec0::/10", "site-local"),
		r("ff00::/8", "multicast"),
	}
}

// addrBlocked returns why a is never dialled for a name, or "" when it may
// be. IPv6 forms that carry an IPv4 address the network delivers to
// (IPv4-mapped, NAT64, IPv4-translated, 6to4, Teredo) are judged by that
// IPv4 address as well, so that a name answering 2002:a9fe:a9fe:: cannot
// reach the metadata address through a 6to4 relay.
func addrBlocked(a netip.Addr) string {
	a = a.Unmap()
	if why := rangeBlocked(a); why != "" {
		return why
	}
	if v4, form := embeddedIPv4(a); form != "" {
		if why := rangeBlocked(v4); why != "" {
			return form + " of " + v4.String() + ", " + why
		}
	}
	return ""
}

// rangeBlocked returns why a is in a blocked range, or "".
func rangeBlocked(a netip.Addr) string {
	for _, r := range blockedRanges() {
		if r.prefix.Contains(a) {
			return r.why
		}
	}
	return ""
}

// embeddedIPv4 returns the IPv4 address an IPv6 address of a translation
// or tunnelling form carries and the form's name, or "" for other
// addresses: NAT64 64:ff9b::/96 (RFC 6052), IPv4-translated
// ::ffff:0:0:0/96 (RFC 2765), 6to4 2002::/16 (RFC 3056, bits 16-47) and
// Teredo 2001::/32 (RFC 4380: the client's address, inverted, in the
// last 32 bits).
func embeddedIPv4(a netip.Addr) (netip.Addr, string) {
	if !a.Is6() {
		return netip.Addr{}, ""
	}
	b := a.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
		return last, "NAT64"
	case netip.MustParsePrefix("::ffff:0:0:0/96").Contains(a):
		return last, "IPv4-translated"
	case netip.MustParsePrefix("2002::/16").Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), "6to4"
	case netip.MustParsePrefix("2001::/32").Contains(a):
		return netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}), "Teredo"
	}
	return netip.Addr{}, ""
}
