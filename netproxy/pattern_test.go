package netproxy

import (
	"net/netip"
	"testing"
)

func TestParsePattern(t *testing.T) {
	good := []string{
		"api.example.com", "API.Example.COM.", "*.example.com", "*.example.com:8443",
		"example.com:1", "example.com:65535", "203.0.113.7", "203.0.113.7:8080",
		"::1", "[::1]", "[2001:db8::1]:443", "xn--bcher-kva.example", "under_score.example.com",
	}
	for _, s := range good {
		if _, err := ParsePattern(s); err != nil {
			t.Errorf("ParsePattern(%q): %v", s, err)
		}
	}
	bad := []string{
		"", "*", "*.com", "**.example.com", "a.*.example.com", "example.com:", "example.com:0",
		"example.com:65536", "example.com:+80", "example.com:80:80", "[::1", "[::1]x", "[::1]:",
		"bücher.example", "exa mple.com", "-a.example.com", "a-.example.com", "a..example.com",
		"127.1", "0x7f.1", "2130706433", "[fe80::1%eth0]", "example.com/path", "user@example.com",
		".", "..", "[]", "[not-ip]:80",
	}
	for _, s := range bad {
		if _, err := ParsePattern(s); err == nil {
			t.Errorf("ParsePattern(%q): accepted, want an error", s)
		}
	}
}

func TestPolicyCheck(t *testing.T) {
	pol, err := NewPolicy(
		[]string{"example.com", "*.example.org", "*.example.org:8443", "api.example.net:8443", "203.0.113.7", "[2001:db8::1]:8080", "*.cdn.example.com", "*.cdn.example.com:8080"},
		[]string{"secret.example.org", "*.bad.cdn.example.com"},
	)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		hostport string
		allowed  bool
		rule     string
	}{
		{"example.com:443", true, "allow example.com"},
		{"EXAMPLE.com.:80", true, "allow example.com"},
		{"example.com:8080", false, ""},
		{"badexample.com:443", false, ""},
		{"www.example.com:443", false, ""},
		{"example.com.evil.net:443", false, ""},
		{"a.example.org:443", true, "allow *.example.org"},
		{"a.b.example.org:80", true, "allow *.example.org"},
		{"example.org:443", false, ""},
		{"badexample.org:443", false, ""},
		{"secret.example.org:443", false, "deny secret.example.org"},
		{"secret.example.org:8443", false, "deny secret.example.org"}, // a deny entry without a port covers all
		{"x.bad.cdn.example.com:8080", false, "deny *.bad.cdn.example.com"},
		{"x.bad.cdn.example.com:443", false, "deny *.bad.cdn.example.com"},
		{"bad.cdn.example.com:443", true, "allow *.cdn.example.com"},
		{"api.example.net:8443", true, "allow api.example.net:8443"},
		{"api.example.net:443", false, ""},
		{"203.0.113.7:443", true, "allow 203.0.113.7"},
		{"203.0.113.7:22", false, ""},
		{"203.0.113.8:443", false, ""},
		{"[2001:db8::1]:8080", true, "allow [2001:db8::1]:8080"},
		{"[::ffff:203.0.113.7]:443", true, "allow 203.0.113.7"},
		{"[2001:db8::1]:443", false, ""},
	}
	for _, tt := range tests {
		d, err := pol.Check(tt.hostport)
		if err != nil {
			t.Errorf("Check(%q): %v", tt.hostport, err)
			continue
		}
		if d.Allowed != tt.allowed || d.Rule != tt.rule {
			t.Errorf("Check(%q) = allowed %v rule %q, want %v %q", tt.hostport, d.Allowed, d.Rule, tt.allowed, tt.rule)
		}
		if !d.Allowed && d.Reason == "" {
			t.Errorf("Check(%q): denied without a reason", tt.hostport)
		}
	}
	for _, bad := range []string{"example.com", "[::1]", "::1:443", "127.1:80", "bücher.de:443", "example.com:0"} {
		if _, err := pol.Check(bad); err == nil {
			t.Errorf("Check(%q): accepted, want an error", bad)
		}
	}
}

