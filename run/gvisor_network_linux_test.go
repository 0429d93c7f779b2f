package run

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
)

// TestGVisorAllowHostsRealClients: curl and Python under the gvisor
// backend reach the allowed hosts through the same filtering proxy as
// native runs, are refused the same, and the record's connections are
// the same as the native run's.
func TestGVisorAllowHostsRealClients(t *testing.T) {
	needRunsc(t)
	needTool(t, "curl")
	needTool(t, "python3")
	fi := newFakeInternet(t, nil)
	dir := netSkill(t, fi, map[string]string{"fetch.sh": curlScript, "fetch.py": urllibScript})
	sb := Sandbox{
		AllowHosts: []string{"api.example.com", "*.example.com", "127.0.0.1:80"},
		DenyHosts:  []string{"www.example.com"},
	}
	fi.hook(&sb)
	tests := []struct {
		script, url string
		want        string
	}{
		{"fetch.sh", "https://api.example.com/a", "hello api.example.com /a"},
		{"fetch.sh", "http://api.example.com/b", "hello api.example.com /b"},
		{"fetch.py", "https://api.example.com/c", "status 200 hello api.example.com /c"},
		{"fetch.sh", "http://127.0.0.1/e", "hello 127.0.0.1 /e"}, // explicit IP grant
		{"fetch.sh", "https://badexample.com/", "403"},
		{"fetch.sh", "https://www.example.com/", "403"}, // deny wins
		{"fetch.sh", "http://loop.example.com/", "resolves only to refused addresses: 127.0.0.1 (loopback)"},
		{"fetch.sh", "http://meta.example.com/latest/meta-data/", "169.254.169.254 (link-local (cloud metadata))"},
		{"fetch.py", "http://badexample.com/", "http error 403 skill-sandbox: network: badexample.com:80 is not in the allow list"},
	}
	for _, tt := range tests {
		var reports [2]*netproxy.Report
		for i, b := range []string{BackendNative, BackendGVisor} {
			sb := sb
			sb.Backend = b
			o := runIn(t, sb, dir, tt.script, tt.url)
			if o.err != nil {
				t.Fatalf("%s: %s %s: %v", b, tt.script, tt.url, o.err)
			}
			if got := o.stdout + o.stderr; !strings.Contains(got, tt.want) || o.res.Backend != b {
				t.Errorf("%s: %s %s: got %q, want %q", b, tt.script, tt.url, got, tt.want)
			}
			reports[i] = o.res.Network
		}
		if reports[1] == nil || !sameConnections(reports[0], reports[1]) {
			t.Errorf("%s %s: native connections %+v, gvisor %+v", tt.script, tt.url, reports[0], reports[1])
		}
	}
}

// sameConnections compares two runs' network reports but for what
// differs from run to run (times, byte counts).
func sameConnections(a, b *netproxy.Report) bool {
	strip := func(r *netproxy.Report) []netproxy.Connection {
		var out []netproxy.Connection
		for _, c := range r.Connections {
			c.Start, c.Duration, c.BytesUp, c.BytesDown = time.Time{}, 0, 0, 0
			out = append(out, c)
		}
		return out
	}
	return a.Total == b.Total && a.Allowed == b.Allowed && a.Denied == b.Denied && reflect.DeepEqual(strip(a), strip(b))
}

// TestGVisorAllowlistBypass tries the ways around the proxy of
// TestAllowlistBypass under the gvisor backend: the script's sockets
// live in gVisor's own network stack, which has a loopback and nothing
// else, so the host's loopback server, other hosts and the metadata
// address stay out of reach. The control run (the host's network under
// gVisor) reaches the same server: without the isolation the test
// fails.
func TestGVisorAllowlistBypass(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	fi := newFakeInternet(t, nil)
	_, port, _ := net.SplitHostPort(fi.httpAddr)
	dir := newSkill(t, map[string]string{"bypass.py": bypassScript, "direct.py": directScript})
	sb := Sandbox{AllowHosts: []string{"api.example.com", "*.example.com"}, Backend: BackendGVisor}
	fi.hook(&sb)
	o := runIn(t, sb, dir, "bypass.py", port, outboundIP(t))
	if o.err != nil {
		t.Fatalf("%v %s", o.err, o.stderr)
	}
	t.Logf("gvisor:\n%s", o.stdout)
	if strings.Contains(o.stdout, "REACHED") || strings.Count(o.stdout, "blocked") != 10 {
		t.Errorf("a bypass worked:\n%s%s", o.stdout, o.stderr)
	}
	// The proxy itself still refuses what is not allowed: a CONNECT to
	// the host's loopback or the metadata address straight at the port.
	o = runIn(t, sb, dir, "direct.py", port)
	if o.err != nil || strings.Contains(o.stdout, "200") || strings.Count(o.stdout, "403") != 3 {
		t.Errorf("CONNECT straight to the proxy: err %v\n%s%s", o.err, o.stdout, o.stderr)
	}
	o = runIn(t, Sandbox{AllowNetwork: true, Backend: BackendGVisor}, dir, "bypass.py", port, outboundIP(t))
	if !strings.Contains(o.stdout, "tcp-host-loopback REACHED") {
		t.Errorf("control run with the host network did not reach the host:\n%s%s", o.stdout, o.stderr)
	}
}

