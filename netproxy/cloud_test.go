package netproxy

import (
	"net/netip"
	"strings"
	"testing"
)

// cloudAddrs are the clouds' metadata and platform service addresses, as
// their documentation gives them.
var cloudAddrs = []struct{ addr, what string }{
	{"169.254.169.254", "IMDS of AWS, Azure, GCP, Oracle, DigitalOcean, Hetzner, OpenStack, IBM, Huawei"},
	{"169.254.169.253", "AWS VPC DNS"},
	{"169.254.169.123", "AWS Time Sync"},
	{"169.254.170.2", "AWS ECS task metadata"},
	{"169.254.170.23", "AWS EKS Pod Identity agent"},
	{"169.254.0.23", "Tencent Cloud metadata"},
	{"169.254.42.42", "Scaleway metadata"},
	{"168.63.129.16", "Azure WireServer and DNS"},
	{"100.100.100.200", "Alibaba Cloud metadata"},
	{"192.0.0.192", "Oracle Cloud legacy metadata"},
	{"10.96.0.1", "Kubernetes API server service"},
	{"10.96.0.10", "Kubernetes kube-dns service"},
	{"172.17.0.1", "Docker host gateway"},
	{"fd00:ec2::254", "AWS IMDS over IPv6"},
	{"fd00:ec2::253", "AWS DNS over IPv6"},
	{"fd00:ec2::123", "AWS Time Sync over IPv6"},
	{"fd00:ec2::23", "AWS EKS Pod Identity agent over IPv6"},
	{"fd20:ce::254", "GCP metadata over IPv6"},
	{"fd00:42::42", "Scaleway metadata over IPv6"},
	{"fd00:a9fe:a9fe::1", "Akamai (Linode) metadata over IPv6"},
}

// ipv6Forms returns the IPv6 spellings of an IPv4 address that the network
// delivers to it: IPv4-mapped, NAT64, IPv4-translated, 6to4 and Teredo.
func ipv6Forms(t *testing.T, v4 netip.Addr) []string {
	t.Helper()
	b := v4.As4()
	var teredo [16]byte
	copy(teredo[:], netip.MustParseAddr("2001:0:4136:e378:8000:63bf::").AsSlice())
	for i := range 4 {
		teredo[12+i] = ^b[i]
	}
	var sixToFour [16]byte
	sixToFour[0], sixToFour[1] = 0x20, 0x02
	copy(sixToFour[2:6], b[:])
	sixToFour[15] = 1
	nat64 := netip.MustParseAddr("64:ff9b::").As16()
	translated := netip.MustParseAddr("::ffff:0:0:0").As16()
	copy(nat64[12:], b[:])
	copy(translated[12:], b[:])
	return []string{
		"::ffff:" + v4.String(),
		netip.AddrFrom16(nat64).String(),
		netip.AddrFrom16(translated).String(),
		netip.AddrFrom16(sixToFour).String(),
		netip.AddrFrom16(teredo).String(),
	}
}

// TestCloudAddrsBlocked: every cloud metadata and platform address, and
// every IPv6 form that leads to an IPv4 one, is refused. Azure's
// WireServer (168.63.129.16, public space) was not.
func TestCloudAddrsBlocked(t *testing.T) {
	for _, c := range cloudAddrs {
		a := netip.MustParseAddr(c.addr)
		forms := []string{c.addr}
		if a.Is4() {
			forms = append(forms, ipv6Forms(t, a)...)
		}
		for _, f := range forms {
			if why := addrBlocked(netip.MustParseAddr(f)); why == "" {
				t.Errorf("%s (%s, %s) is not refused", f, c.addr, c.what)
			}
		}
	}
	// The WireServer entry is the one address, not its neighbours.
	for _, s := range []string{"168.63.129.15", "168.63.129.17", "168.63.128.1"} {
		if why := addrBlocked(netip.MustParseAddr(s)); why != "" {
			t.Errorf("%s refused (%s); only 168.63.129.16 is Azure's platform address", s, why)
		}
	}
}

