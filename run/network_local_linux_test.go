package run

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// countingServer is a plain HTTP server on the host's loopback that
// answers "server NAME" and counts its requests.
func countingServer(t *testing.T, name string) (port int, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, "server %s", name)
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port, hits
}

// localScript reaches the host's loopback ports A (granted) and B (not)
// every way a script can: curl directly (no proxy) and through the
// proxy by both names, and a raw socket that sends a proxy request for
// B into A's relay.
const localScript = `#!/bin/sh
a=$1 b=$2
for u in http://127.0.0.1:$a/ http://127.0.0.1:$b/; do
  echo "direct $u: $(curl -sS --max-time 10 --noproxy '*' "$u" 2>&1)"
  echo "proxied $u: $(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "$u" 2>&1) $(curl -sS --max-time 10 "$u" 2>&1 | head -c 40)"
done
echo "proxied localhost: $(curl -sS --max-time 10 http://localhost:$a/ 2>&1)"
python3 - "$a" "$b" <<'EOF'
import socket, sys
a, b = int(sys.argv[1]), int(sys.argv[2])
s = socket.create_connection(("127.0.0.1", a), timeout=10)
s.sendall(("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (b, b)).encode())
got = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    got += d
    if b"server " in got:
        break
print("relay answer:", got.decode(errors="replace").split("\r\n")[-1])
for port in (b, 3129, 5432):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        print("port", port, "REACHED")
    except OSError as e:
        print("port", port, "blocked", type(e).__name__)
EOF
`

// TestAllowLocalPorts: with AllowLocal naming port A of the host's
// loopback, a script reaches A at 127.0.0.1:A in the run without a proxy
// (the relay) and through the proxy as 127.0.0.1:A and localhost:A; the
// server on port B of the host's loopback is never reached, directly or
// through the proxy, and a proxy request sent into A's relay goes to A
// verbatim. The record lists the relay's connections. The same under
// the gvisor backend (where runsc is), whose relay listens on A in the
// sandbox and hands each connection to the supervisor.
func TestAllowLocalPorts(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	needTool(t, "python3")
	backends := []string{BackendNative}
	if _, err := exec.LookPath("runsc"); err == nil || os.Getenv("CI") == "true" {
		backends = append(backends, BackendGVisor)
	} else {
		t.Log("runsc (gVisor) is not installed: the native backend only")
	}
	for _, be := range backends {
		t.Run(be, func(t *testing.T) { testAllowLocalPorts(t, be) })
	}
}

// testAllowLocalPorts is TestAllowLocalPorts under the backend be.
func testAllowLocalPorts(t *testing.T, be string) {
	a, aHits := countingServer(t, "granted")
	b, bHits := countingServer(t, "other")
	dir := newSkill(t, map[string]string{"local.sh": localScript})
	o := runIn(t, Sandbox{Backend: be, AllowLocal: []int{a}}, dir, "local.sh", strconv.Itoa(a), strconv.Itoa(b))
	if o.err != nil {
		t.Fatalf("run: %v\n%s", o.err, o.stderr)
	}
	if o.res.Backend != be && !(be == BackendNative && o.res.Backend == "") {
		t.Fatalf("ran under %q, want %s", o.res.Backend, be)
	}
	t.Logf("stdout:\n%s", o.stdout)
	as, bs := strconv.Itoa(a), strconv.Itoa(b)
	for _, want := range []string{
		"direct http://127.0.0.1:" + as + "/: server granted",
		"proxied http://127.0.0.1:" + as + "/: 200 server granted",
		"proxied http://127.0.0.1:" + bs + "/: 403",
		"proxied localhost: server granted",
		"relay answer: server granted", // A's server, given the CONNECT verbatim
		"port " + bs + " blocked", "port 3129 blocked", "port 5432 blocked",
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	if strings.Contains(o.stdout, "REACHED") || strings.Contains(o.stdout, "server other") {
		t.Errorf("the script reached another loopback port:\n%s", o.stdout)
	}
	if n := bHits.Load(); n != 0 {
		t.Errorf("the server on the port not granted got %d requests", n)
	}
	if aHits.Load() < 3 {
		t.Errorf("the granted server got %d requests, want at least 3", aHits.Load())
	}
	if o.res.Network == nil {
		t.Fatal("no network report")
	}
	var local, refused int
	for _, c := range o.res.Network.Connections {
		if c.Method == "LOCAL" && c.Allowed && c.Rule == "allow-local "+as {
			local++
		}
		if !c.Allowed && strings.Contains(c.Remedy, "--allow-local "+bs) {
			refused++
		}
	}
	if local < 2 || refused == 0 {
		t.Errorf("record: %d relay connections, %d refusals naming --allow-local: %+v", local, refused, o.res.Network.Connections)
	}
}

// TestAllowLocalConfig: local ports that cannot be granted are refused
// before the run starts.
func TestAllowLocalConfig(t *testing.T) {
	dir := newSkill(t, map[string]string{"true.sh": "#!/bin/sh\n"})
	for _, ports := range [][]int{{0}, {70000}, {proxyPort}, {8080, 8080}} {
		o := runIn(t, Sandbox{AllowLocal: ports}, dir, "true.sh")
		if !errors.Is(o.err, ErrBadConfig) {
			t.Errorf("AllowLocal %v: %v, want ErrBadConfig", ports, o.err)
		}
	}
	o := runIn(t, Sandbox{AllowLocal: []int{8080}, AllowNetwork: true}, dir, "true.sh")
	if !errors.Is(o.err, ErrBadConfig) {
		t.Errorf("AllowLocal with AllowNetwork: %v, want ErrBadConfig", o.err)
	}
}

// TestAllowLocalPooled: a run that takes a pre-started init process from
// a Pool gets its local port's listener too (made by the run's program,
// after the pooled prefix): curl reaches the granted port directly.
func TestAllowLocalPooled(t *testing.T) {
	needAllowlist(t)
	needTool(t, "curl")
	a, hits := countingServer(t, "granted")
	dir := newSkill(t, map[string]string{"get.sh": "#!/bin/sh\ncurl -sS --max-time 10 --noproxy '*' \"http://127.0.0.1:$1/\"\n"})
	pl := newTestPool(t, 1, 0, Sandbox{})
	waitIdle(t, pl, 1)
	o := runIn(t, Sandbox{AllowLocal: []int{a}, Pool: pl}, dir, "get.sh", strconv.Itoa(a))
	if o.err != nil || o.stdout != "server granted" || hits.Load() != 1 {
		t.Errorf("err %v, stdout %q, stderr %s, %d requests", o.err, o.stdout, o.stderr, hits.Load())
	}
	if s := pl.Stats(); s.Taken != 1 || s.Missed != 0 {
		t.Errorf("pool stats %+v: the run did not use the pooled stage", s)
	}
}
