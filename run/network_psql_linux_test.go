package run

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// postgresBin is where Debian's postgresql packages keep initdb and
// postgres (psql is on the PATH).
func postgresBin(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/postgres")
	for _, prog := range []string{"psql", "proxychains4"} {
		if _, err := exec.LookPath(prog); err != nil {
			dirs = nil
		}
	}
	if len(dirs) == 0 {
		msg := "PostgreSQL (Debian postgresql), psql or proxychains4 is not installed"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " under CI=true (.ci/run installs them)")
		}
		t.Skip(msg)
	}
	return filepath.Dir(dirs[len(dirs)-1])
}

// startPostgres runs a real PostgreSQL server on a loopback port as
// nobody (initdb refuses root), with trust authentication for 127.0.0.1,
// and returns its address.
func startPostgres(t *testing.T, bin string) string {
	addr, _ := startPostgresSocket(t, bin)
	return addr
}

// startPostgresSocket is startPostgres that also returns the path of the
// server's unix socket.
func startPostgresSocket(t *testing.T, bin string) (addr, socket string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the test PostgreSQL runs as nobody, which needs root to switch to")
	}
	dir, err := os.MkdirTemp("", "skill-sandbox-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	asNobody := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(bin, name), args...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		c.Dir = dir
		return c
	}
	data := filepath.Join(dir, "data")
	if out, err := asNobody("initdb", "--no-sync", "-U", "postgres", "--auth=trust", "-D", data).CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	ln.Close()
	cmd := asNobody("postgres", "-D", data, "-h", "127.0.0.1", "-p", port, "-k", dir)
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		cmd.Wait()
		if t.Failed() {
			t.Logf("postgres log:\n%s", log.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("psql", "-h", "127.0.0.1", "-p", port, "-U", "postgres", "-Atc", "select 1").Run() == nil {
			return addr, filepath.Join(dir, ".s.PGSQL."+port)
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres did not answer on %s: %s", addr, log.String())
		}
	}
}

// psqlScript runs psql through proxychains4 (libpq has no proxy support)
// with a config naming the run's SOCKS proxy, names resolved by it.
const psqlScript = `#!/bin/sh
cat > "$TMPDIR/pc.conf" <<EOF
strict_chain
proxy_dns
tcp_connect_time_out 10000
tcp_read_time_out 15000
[ProxyList]
socks5 127.0.0.1 3128
EOF
proxychains4 -q -f "$TMPDIR/pc.conf" psql -h "$1" -p "$2" -U postgres -Atc "select 'answer ' || 6*7"
`

// TestPsqlThroughSOCKS: psql against a real PostgreSQL on loopback,
// through the run's SOCKS proxy by proxychains4: allowed where an allow
// entry grants the name and port, refused for a port not granted and for
// a name that resolves to loopback.
func TestPsqlThroughSOCKS(t *testing.T) {
	needAllowlist(t)
	pg := startPostgres(t, postgresBin(t))
	dir := newSkill(t, map[string]string{"psql.sh": psqlScript})
	hook := func(sb *Sandbox) {
		names := map[string]string{"db.example.com": "203.0.113.54", "loop.example.com": "127.0.0.1"}
		sb.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		}
		sb.dial = func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			to := ap.String()
			if to == "203.0.113.54:5432" {
				to = pg
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", to)
		}
	}
	_, pgPort, _ := net.SplitHostPort(pg)
	for _, tc := range []struct {
		name, host, port string
		allow            []string
		ok               bool
		reason           string
	}{
		{"granted", "db.example.com", "5432", []string{"db.example.com:5432"}, true, ""},
		{"port not granted", "db.example.com", "5432", []string{"db.example.com"}, false, "allows ports 80 and 443 only"},
		{"name resolving to loopback", "loop.example.com", pgPort, []string{"loop.example.com:" + pgPort}, false, "loopback"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := Sandbox{AllowHosts: tc.allow}
			hook(&sb)
			o := runIn(t, sb, dir, "psql.sh", tc.host, tc.port)
			if o.err != nil {
				t.Fatalf("run: %v", o.err)
			}
			answered := strings.TrimSpace(o.stdout) == "answer 42"
			if answered != tc.ok {
				t.Fatalf("answered %v, want %v: exit %d, stdout %q, stderr %s", answered, tc.ok, o.res.ExitCode, o.stdout, o.stderr)
			}
			if o.res.Network == nil || len(o.res.Network.Connections) == 0 {
				t.Fatal("no connection in the record")
			}
			e := o.res.Network.Connections[0]
			if e.Method != "SOCKS5" || e.Allowed != tc.ok || !strings.Contains(e.Reason, tc.reason) || (!tc.ok && e.Remedy == "") {
				t.Errorf("record %+v", e)
			}
		})
	}
}

// TestPsqlAllowLocal: psql, which speaks no proxy protocol, against a
// real PostgreSQL on the host's loopback without proxychains: with
// AllowLocal naming its port the run's own 127.0.0.1:PORT relays to it;
// without (another port granted) psql cannot connect.
func TestPsqlAllowLocal(t *testing.T) {
	needAllowlist(t)
	pg := startPostgres(t, postgresBin(t))
	_, port, _ := net.SplitHostPort(pg)
	pgPort, _ := strconv.Atoi(port)
	dir := newSkill(t, map[string]string{"psql.sh": "#!/bin/sh\npsql -h 127.0.0.1 -p \"$1\" -U postgres -Atc \"select 'answer ' || 6*7\"\n"})
	for _, tc := range []struct {
		name  string
		local []int
		ok    bool
	}{
		{"granted", []int{pgPort}, true},
		{"another port granted", []int{pgPort + 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := runIn(t, Sandbox{AllowLocal: tc.local}, dir, "psql.sh", port)
			if o.err != nil {
				t.Fatalf("run: %v", o.err)
			}
			answered := strings.TrimSpace(o.stdout) == "answer 42"
			if answered != tc.ok {
				t.Fatalf("answered %v, want %v: exit %d, stdout %q, stderr %s", answered, tc.ok, o.res.ExitCode, o.stdout, o.stderr)
			}
			if tc.ok && (o.res.Network == nil || len(o.res.Network.Connections) == 0 || o.res.Network.Connections[0].Method != "LOCAL") {
				t.Errorf("record: %+v", o.res.Network)
			}
		})
	}
}

// TestPsqlAllowUnix: psql against a real PostgreSQL through its unix
// socket, granted by AllowUnix alone (no network at all); without the
// grant psql cannot connect.
func TestPsqlAllowUnix(t *testing.T) {
	needAllowlist(t)
	pg, sock := startPostgresSocket(t, postgresBin(t))
	_, port, _ := net.SplitHostPort(pg)
	dir := newSkill(t, map[string]string{"psql.sh": "#!/bin/sh\npsql -h \"$1\" -p \"$2\" -U postgres -Atc \"select 'answer ' || 6*7\"\n"})
	for _, tc := range []struct {
		name string
		unix []string
		ok   bool
	}{
		{"granted", []string{sock}, true},
		{"not granted", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := runIn(t, Sandbox{AllowUnix: tc.unix}, dir, "psql.sh", filepath.Dir(sock), port)
			if o.err != nil {
				t.Fatalf("run: %v", o.err)
			}
			if answered := strings.TrimSpace(o.stdout) == "answer 42"; answered != tc.ok {
				t.Fatalf("answered %v, want %v: exit %d, stdout %q, stderr %s", answered, tc.ok, o.res.ExitCode, o.stdout, o.stderr)
			}
		})
	}
}
