package run

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestLoopbackInsideNetNS: the script can run a local server and talk to
// it on 127.0.0.1 (the namespace's loopback is up), while a listener on the
// host's loopback stays out of reach.
func TestLoopbackInsideNetNS(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{
		"local.py": `import socket, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(4).upper())
threading.Thread(target=serve).start()
c = socket.create_connection(("127.0.0.1", port), timeout=5)
c.sendall(b"ping")
print("reply", c.recv(4).decode())
`,
		"attack.py": connectScript,
	})
	o := runIn(t, Sandbox{}, dir, "local.py")
	if o.err != nil || !strings.Contains(o.stdout, "reply PING") {
		t.Fatalf("loopback server: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	if !stageconfig.Has(o.res.Applied, LayerNetNS) {
		t.Fatalf("netns not applied: %v", o.res.Missing)
	}
	args, worked := hostListener(t)
	if o := runIn(t, Sandbox{}, dir, "attack.py", args...); worked(o) {
		t.Errorf("the host's loopback listener was reached: stdout %q", o.stdout)
	}
}

// TestLocalhostInsideNetNS: the name "localhost" resolves to the run's own
// loopback (a local server tested as http://localhost:PORT, as webapp
// tests do), with Landlock on and off, while the sandbox's /etc/hosts
// names nothing of the host's (its host name).
func TestLocalhostInsideNetNS(t *testing.T) {
	fullIsolation(t)
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir := newSkill(t, map[string]string{
		"local.py": `import socket, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
def serve():
    c, _ = srv.accept()
    c.sendall(c.recv(4).upper())
threading.Thread(target=serve, daemon=True).start()
c = socket.create_connection(("localhost", srv.getsockname()[1]), timeout=5)
c.sendall(b"ping")
print("reply", c.recv(4).decode())
hosts = open("/etc/hosts").read().split()
print("host name listed" if sys.argv[1] in hosts else "host name absent")
`,
	})
	for _, disable := range [][]Layer{nil, {LayerLandlockFS}} {
		o := runIn(t, Sandbox{Disable: disable}, dir, "local.py", host)
		if o.err != nil || !strings.Contains(o.stdout, "reply PING\n") || !strings.Contains(o.stdout, "host name absent\n") {
			t.Errorf("disabled %v: err %v stdout %q stderr %q", disable, o.err, o.stdout, o.stderr)
		}
	}
}

// TestPrivateTmp: /tmp is writable by name, private to the run, and shares
// the work folder's size cap.
func TestPrivateTmp(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{
		"tmp.sh": `echo data > /tmp/by-name.txt && cat /tmp/by-name.txt
ls -d "$TMPDIR" >/dev/null && echo tmpdir-ok
head -c 5000000 /dev/zero > /tmp/a && echo a-written
if head -c 5000000 /dev/zero > "$TMPDIR/b" 2>/dev/null; then echo b-written; else echo b-full; fi
`,
	})
	o := runIn(t, Sandbox{WorkDirMB: 8}, dir, "tmp.sh")
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, want := range []string{"data\n", "tmpdir-ok\n", "a-written\n", "b-full\n"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s\nstderr: %s", want, o.stdout, o.stderr)
		}
	}
	if _, err := os.Stat("/tmp/by-name.txt"); err == nil {
		t.Errorf("the script's /tmp file appeared in the host's /tmp")
	}
}

// TestStdioByName: the shell idioms that reopen the output by name work.
func TestStdioByName(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{
		"stdio.sh": `echo e1 > /dev/stderr
echo o1 > /dev/stdout
echo o2 > /proc/self/fd/1
echo e2 >> /dev/fd/2
`,
	})
	o := runIn(t, Sandbox{}, dir, "stdio.sh")
	if o.err != nil || o.res.ExitCode != 0 || o.stdout != "o1\no2\n" || o.stderr != "e1\ne2\n" {
		t.Errorf("exit %d err %v stdout %q stderr %q", o.res.ExitCode, o.err, o.stdout, o.stderr)
	}
}

// TestEtcLayout: what programs need of /etc is readable, its secrets are
// not (refused, or masked: an empty file or folder), by the mount layout
// alone, by Landlock alone and by both.
func TestEtcLayout(t *testing.T) {
	fullIsolation(t)
	var readable []string
	for _, p := range []string{"/etc/ld.so.cache", "/etc/ssl/certs", "/etc/fonts", "/etc/alternatives", "/etc/mime.types"} {
		if _, err := os.Stat(p); err == nil {
			readable = append(readable, p)
		}
	}
	var secret []string
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/sudoers", "/etc/ssl/private", "/etc/ssh", "/etc/hostname", "/etc/machine-id"} {
		if _, err := os.Stat(p); err == nil {
			secret = append(secret, p)
		}
	}
	dir := newSkill(t, map[string]string{
		"etc.py": `import os, sys
for p in sys.argv[1:]:
    try:
        if os.path.isdir(p):
            n = len(os.listdir(p))
        else:
            n = len(open(p, "rb").read(1))
        print("READ" if n else "EMPTY", p)
    except OSError as e:
        print("DENIED", p, e.strerror)
`,
	})
	args := append(append([]string{}, readable...), secret...)
	for _, disable := range [][]Layer{nil, {LayerLandlockFS}, {LayerMountNS}} {
		o := runIn(t, Sandbox{Disable: disable}, dir, "etc.py", args...)
		if o.err != nil {
			t.Fatal(o.err)
		}
		for _, p := range readable {
			if !strings.Contains(o.stdout, "READ "+p+"\n") {
				t.Errorf("disabled %v: %s not readable:\n%s", disable, p, o.stdout)
			}
		}
		for _, p := range secret {
			if strings.Contains(o.stdout, "READ "+p+"\n") {
				t.Errorf("disabled %v: %s readable", disable, p)
			}
		}
	}
}

