package run

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needSSHTools skips (fails under CI=true, where .ci/run installs them)
// when a program of the SSH tests is missing: the real sshd and ssh of
// Debian's openssh-server, and OpenBSD netcat, the run's ProxyCommand.
func needSSHTools(t *testing.T) string {
	t.Helper()
	for _, prog := range []string{"ssh", "ssh-keygen", "git", "nc.openbsd"} {
		if _, err := exec.LookPath(prog); err != nil {
			sshToolMissing(t, prog, err)
		}
	}
	sshd, err := exec.LookPath("/usr/sbin/sshd")
	if err != nil {
		sshToolMissing(t, "sshd", err)
	}
	return sshd
}

func sshToolMissing(t *testing.T, prog string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing under CI=true (.ci/run installs openssh-server and netcat-openbsd): %v", prog, err)
	}
	t.Skipf("%s is not installed (Debian openssh-server, openssh-client, netcat-openbsd): %v", prog, err)
}

// gitSSHServer is a real sshd on a loopback port serving a git repository
// to one key.
type gitSSHServer struct {
	addr      string // 127.0.0.1:PORT
	repo      string // the bare repository's path
	user      string
	clientKey []byte // the private key sshd accepts
	hostKey   string // "ssh-ed25519 AAAA..."
}

func startGitSSHServer(t *testing.T, sshd string) *gitSSHServer {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the test sshd runs as root (privilege separation needs it, and the sandbox's user logs in as the test's user)")
	}
	dir := t.TempDir()
	keygen := func(name string) {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, name)).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	keygen("host")
	keygen("client")
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	os.WriteFile(filepath.Join(dir, "authorized_keys"), read("client.pub"), 0o600)
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	s := &gitSSHServer{repo: filepath.Join(dir, "repo.git"), user: u.Username, clientKey: read("client")}
	f := strings.Fields(string(read("host.pub")))
	s.hostKey = f[0] + " " + f[1]
	work := filepath.Join(dir, "work")
	for _, args := range [][]string{
		{"init", "-q", "--bare", s.repo},
		{"init", "-q", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "over ssh through socks"},
		{"-C", work, "push", "-q", s.repo, "HEAD:refs/heads/main"},
		{"-C", s.repo, "symbolic-ref", "HEAD", "refs/heads/main"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	ln.Close()
	cfg := fmt.Sprintf("ListenAddress %s\nHostKey %s\nAuthorizedKeysFile %s\nPidFile %s\n"+
		"StrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n",
		s.addr, filepath.Join(dir, "host"), filepath.Join(dir, "authorized_keys"), filepath.Join(dir, "sshd.pid"))
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(cfg), 0o600)
	// sshd's privilege separation chroots there; Debian's service makes it.
	os.MkdirAll("/run/sshd", 0o755)
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var log strings.Builder
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("sshd log:\n%s", log.String())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp4", s.addr); err == nil {
			c.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not listen on %s: %s", s.addr, log.String())
		}
	}
}

// gitSSHScript clones ssh://USER@HOST[:PORT]/REPO with the run's own
// GIT_SSH_COMMAND (the SOCKS ProxyCommand) plus the test's key and known
// host, and prints the commit's subject.
const gitSSHScript = `#!/bin/sh
cp ../references/client "$TMPDIR/k" && chmod 600 "$TMPDIR/k" || exit 9
export GIT_SSH_COMMAND="$GIT_SSH_COMMAND -i $TMPDIR/k -o UserKnownHostsFile=$PWD/../references/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
git clone -q "$1" "$TMPDIR/clone" && git -C "$TMPDIR/clone" log -1 --format=%s
`

// TestGitCloneOverSSH: git clone over SSH from a real sshd on loopback,
// through the run's SOCKS proxy with the GIT_SSH_COMMAND the run sets:
// allowed where an allow entry grants the host and port (an explicit IP
// grant, or a name the proxy resolves), refused for a port not granted
// and for a name that resolves to loopback, each refusal in the record
// with its remedy.
func TestGitCloneOverSSH(t *testing.T) {
	needAllowlist(t)
	s := startGitSSHServer(t, needSSHTools(t))
	_, port, _ := net.SplitHostPort(s.addr)
	dir := newSkill(t, map[string]string{"clone.sh": gitSSHScript})
	refs := filepath.Join(dir, "references")
	os.MkdirAll(refs, 0o755)
	os.WriteFile(filepath.Join(refs, "client"), s.clientKey, 0o644)
	known := fmt.Sprintf("[127.0.0.1]:%s %s\ngit.example.com %s\n", port, s.hostKey, s.hostKey)
	os.WriteFile(filepath.Join(refs, "known_hosts"), []byte(known), 0o644)
	hook := func(sb *Sandbox) {
		names := map[string]string{"git.example.com": "203.0.113.22", "loop.example.com": "127.0.0.1"}
		sb.resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := names[host]; ok {
				return []netip.Addr{netip.MustParseAddr(a)}, nil
			}
			return nil, fmt.Errorf("no such host %s", host)
		}
		sb.dial = func(ctx context.Context, ap netip.AddrPort) (net.Conn, error) {
			to := ap.String()
			if to == "203.0.113.22:22" {
				to = s.addr
			}
			var d net.Dialer
			return d.DialContext(ctx, "tcp", to)
		}
	}
	const subject = "over ssh through socks"
	for _, tc := range []struct {
		name   string
		allow  []string
		url    string
		ok     bool
		reason string // of the refused connection, in the record
		remedy string
	}{
		{"explicit IP grant", []string{"127.0.0.1:" + port}, "ssh://" + s.user + "@127.0.0.1:" + port + s.repo, true, "", ""},
		{"name resolved by the proxy", []string{"git.example.com:22"}, "ssh://" + s.user + "@git.example.com" + s.repo, true, "", ""},
		{"port not granted", []string{"127.0.0.1:1", "git.example.com"}, "ssh://" + s.user + "@127.0.0.1:" + port + s.repo, false, "allows port 1 only", "--allow-host 127.0.0.1:" + port},
		{"name not granted on port 22", []string{"git.example.com"}, "ssh://" + s.user + "@git.example.com" + s.repo, false, "allows ports 80 and 443 only", "--allow-host git.example.com:22"},
		{"name resolving to loopback", []string{"loop.example.com:" + port}, "ssh://" + s.user + "@loop.example.com:" + port + s.repo, false, "loopback", "only an explicit IP grant"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var netlog strings.Builder
			sb := Sandbox{AllowHosts: tc.allow, NetworkLog: &netlog}
			hook(&sb)
			o := runIn(t, sb, dir, "clone.sh", tc.url)
			if o.err != nil {
				t.Fatalf("run: %v", o.err)
			}
			cloned := strings.TrimSpace(o.stdout) == subject && o.res.ExitCode == 0
			if cloned != tc.ok {
				t.Fatalf("cloned %v, want %v: exit %d, stdout %q, stderr %s", cloned, tc.ok, o.res.ExitCode, o.stdout, o.stderr)
			}
			if o.res.Network == nil || len(o.res.Network.Connections) == 0 {
				t.Fatalf("no connection in the record")
			}
			e := o.res.Network.Connections[0]
			if e.Method != "SOCKS5" || e.Allowed != tc.ok || !strings.Contains(e.Reason, tc.reason) || !strings.Contains(e.Remedy, tc.remedy) {
				t.Errorf("record %+v", e)
			}
			if !tc.ok && !strings.Contains(netlog.String(), "denied SOCKS5") {
				t.Errorf("no denial line: %q", netlog.String())
			}
		})
	}
}