// TestMetadataNames: the metadata services' names, and names under them,
// are refused by name whatever allow entry covers them (an exact one
// included), before any lookup; names that merely contain the words are
// not.
func TestMetadataNames(t *testing.T) {
	pol, err := NewPolicy([]string{"*.google.internal", "metadata.goog", "*.tencentyun.com", "*.platformequinix.com",
		"instance-data", "*.example.com", "*.cloud.ibm.com"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		hostport string
		refused  bool
	}{
		{"metadata.google.internal:80", true},
		{"METADATA.Google.Internal.:443", true},
		{"x.metadata.google.internal:443", true},
		{"metadata.goog:80", true},
		{"metadata.tencentyun.com:80", true},
		{"metadata.platformequinix.com:443", true},
		{"instance-data:80", true},
		{"api.metadata.cloud.ibm.com:443", true},
		{"other.google.internal:443", false},
		{"metadata.example.com:443", false},
		{"metadata-google.example.com:443", false},
	} {
		d, err := pol.Check(tt.hostport)
		if err != nil {
			t.Fatalf("Check(%s): %v", tt.hostport, err)
		}
		if d.Allowed == tt.refused {
			t.Errorf("Check(%s): allowed %v (%s %s), want refused %v", tt.hostport, d.Allowed, d.Rule, d.Reason, tt.refused)
		}
		if tt.refused && (!strings.Contains(d.Reason, "cloud metadata") || !strings.Contains(d.Rule, "cloud metadata name")) {
			t.Errorf("Check(%s): rule %q reason %q, want the metadata name named", tt.hostport, d.Rule, d.Reason)
		}
	}
}

// TestProxyRefusesCloudAddrs: a granted name that resolves to a cloud
// metadata or platform address, in any spelling, is never dialled, and
// the record says which address and why. A metadata name is refused even
// when the resolver gives it a public address. Before, a name answering
// 168.63.129.16 was dialled.
func TestProxyRefusesCloudAddrs(t *testing.T) {
	f := newFixture(t, []string{"*.example.com", "*.google.internal"}, nil)
	type want struct{ host, reason string }
	var wants []want
	add := func(host, addr, reason string) {
		f.net.names[host] = []string{addr}
		wants = append(wants, want{host, reason})
	}
	for i, c := range cloudAddrs {
		a := netip.MustParseAddr(c.addr)
		add("c"+string(rune('a'+i))+".example.com", c.addr, a.String()+" (")
		if a.Is4() {
			for j, form := range ipv6Forms(t, a) {
				reason := " of " + a.String() + ", "
				if j == 0 { // IPv4-mapped: unmapped before the check
					reason = a.String() + " ("
				}
				add("c"+string(rune('a'+i))+string(rune('a'+j))+".example.com", form, reason)
			}
		}
	}
	add("metadata.google.internal", "203.0.113.10", "cloud metadata service's name")
	for _, w := range wants {
		resp := rawConnect(t, f.addr, w.host+":443")
		if !strings.HasPrefix(resp, "HTTP/1.1 403") || !strings.Contains(resp, w.reason) {
			t.Errorf("CONNECT %s (%v): %q, want 403 naming %q", w.host, f.net.names[w.host], resp, w.reason)
		}
	}
	f.net.mu.Lock()
	if len(f.net.dialed) != 0 {
		t.Errorf("dialled %v", f.net.dialed)
	}
	f.net.mu.Unlock()
	f.proxy.Close()
	r := f.proxy.Report()
	if r.Denied != len(wants) || r.Allowed != 0 {
		t.Errorf("report: %d denied, %d allowed; want %d denied", r.Denied, r.Allowed, len(wants))
	}
	for _, c := range r.Connections {
		if c.Allowed || c.Rule == "" || !strings.Contains(c.Reason, "refused addresses") && !strings.Contains(c.Reason, "metadata") {
			t.Errorf("record of %s: allowed %v rule %q reason %q", c.Host, c.Allowed, c.Rule, c.Reason)
		}
	}
}