func TestAddrBlocked(t *testing.T) {
	tests := []struct {
		addr    string
		blocked bool
	}{
		{"127.0.0.1", true}, {"127.255.0.9", true}, {"10.1.2.3", true}, {"172.16.0.1", true},
		{"172.31.255.255", true}, {"172.32.0.1", false}, {"192.168.1.1", true}, {"100.64.0.1", true},
		{"100.128.0.1", false}, {"169.254.169.254", true}, {"0.0.0.0", true}, {"224.0.0.1", true},
		{"255.255.255.255", true}, {"::1", true}, {"::", true}, {"fe80::1", true}, {"fd00::1", true},
		{"fc00::1", true}, {"ff02::1", true}, {"::ffff:127.0.0.1", true}, {"::ffff:169.254.169.254", true},
		{"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::808:808", false},
		// IPv4-compatible (deprecated), IPv4-translated, 6to4 and Teredo
		// forms are judged by the IPv4 address they lead to.
		{"::7f00:1", true}, {"::808:808", true}, {"::ffff:0:7f00:1", true}, {"::ffff:0:808:808", false},
		{"2002:a9fe:a9fe::1", true}, {"2002:7f00:1::", true}, {"2002:808:808::1", false},
		{"2001:0:4136:e378:8000:63bf:80ff:fffe", true}, {"2001:0:4136:e378:8000:63bf:f7f7:f7f7", false},
		{"93.184.215.14", false}, {"8.8.8.8", false}, {"2606:4700::1111", false}, {"203.0.113.5", false},
	}
	for _, tt := range tests {
		got := addrBlocked(mustAddr(t, tt.addr)) != ""
		if got != tt.blocked {
			t.Errorf("addrBlocked(%s) = %v, want %v", tt.addr, got, tt.blocked)
		}
	}
}

// TestDenialReasons: a refusal says why in words a script can print, and
// names the grant that covers the host on other ports, the usual slip.
func TestDenialReasons(t *testing.T) {
	pol, err := NewPolicy([]string{"api.example.net", "*.example.org:8443", "203.0.113.7"}, []string{"secret.example.org"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ hostport, reason string }{
		{"other.example.net:443", "other.example.net:443 is not in the allow list"},
		{"api.example.net:8080", `api.example.net:8080 is not in the allow list: "api.example.net" allows ports 80 and 443 only (add :PORT for another)`},
		{"a.example.org:443", `a.example.org:443 is not in the allow list: "*.example.org:8443" allows port 8443 only`},
		{"203.0.113.7:22", `203.0.113.7:22 is not in the allow list: "203.0.113.7" allows ports 80 and 443 only (add :PORT for another)`},
		{"203.0.113.8:443", "203.0.113.8:443 is an IP address; only an allow entry naming that address grants it"},
		{"secret.example.org:8443", `secret.example.org:8443 is denied by "secret.example.org"`},
	} {
		d, err := pol.Check(tt.hostport)
		if err != nil || d.Allowed || d.Reason != tt.reason {
			t.Errorf("Check(%q) = %+v, %v; want the reason %q", tt.hostport, d, err, tt.reason)
		}
	}
}

// TestDeniedAddr: a deny entry naming an address refuses that address
// among a name's answers, in its IPv4-mapped form and in the IPv6 forms
// that lead to it (NAT64, 6to4, Teredo), on its port or, without one, on
// every port.
func TestDeniedAddr(t *testing.T) {
	pol, err := NewPolicy(nil, []string{"203.0.113.7", "198.51.100.1:8443", "2001:db8::7", "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		addr string
		port int
		want string
	}{
		{"203.0.113.7", 443, "203.0.113.7"},
		{"203.0.113.7", 22, "203.0.113.7"},
		{"::ffff:203.0.113.7", 443, "203.0.113.7"},
		{"64:ff9b::cb00:7107", 443, "203.0.113.7"},                   // NAT64
		{"2002:cb00:7107::1", 443, "203.0.113.7"},                    // 6to4
		{"2001:0:4136:e378:8000:63bf:34ff:8ef8", 443, "203.0.113.7"}, // Teredo
		{"203.0.113.8", 443, ""},
		{"64:ff9b::cb00:7108", 443, ""},
		{"198.51.100.1", 8443, "198.51.100.1:8443"},
		{"198.51.100.1", 443, ""},
		{"64:ff9b::c633:6401", 8443, "198.51.100.1:8443"},
		{"2001:db8::7", 443, "2001:db8::7"},
		{"2001:db8::8", 443, ""},
	} {
		if got := pol.deniedAddr(netip.MustParseAddr(tt.addr), tt.port); got != tt.want {
			t.Errorf("deniedAddr(%s, %d) = %q, want %q", tt.addr, tt.port, got, tt.want)
		}
	}
}
