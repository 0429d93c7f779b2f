package run

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unixServer serves "hello from NAME\n" on a unix socket at path, writable
// by all (a root caller's run connects as a uid of its own).
func unixServer(t *testing.T, path, name string) {
	t.Helper()
	serveUnix(t, path, func(c net.Conn) { fmt.Fprintf(c, "hello from %s\n", name) })
}

// serveUnix listens on a unix socket at path, writable by all, and calls
// handle on each connection, which it then closes, until the test ends.
func serveUnix(t *testing.T, path string, handle func(net.Conn)) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			handle(c)
			c.Close()
		}
	}()
}

const unixScript = `import os, socket, sys
app, other, secret = sys.argv[1:4]
def attempt(name, fn):
    try:
        print(name, "REACHED", fn())
    except Exception as e:
        print(name, "blocked", type(e).__name__)
def talk(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(5); s.connect(path)
    return s.recv(100).decode().strip()
print("granted:", talk(app))
attempt("other socket", lambda: talk(other))
attempt("secret file", lambda: open(secret).read())
try:
    print("listing", sorted(os.listdir(os.path.dirname(app))))
except OSError as e:
    print("listing refused", type(e).__name__)
attempt("docker socket", lambda: talk("/var/run/docker.sock"))
`

// TestAllowUnixSocket: a unix socket named by AllowUnix is reachable at
// its own path in the run, served by a real server on the host; its
// folder is not: another socket beside it and a file beside it stay out
// of reach, and the folder in the run lists the socket alone.
func TestAllowUnixSocket(t *testing.T) {
	needAllowlist(t)
	needTool(t, "python3")
	dir, err := os.MkdirTemp("", "skill-sandbox-unix-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	app, other, secret := filepath.Join(dir, "app.sock"), filepath.Join(dir, "other.sock"), filepath.Join(dir, "secret.txt")
	unixServer(t, app, "app")
	unixServer(t, other, "other")
	if err := os.WriteFile(secret, []byte("do not read"), 0o644); err != nil {
		t.Fatal(err)
	}
	skill := newSkill(t, map[string]string{"unix.py": unixScript})
	o := runIn(t, Sandbox{AllowUnix: []string{app}}, skill, "unix.py", app, other, secret)
	if o.err != nil {
		t.Fatalf("run: %v\n%s", o.err, o.stderr)
	}
	t.Logf("stdout:\n%s", o.stdout)
	if !strings.Contains(o.stdout, "granted: hello from app") {
		t.Errorf("the granted socket was not reached:\n%s%s", o.stdout, o.stderr)
	}
	// The folder in the run holds the mount point alone.
	if strings.Contains(o.stdout, "REACHED") || strings.Count(o.stdout, "blocked") != 3 || !strings.Contains(o.stdout, "listing ['app.sock']\n") {
		t.Errorf("the script reached more than the socket:\n%s", o.stdout)
	}
	// Control: the same script with the folder granted reaches the rest.
	o = runIn(t, Sandbox{ReadPaths: []string{dir}}, skill, "unix.py", app, other, secret)
	if !strings.Contains(o.stdout, "other socket REACHED") {
		t.Errorf("control run with the folder granted did not reach the other socket:\n%s%s", o.stdout, o.stderr)
	}
}

// TestAllowUnixUnderRun: a socket under /run, where servers keep theirs
// (/run/postgresql), is reachable; the rest of /run is not (the sandbox
// has no /run of its own: the socket's folders are made for it alone).
func TestAllowUnixUnderRun(t *testing.T) {
	needAllowlist(t)
	needTool(t, "python3")
	dir, err := os.MkdirTemp("/run", "skill-sandbox-test-")
	if err != nil {
		t.Skipf("cannot make a folder in /run (root only): %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	app, other := filepath.Join(dir, "app.sock"), filepath.Join(dir, "other.sock")
	unixServer(t, app, "app")
	unixServer(t, other, "other")
	skill := newSkill(t, map[string]string{"unix.py": unixScript})
	o := runIn(t, Sandbox{AllowUnix: []string{app}}, skill, "unix.py", app, other, "/run/dbus/system_bus_socket")
	if o.err != nil {
		t.Fatalf("run: %v\n%s", o.err, o.stderr)
	}
	if !strings.Contains(o.stdout, "granted: hello from app") || strings.Contains(o.stdout, "REACHED") || strings.Count(o.stdout, "blocked") != 3 {
		t.Errorf("stdout:\n%s%s", o.stdout, o.stderr)
	}
}

// TestAllowUnixConfig: AllowUnix entries that are not sockets, relative,
// under a tree never granted, or without the mount namespace are refused
// before the run starts.
func TestAllowUnixConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	sock := filepath.Join(dir, "s.sock")
	unixServer(t, sock, "s")
	link := filepath.Join(dir, "link.sock")
	os.Symlink(sock, link)
	// A link among the folders leading to the socket: the run would see
	// a link there, and the checks below would judge the link's path,
	// not the socket's (a link to /proc passed the /proc check).
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	unixServer(t, filepath.Join(dir, "real", "r.sock"), "r")
	os.Symlink("real", filepath.Join(dir, "linkdir"))
	os.Symlink("/proc", filepath.Join(dir, "proc"))
	skill := newSkill(t, map[string]string{"true.sh": "#!/bin/sh\n"})
	for _, c := range []struct {
		name string
		sb   Sandbox
	}{
		{"regular file", Sandbox{AllowUnix: []string{file}}},
		{"missing", Sandbox{AllowUnix: []string{filepath.Join(dir, "none")}}},
		{"relative", Sandbox{AllowUnix: []string{"s.sock"}}},
		{"unclean", Sandbox{AllowUnix: []string{dir + "/./s.sock"}}},
		{"symlink", Sandbox{AllowUnix: []string{link}}},
		{"symlinked folder", Sandbox{AllowUnix: []string{filepath.Join(dir, "linkdir", "r.sock")}}},
		{"through a link to /proc", Sandbox{AllowUnix: []string{filepath.Join(dir, "proc", "self", "root") + sock}}},
		{"under /dev", Sandbox{AllowUnix: []string{"/dev/log"}}},
		{"under /proc", Sandbox{AllowUnix: []string{"/proc/1/x.sock"}}},
		{"twice", Sandbox{AllowUnix: []string{sock, sock}}},
		{"no mount namespace", Sandbox{AllowUnix: []string{sock}, Disable: []Layer{LayerMountNS}}},
	} {
		o := runIn(t, c.sb, skill, "true.sh")
		if !errors.Is(o.err, ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig", c.name, o.err)
		}
	}
}

// TestAllowUnixHostControlWarns: granting a container runtime's socket
// (here a server at a path named docker.sock) grants the host; the run
// goes ahead, as asked, and says so on Warnings. Another socket does not.
func TestAllowUnixHostControlWarns(t *testing.T) {
	dir := t.TempDir()
	docker := filepath.Join(dir, "docker.sock")
	unixServer(t, docker, "docker")
	app := filepath.Join(dir, "app.sock")
	unixServer(t, app, "app")
	skill := newSkill(t, map[string]string{"true.sh": "#!/bin/sh\n"})
	for _, c := range []struct {
		sock string
		warn bool
	}{{docker, true}, {app, false}} {
		var warn strings.Builder
		o := runIn(t, Sandbox{AllowUnix: []string{c.sock}, Warnings: &warn}, skill, "true.sh")
		if o.err != nil {
			t.Fatalf("%s: %v", c.sock, o.err)
		}
		if got := strings.Contains(warn.String(), "AllowUnix "+c.sock+": the socket of a container runtime"); got != c.warn {
			t.Errorf("%s: warned %v, want %v: %q", c.sock, got, c.warn, warn.String())
		}
	}
}