// bypassScript tries to reach the host or the outside without the proxy
// (TestAllowlistBypass, TestGVisorAllowlistBypass); each of its ten
// attempts prints "NAME blocked" or "NAME REACHED".
const bypassScript = `import os, socket, sys
port = int(sys.argv[1]); host_ip = sys.argv[2]
def attempt(name, fn):
    try:
        fn()
        print(name, "REACHED")
    except Exception as e:
        print(name, "blocked", type(e).__name__, e)
def tcp(addr, fam=socket.AF_INET):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(3); s.connect(addr); s.close()
def udp_dns(server):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
    s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01", (server, 53))
    s.recvfrom(512)
attempt("tcp-host-loopback", lambda: tcp(("127.0.0.1", port)))
attempt("tcp-host-ip", lambda: tcp((host_ip, port)))
attempt("tcp-public", lambda: tcp(("1.1.1.1", 443)))
attempt("tcp-metadata", lambda: tcp(("169.254.169.254", 80)))
attempt("tcp6-loopback", lambda: tcp(("::1", port), socket.AF_INET6))
attempt("udp-dns-public", lambda: udp_dns("8.8.8.8"))
attempt("udp-dns-host", lambda: udp_dns(host_ip))
attempt("getaddrinfo", lambda: socket.getaddrinfo("example.com", 443))
attempt("raw-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("packet-socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
print("fds", fds)
for fd in fds[3:]:
    try:
        t = os.readlink("/proc/self/fd/%d" % fd)
        if t.startswith("socket:"):
            print("inherited socket REACHED", fd, t)
    except OSError:
        pass
ifs = sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else ["?"]
print("interfaces", ifs)
`

// directScript asks the proxy, on the sandbox's loopback, for tunnels to
// the host's loopback server, the metadata address and a name that
// resolves to loopback.
const directScript = `import socket, sys
for target in ["127.0.0.1:" + sys.argv[1], "169.254.169.254:80", "loop.example.com:80"]:
    s = socket.create_connection(("127.0.0.1", 3128), timeout=5)
    s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    print(target, s.recv(200).decode().split("\r\n")[0])
    s.close()
`

// TestGVisorNetworkKeepsLimits: with the relay as the sandbox's first
// process, the script still gets the run's address-space limit (set by
// the relay's child, not by runsc) and its other limits, and cannot
// write in the host folder of the relay's socket.
func TestGVisorNetworkKeepsLimits(t *testing.T) {
	needRunsc(t)
	dir := newSkill(t, map[string]string{"limits.sh": "#!/bin/bash\necho as $(ulimit -S -v) $(ulimit -H -v) nofile $(ulimit -S -n) $(ulimit -H -n)\necho x 2>/dev/null > /.skill-sandbox-net/fill && echo WROTE\n"})
	sb := Sandbox{AllowHosts: []string{"example.com"}, Backend: BackendGVisor, MaxOpenFiles: 200}
	o := runIn(t, sb, dir, "limits.sh")
	if o.err != nil || o.res.AddressSpaceMB == 0 {
		t.Fatalf("err %v, address space %d MB, stderr %q", o.err, o.res.AddressSpaceMB, o.stderr)
	}
	kb := strconv.Itoa(o.res.AddressSpaceMB << 10)
	if want := "as " + kb + " " + kb + " nofile 200 200\n"; o.stdout != want {
		t.Errorf("the script's limits: %q, want %q", o.stdout, want)
	}
}

// TestGVisorHostSocketUnreachable: a host daemon's Unix socket (mode
// 0666) in a read grant. runsc's gofer connects such sockets for the
// sandbox with its own identity, root for a root caller, and a daemon
// that trusts its peer's uid would take the script for root; so the
// sandbox may make sockets (the relay's) but not connect to host ones:
// under gVisor the script's connect fails. Natively it connects as the
// run's identity, never root (the control: the server is reachable).
func TestGVisorHostSocketUnreachable(t *testing.T) {
	needRunsc(t)
	needTool(t, "python3")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755)
	sock := filepath.Join(dir, "daemon.sock")
	serveUnix(t, sock, func(c net.Conn) {
		uid := -1
		if raw, err := c.(*net.UnixConn).SyscallConn(); err == nil {
			raw.Control(func(fd uintptr) {
				if cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED); err == nil {
					uid = int(cred.Uid)
				}
			})
		}
		fmt.Fprintf(c, "peer uid %d\n", uid)
	})
	skill := newSkill(t, map[string]string{"uds.py": `import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print(s.recv(100).decode().strip())
except OSError as e:
    print("blocked", e)
`})
	for _, b := range []string{BackendNative, BackendGVisor} {
		sb := Sandbox{Backend: b, AllowHosts: []string{"example.com"}, ReadPaths: []string{dir}}
		o := runIn(t, sb, skill, "uds.py", sock)
		if o.err != nil {
			t.Fatalf("%s: %v %s", b, o.err, o.stderr)
		}
		t.Logf("%s: %s", b, o.stdout)
		if strings.Contains(o.stdout, "peer uid 0\n") {
			t.Errorf("%s: the host daemon took the script for root", b)
		}
		if reached := strings.HasPrefix(o.stdout, "peer uid "); reached != (b == BackendNative) {
			t.Errorf("%s: %q", b, o.stdout)
		}
	}
}
