package netproxy

import (
	"net/netip"
	"strings"
)

// blockedRange is an address range the proxy never dials unless an allow
// pattern names the address itself (an explicit IP grant).
type blockedRange struct {
	prefix netip.Prefix
	why    string
}

// blockedRanges lists what a name must not resolve to: every range that
// reaches the host itself, its LAN or its cloud provider rather than the
// internet. IPv4-mapped IPv6 addresses are unmapped before the check.
//
// The clouds' metadata and platform services fall in these ranges
// (169.254.169.254 of AWS, Azure, GCP, Oracle, DigitalOcean, Hetzner,
// OpenStack and others; AWS's DNS 169.254.169.253, time 169.254.169.123,
// ECS and EKS agents 169.254.170.2 and .23; Tencent 169.254.0.23;
// Scaleway 169.254.42.42; Alibaba 100.100.100.200 in carrier-grade NAT;
// Oracle's 192.0.0.192; the IPv6 endpoints fd00:ec2::254, fd20:ce::254,
// fd00:42::42 and fd00:a9fe:a9fe::1 in unique-local), except Azure's
// WireServer, which sits in public space and is listed by itself.
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
		r("168.63.129.16/32", "Azure WireServer (cloud platform)"),
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

// metadataNames are the names clouds give their metadata services. They
// are refused by name, whatever they resolve to and whatever allow entry
// covers them: most lead to a refused address anyway, but a resolver
// that answers otherwise (a split-horizon DNS, an /etc/hosts entry) or a
// provider whose service has a public address (Equinix Metal) must not
// make them reachable. A subdomain of one is refused with it.
func metadataNames() []string {
	return []string{
		"metadata.google.internal",     // GCP
		"metadata.goog",                // GCP
		"metadata",                     // GCP's short name
		"instance-data",                // AWS
		"instance-data.ec2.internal",   // AWS
		"metadata.tencentyun.com",      // Tencent Cloud
		"api.metadata.cloud.ibm.com",   // IBM Cloud VPC
		"metadata.platformequinix.com", // Equinix Metal (a public address)
		"metadata.packet.net",          // Equinix Metal, formerly Packet
		"rancher-metadata",             // Rancher
	}
}

// metadataName returns the metadata name host is or is under, or "".
// host is lower-case without a trailing dot, as parseTarget leaves it.
func metadataName(host string) string {
	for _, n := range metadataNames() {
		if host == n || strings.HasSuffix(host, "."+n) {
			return n
		}
	}
	return ""
}
