package prepare

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// tunnelProbe is a Python script that sends, through the run's proxy,
// the request METHOD to URL (argv 1 and 2): an https:// URL through a
// CONNECT tunnel (certificate not checked), an http:// one as a plain
// proxied request, or with argv 3 "tunnel" a plain request inside a
// CONNECT tunnel to an http:// URL's host and port. It prints the status
// or the error.
const tunnelProbe = `import http.client, os, ssl, sys, urllib.parse
method, url = sys.argv[1], sys.argv[2]
u = urllib.parse.urlsplit(url)
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
try:
    if u.scheme == "https" or sys.argv[3:] == ["tunnel"]:
        if u.scheme == "https":
            c = http.client.HTTPSConnection(proxy.hostname, proxy.port, context=ssl._create_unverified_context(), timeout=10)
        else:
            c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=10)
        c.set_tunnel(u.hostname, u.port)
        c.request(method, u.path, body=b"x")
    else:
        c = http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=10)
        c.request(method, url, body=b"x")
    print(c.getresponse().status)
except Exception as e:
    print("error", e)
`

// TestIndexTunnelRules shows what the network of a build whose index is
// on https:// or http:// lets install code do, as docs/dependencies.md
// says: over http:// only GET and HEAD reach the index (a POST gets the
// proxy's 403, and a CONNECT tunnel to the index's port, which would hide
// the method, is refused); over https:// the proxy sees only the tunnel,
// so a POST to any path of the index's host reaches it.
func TestIndexTunnelRules(t *testing.T) {
	needSandbox(t)
	var mu sync.Mutex
	var seen []string
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
	})
	plain := httptest.NewServer(record)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(record)
	t.Cleanup(tlsSrv.Close)
	for _, tt := range []struct {
		name, index, method, url, mode string
		want, reached                  string // the status printed; the request the server saw, "" none
	}{
		{"http GET", plain.URL + "/simple", "GET", plain.URL + "/simple/x/", "", "200", "GET /simple/x/"},
		{"http POST", plain.URL + "/simple", "POST", plain.URL + "/upload", "", "403", ""},
		{"http PUT through a tunnel", plain.URL + "/simple", "PUT", plain.URL + "/-/user/org.couchdb.user:x", "tunnel", "error", ""},
		{"https POST", tlsSrv.URL + "/simple", "POST", tlsSrv.URL + "/upload", "", "200", "POST /upload"},
		{"https GET", tlsSrv.URL + "/simple", "GET", tlsSrv.URL + "/simple/x/", "", "200", "GET /simple/x/"},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		_, hosts, isPlain, err := indexHosts(tt.index)
		if err != nil {
			t.Fatal(err)
		}
		sb := buildSandbox(run.Sandbox{}, t.TempDir(), t.TempDir()+"/env")
		sb.AllowHosts = fetchOnly(hosts, isPlain)
		var out, errOut strings.Builder
		sb.Stdout, sb.Stderr = &out, &errOut
		argv := []string{"/usr/bin/python3", "-c", tunnelProbe, tt.method, tt.url}
		if tt.mode != "" {
			argv = append(argv, tt.mode)
		}
		if _, err := sb.Command(context.Background(), argv); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		mu.Lock()
		got := strings.Join(seen, ", ")
		mu.Unlock()
		t.Logf("%s (allow %q): printed %q, server saw %q", tt.name, sb.AllowHosts, strings.TrimSpace(out.String()), got)
		if !strings.HasPrefix(out.String(), tt.want) || got != tt.reached {
			t.Errorf("%s (allow %q): printed %q, server saw %q; want %s, %q\n%s", tt.name, sb.AllowHosts, out.String(), got, tt.want, tt.reached, errOut.String())
		}
	}
}
