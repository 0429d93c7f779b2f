package netproxy

import (
	"io"
	"strings"
	"testing"
)

// TestDenialRemedies: each refusal says, in the client's 403 body, in the
// caller's line and in the log, what would allow it: the flag and the
// policy key naming exactly the refused host, the deny entry to remove,
// or that no grant does.
func TestDenialRemedies(t *testing.T) {
	f := newFixture(t, []string{"api.example.com", "*.example.com"}, []string{"www.example.com"})
	tests := []struct{ url, remedy string }{
		{"badexample.com:443", `--allow-host badexample.com, or "badexample.com" in [network] allowed_domains of the operator policy (--policy)`},
		{"api.example.com:8443", `--allow-host api.example.com:8443, or "api.example.com:8443" in [network] allowed_domains`},
		{"http://203.0.113.10:8080/", `--allow-host 203.0.113.10:8080, or`},
		{"www.example.com:443", `remove --deny-host www.example.com, or "www.example.com" from [network] denied_domains`},
		{"meta.example.com:443", `nothing for the name meta.example.com: it resolves to the host's own, its LAN's or its cloud's addresses; only an explicit IP grant reaches one (--allow-host 169.254.169.254)`},
		{"http://metadata.google.internal/", `nothing: cloud metadata names are never reached by name`},
	}
	for i, tt := range tests {
		var resp string
		if strings.HasPrefix(tt.url, "http://") {
			r, err := f.client.Get(tt.url)
			if err != nil {
				t.Fatalf("%s: %v", tt.url, err)
			}
			b, _ := io.ReadAll(r.Body)
			r.Body.Close()
			resp = r.Status + "\n" + string(b)
		} else {
			resp = rawConnect(t, f.addr, tt.url)
		}
		if !strings.Contains(resp, "403 Forbidden") || !strings.Contains(resp, "skill-sandbox: network: to allow it: "+tt.remedy) {
			t.Errorf("%s: %q, want the remedy %q", tt.url, resp, tt.remedy)
		}
		if e := lastConnection(t, f.proxy, i+1); !strings.HasPrefix(e.Remedy, tt.remedy) {
			t.Errorf("%s: logged remedy %q", tt.url, e.Remedy)
		}
	}
	if d := f.denied.String(); !strings.Contains(d, "denied CONNECT badexample.com:443: badexample.com:443 is not in the allow list; to allow it: --allow-host badexample.com, or") {
		t.Errorf("denial lines:\n%s", d)
	}
}