// TestModule: with Module, a skill written as a package runs as
// "python3 -m scripts.NAME" from the skill folder, its modules importing
// each other, also when it runs in a Cwd grant or the work folder; names
// outside scripts/ are refused.
func TestModule(t *testing.T) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{
		"__init__.py":      "",
		"utils.py":         "def hello():\n    return 'hello from utils'\n",
		"package_skill.py": "import sys\nfrom scripts.utils import hello\nprint(hello(), sys.argv[1:])\n",
	})
	if err := os.Mkdir(filepath.Join(dir, "scripts", "tool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "tool", "__main__.py"), []byte("print('package main')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, Sandbox{Module: true}, dir, "scripts.package_skill", "a")
	if o.err != nil || o.stdout != "hello from utils ['a']\n" {
		t.Fatalf("err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	if o.res.Script != "scripts/package_skill.py" || len(o.res.Interpreter) != 3 || o.res.Interpreter[1] != "-m" {
		t.Errorf("Script %q Interpreter %q", o.res.Script, o.res.Interpreter)
	}
	if o := runIn(t, Sandbox{Module: true}, dir, "scripts.tool"); o.err != nil || o.stdout != "package main\n" {
		t.Errorf("package: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	// In a Cwd grant (where the documented "python -m scripts.package_skill
	// SKILL" leaves its output) the module is still the skill's, not that
	// of a scripts/ package in the working folder, and relative paths are
	// the folder's.
	out := callerFolder(t)
	if err := os.MkdirAll(filepath.Join(out, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"__init__.py": "", "utils.py": "def hello():\n    return 'the folder'\n"} {
		if err := os.WriteFile(filepath.Join(out, "scripts", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "write_here.py"), []byte(`import os, sys
from scripts.utils import hello
open("made.txt", "w").write(hello() + " " + os.path.basename(sys.argv[0]) + " " + __name__ + " " + " ".join(sys.argv[1:]))
print(os.getcwd())
`), 0o644); err != nil {
		t.Fatal(err)
	}
	o = runIn(t, Sandbox{Module: true, WritePaths: []string{out}, Cwd: out}, dir, "scripts.write_here", "a", "b")
	if o.err != nil || o.res.ExitCode != 0 || o.stdout != out+"\n" {
		t.Fatalf("Cwd: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "made.txt")); err != nil || string(b) != "hello from utils write_here.py __main__ a b" {
		t.Errorf("Cwd: made.txt %q, %v", b, err)
	}
	checkOwnedByCaller(t, out)
	if o := runIn(t, Sandbox{Module: true, UseWorkDir: true}, dir, "scripts.package_skill", "w"); o.err != nil || o.stdout != "hello from utils ['w']\n" {
		t.Errorf("work folder: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	// Without Module the same file cannot import its sibling package.
	if o := runIn(t, Sandbox{}, dir, "package_skill.py"); o.res.ExitCode == 0 {
		t.Errorf("ran as a plain script: stdout %q", o.stdout)
	}
	for _, bad := range []string{"os", "scripts", "scripts..x", "scripts.missing", "../x", "scripts.1x"} {
		if o := runIn(t, Sandbox{Module: true}, dir, bad); !errors.Is(o.err, ErrBadScript) {
			t.Errorf("module %q: err %v, want ErrBadScript", bad, o.err)
		}
	}
}

// TestNodeFromBash: node started by a bash script (not as the interpreter)
// gets no allowance of its own without a cgroup; the documented way,
// MemoryMB 1536, lets V8 start, and under a cgroup memory limit the
// default does.
func TestNodeFromBash(t *testing.T) {
	needTool(t, "node")
	dir := newSkill(t, map[string]string{"run.sh": "node -e 'console.log(\"node ok\", 6*7)'\n"})
	o := runIn(t, Sandbox{MemoryMB: 1536}, dir, "run.sh")
	if o.err != nil || o.stdout != "node ok 42\n" {
		t.Errorf("err %v exit %d stdout %q stderr %q", o.err, o.res.ExitCode, o.stdout, lastLine(o.stderr))
	}
	// Under a cgroup memory limit RLIMIT_AS is relaxed for the whole
	// tree, so the default works too.
	o = runIn(t, Sandbox{}, dir, "run.sh")
	if !stageconfig.Has(o.res.Applied, LayerCgroup) {
		t.Skip("no cgroup memory limit here: default memory not checked")
	}
	if o.err != nil || o.stdout != "node ok 42\n" {
		t.Errorf("default memory under the cgroup: err %v exit %d stdout %q stderr %q", o.err, o.res.ExitCode, o.stdout, lastLine(o.stderr))
	}
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
