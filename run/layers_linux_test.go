package run

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// attack is one probe that a single layer must stop. The probe is run three
// times: with the layer (and `also`) disabled it must succeed, proving the
// attack is real and this layer is what stands in its way; with only `also`
// disabled and with the full sandbox it must fail. `also` switches off
// layers that would stop the attack as well, so that the layer under test
// is the decisive one.
type attack struct {
	layer  Layer
	name   string
	also   []Layer
	sb     Sandbox
	script string
	// setup prepares the host side (a listener, a file, a process) and
	// returns the script's arguments and a check that reports whether the
	// attack worked, given the run's outcome.
	setup    func(t *testing.T) (args []string, worked func(o outcome) bool)
	rootOnly string // reason, when the attack needs the tests to run as root
}

// printed returns a check that looks for marker in the script's stdout.
func printed(marker string) func(t *testing.T) ([]string, func(o outcome) bool) {
	return func(*testing.T) ([]string, func(o outcome) bool) {
		return nil, func(o outcome) bool { return strings.Contains(o.stdout, marker) }
	}
}

func attacks() []attack {
	return []attack{
		{
			layer: LayerLandlockFS, name: "read /etc/passwd",
			also:   []Layer{LayerMountNS}, // which masks passwd too
			script: "print(open('/etc/passwd').read())\n",
			setup:  printed("root:"),
		},
		{
			layer: LayerLandlockFS, name: "write outside the work folder",
			also: []Layer{LayerMountNS},
			script: `import sys
open(sys.argv[1], "w").write("pwned")
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				dir := worldWritableDir(t)
				target := filepath.Join(dir, "planted")
				return []string{target}, func(outcome) bool {
					b, _ := os.ReadFile(target)
					return string(b) == "pwned"
				}
			},
		},
		{
			// In the private network namespace a listener is the
			// script's own business (its loopback is up for local
			// servers); on the host's network it is an open port.
			layer: LayerLandlockNet, name: "listen on a host TCP port",
			also: []Layer{LayerNetNS},
			script: `import os, socket
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen()
print("listening in", os.readlink("/proc/self/ns/net"))
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				host, err := os.Readlink("/proc/self/ns/net")
				if err != nil {
					t.Fatal(err)
				}
				return nil, func(o outcome) bool { return strings.Contains(o.stdout, "listening in "+host) }
			},
		},
		{
			layer: LayerNetNS, name: "connect to a host listener on 127.0.0.1",
			also:   []Layer{LayerLandlockNet},
			script: connectScript,
			setup:  hostListener,
		},
		{
			layer: LayerPIDNS, name: "see a host process",
			script: `import os, sys
print("visible" if os.path.exists("/proc/" + sys.argv[1]) else "hidden")
`,
			setup: func(*testing.T) ([]string, func(outcome) bool) {
				return []string{strconv.Itoa(os.Getpid())}, func(o outcome) bool { return strings.Contains(o.stdout, "visible") }
			},
		},
		{
			layer: LayerMountNS, name: "read a file in the host's /tmp",
			also: []Layer{LayerLandlockFS},
			script: `import sys
print(open(sys.argv[1]).read())
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				f, err := os.CreateTemp("/tmp", "skill-sandbox-host-secret-")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.Remove(f.Name()) })
				f.WriteString("host-tmp-secret")
				f.Chmod(0o644)
				f.Close()
				return []string{f.Name()}, func(o outcome) bool { return strings.Contains(o.stdout, "host-tmp-secret") }
			},
		},
		{
			// Without the mount namespace seccomp refuses AF_UNIX sockets.
			layer: LayerMountNS, name: "connect to a host unix socket outside the work folder",
			also:   []Layer{LayerSeccomp},
			script: hostUnixConnectScript,
			setup:  hostPathSocket,
		},
		{
			layer: LayerUTSNS, name: "read the host name",
			script: "import socket\nprint('hostname=' + socket.gethostname())\n",
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				host, err := os.Hostname()
				if err != nil || host == stageconfig.SandboxHostname {
					t.Skipf("host name %q cannot be told apart", host)
				}
				return nil, func(o outcome) bool { return strings.Contains(o.stdout, "hostname="+host+"\n") }
			},
		},
		{
			// Without the IPC namespace seccomp refuses the IPC calls.
			layer: LayerIPCNS, name: "attach a host SysV shared memory segment",
			also:   []Layer{LayerSeccomp},
			script: hostShmScript,
			setup:  hostSharedMemory,
		},
		{
			layer: LayerSeccomp, name: "unshare a new user namespace",
			script: `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.unshare(0x10000000)
print("unshared" if r == 0 else "refused, errno %d" % ctypes.get_errno())
`,
			setup: printed("unshared"),
		},
		{
			layer: LayerSeccomp, name: "ptrace a process",
			script: `import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(10)
    os._exit(0)
r = libc.ptrace(16, pid, 0, 0)  # PTRACE_ATTACH
print("attached" if r == 0 else "refused, errno %d" % ctypes.get_errno())
os.kill(pid, 9)
`,
			setup: printed("attached"),
		},
		{
			layer: LayerCaps, name: "ignore file permissions as namespace root",
			sb: Sandbox{UseWorkDir: true},
			script: `import os
open("locked", "w").write("secret")
os.chmod("locked", 0)
try:
    print("read " + open("locked").read())
except OSError as e:
    print("denied", e)
`,
			setup: printed("read secret"),
		},
		{
			layer: LayerNoNewPrivs, name: "gain root through a setuid binary",
			also:   []Layer{LayerUserNS},
			script: "import subprocess\nprint(subprocess.run(['./suid-id'], capture_output=True, text=True).stdout)\n",
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				return nil, func(o outcome) bool { return strings.Contains(o.stdout, "euid=0") }
			},
			rootOnly: "planting a setuid-root binary needs root",
		},
		{
			// The cgroup's memory limit would stop it too, and without
			// the cgroup the watch.
			layer: LayerRlimits, name: "allocate 1 GiB",
			also:   []Layer{LayerCgroup, LayerWatch},
			sb:     Sandbox{MemoryMB: 256},
			script: "b = bytearray(1 << 30)\nprint('allocated')\n",
			setup:  printed("allocated"),
		},
		{
			// PID 1 is the run's init process: with RLIMIT_CPU lowered, the
			// kernel would kill it and the run with it. Its threads have
			// pids of their own, and prlimit64 on any of them sets the
			// whole process's limits.
			layer: LayerSeccomp, name: "lower the reaper's limits",
			script: `import os, resource
for tid in sorted(os.listdir("/proc/1/task"), key=int, reverse=True):
    try:
        resource.prlimit(int(tid), resource.RLIMIT_CPU, (1, 1))
        print("lowered through", tid, resource.prlimit(1, resource.RLIMIT_CPU))
    except OSError as e:
        print(tid, e)
`,
			setup: printed("lowered through"),
		},
		{
			layer: LayerLandlockScope, name: "signal a host process",
			also:   []Layer{LayerPIDNS},
			script: "import os, sys, signal\nos.kill(int(sys.argv[1]), signal.SIGKILL)\nprint('sent')\n",
			setup:  hostVictim,
		},
		{
			layer: LayerLandlockScope, name: "connect to a host abstract unix socket",
			also:   []Layer{LayerNetNS},
			script: "import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0' + sys.argv[1])\ns.sendall(b'hello')\nprint('connected')\n",
			setup:  hostAbstractSocket,
		},
	}
}

const hostUnixConnectScript = `import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"hello")
print("connected")
`

const hostShmScript = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
shmid = libc.shmget(int(sys.argv[1]), 0, 0)
print("attached" if shmid >= 0 else "not found, errno %d" % ctypes.get_errno())
`

const connectScript = `import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)
s.sendall(b"hello")
print("connected")
`

func TestLayerAttacks(t *testing.T) {
	fullIsolation(t)
	for _, a := range append(attacks(), degradedAttacks()...) {
		t.Run(string(a.layer)+"/"+a.name, func(t *testing.T) { runAttack(t, a) })
	}
}

// runAttack runs a three ways (see attack) and fails t unless the attack
// works without its layer and fails with it.
func runAttack(t *testing.T, a attack) {
	t.Helper()
	if a.rootOnly != "" && os.Geteuid() != 0 {
		t.Skip(a.rootOnly)
	}
	scripts := map[string]string{"attack.py": a.script}
	dir := newSkill(t, scripts)
	if a.layer == LayerNoNewPrivs {
		plantSetuidID(t, dir)
	}
	try := func(disable []Layer) (outcome, bool) {
		args, worked := a.setup(t)
		sb := a.sb
		sb.Disable = disable
		o := runIn(t, sb, dir, "attack.py", args...)
		if o.err != nil {
			t.Fatalf("run with %v disabled: %v", disable, o.err)
		}
		return o, worked(o)
	}
	without := append(append([]Layer{}, a.also...), a.layer)
	if o, ok := try(without); !ok {
		if refused(o) {
			// The host (its kernel, sysctls or another layer it always
			// has) stops the attack by itself: this host cannot show what
			// the layer adds. Anything else is a broken attack.
			t.Skipf("the host refuses this attack even with %v disabled, so it cannot show what %s adds here: %s", without, a.layer, lastLine(o.stderr))
		}
		t.Fatalf("the attack failed even with %v disabled, so it shows nothing: exit %d stdout %q stderr %q", without, o.res.ExitCode, o.stdout, o.stderr)
	}
	if o, ok := try(a.also); ok {
		t.Errorf("the attack worked with %s in place (disabled: %v): stdout %q", a.layer, a.also, o.stdout)
	}
	if len(a.also) > 0 {
		if o, ok := try(nil); ok {
			t.Errorf("the attack worked against the full sandbox: stdout %q", o.stdout)
		}
	}
}

// refused reports whether a run's failure is the kernel's refusal of an
// operation (EPERM or EACCES, as Python, the shell and coreutils word
// them), not a crash or a mistake in the attack.
func refused(o outcome) bool {
	for _, s := range []string{"PermissionError", "Operation not permitted", "Permission denied", "[Errno 1]", "[Errno 13]"} {
		if strings.Contains(o.stderr, s) || strings.Contains(o.stdout, s) {
			return true
		}
	}
	return false
}

func TestNoNewPrivsFlag(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"status.py": "print(open('/proc/self/status').read())\n"})
	for _, c := range []struct {
		disable []Layer
		want    string
	}{{nil, "NoNewPrivs:\t1"}, {[]Layer{LayerNoNewPrivs, LayerLandlockFS, LayerLandlockNet, LayerLandlockScope, LayerSeccomp}, "NoNewPrivs:\t0"}} {
		o := runIn(t, Sandbox{Disable: c.disable}, dir, "status.py")
		if o.err != nil || !strings.Contains(o.stdout, c.want) {
			t.Errorf("disabled %v: err %v, status lacks %q:\n%s", c.disable, o.err, c.want, o.stdout)
		}
	}
}

// worldWritableDir returns a host folder outside the sandbox that the
// sandbox identity could write to if nothing stopped it.
func worldWritableDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "skill-sandbox-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	return dir
}

// hostListener accepts one connection on the host's loopback.
func hostListener(t *testing.T) ([]string, func(outcome) bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	return []string{strconv.Itoa(port)}, acceptOnce(ln)
}

// hostSharedMemory creates a SysV segment in the host's IPC namespace.
func hostSharedMemory(t *testing.T) ([]string, func(outcome) bool) {
	key := int(time.Now().UnixNano()&0x3fffffff) | 1
	id, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Skipf("cannot create a SysV shared memory segment: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(id, unix.IPC_RMID, nil) })
	return []string{strconv.Itoa(key)}, func(o outcome) bool { return strings.Contains(o.stdout, "attached") }
}

// hostVictim starts a host process the sandbox identity may signal (same
// uid) and reports whether it was killed.
func hostVictim(t *testing.T) ([]string, func(outcome) bool) {
	cmd := exec.Command("/bin/sleep", "60")
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan *os.ProcessState, 1)
	go func() { cmd.Wait(); exited <- cmd.ProcessState }()
	t.Cleanup(func() { cmd.Process.Kill() })
	return []string{strconv.Itoa(cmd.Process.Pid)}, func(outcome) bool {
		select {
		case st := <-exited:
			ws, _ := st.Sys().(syscall.WaitStatus)
			return ws.Signaled() && ws.Signal() == syscall.SIGKILL
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
}

// hostAbstractSocket listens on an abstract unix socket of the host's
// network namespace.
func hostAbstractSocket(t *testing.T) ([]string, func(outcome) bool) {
	name := fmt.Sprintf("skill-sandbox-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Skipf("abstract unix sockets unavailable: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return []string{name}, acceptOnce(ln)
}

// plantSetuidID puts a setuid-root copy of id(1) in the skill's scripts/.
func plantSetuidID(t *testing.T, dir string) {
	src, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Skipf("no /usr/bin/id to copy: %v", err)
	}
	dst := filepath.Join(dir, "scripts", "suid-id")
	if err := os.WriteFile(dst, src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(dst, 0o4755); err != nil { // os.Chmod would drop the setuid bit
		t.Fatal(err)
	}
	var st unix.Statfs_t
	if unix.Statfs(dst, &st) == nil && st.Flags&unix.ST_NOSUID != 0 {
		t.Skip("the temporary folder is mounted nosuid")
	}
}

func TestAllowNetwork(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"attack.py": connectScript})
	args, worked := hostListener(t)
	o := runIn(t, Sandbox{AllowNetwork: true}, dir, "attack.py", args...)
	if o.err != nil || !worked(o) {
		t.Fatalf("with AllowNetwork the host listener was not reached: err %v stdout %q stderr %q", o.err, o.stdout, o.stderr)
	}
	for _, l := range []Layer{LayerNetNS, LayerLandlockNet} {
		if stageconfig.Has(o.res.Applied, l) {
			t.Errorf("%s applied although the network is allowed", l)
		}
		for _, m := range o.res.Missing {
			if m.Layer == l {
				t.Errorf("%s reported missing although it is omitted on purpose", l)
			}
		}
	}
}

func TestSkillUnreadableBySandbox(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller runs the sandbox as another identity")
	}
	dir := newSkill(t, map[string]string{"ok.py": "print(1)\n"})
	os.Chmod(filepath.Dir(dir), 0o700)
	// With a mount namespace the supervisor hands the folder over (see
	// TestPrivateFolders); without one the identity must reach it.
	o := runIn(t, Sandbox{Disable: []Layer{LayerMountNS}}, dir, "ok.py")
	if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), "not readable by uid ") || !strings.Contains(o.err.Error(), sandboxIDWords()) {
		t.Fatalf("err %v, want ErrBadConfig naming the sandbox uid", o.err)
	}
}

func TestSeccompFilterDetails(t *testing.T) {
	fullIsolation(t)
	// Each line prints "name errno"; errno 0 means the call was allowed.
	dir := newSkill(t, map[string]string{"calls.py": `import ctypes, errno, fcntl, termios, os
libc = ctypes.CDLL(None, use_errno=True)
def report(name, r):
    print(name, 0 if r >= 0 else ctypes.get_errno())
try:
    fcntl.ioctl(0, termios.TIOCSTI, b"x")
    print("tiocsti", 0)
except OSError as e:
    print("tiocsti", e.errno)
report("personality-query", libc.personality(0xffffffff))
report("personality-norandom", libc.personality(0x0040000))
report("clone3", libc.syscall(435, 0, 0))
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("fork", 0)
import resource
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))
print("setrlimit-self", 0)
report("prlimit-self-pid0", libc.prlimit(0, 7, None, ctypes.byref((ctypes.c_ulong * 2)())))
report("prlimit-read-pid1", libc.prlimit(1, 7, None, ctypes.byref((ctypes.c_ulong * 2)())))
lim = (ctypes.c_ulong * 2)(soft - 2, hard)
report("prlimit-set-own-pid", libc.prlimit(os.getpid(), 7, ctypes.byref(lim), None))
report("ptrace-traceme-high-word", libc.syscall(101 if os.uname().machine == "x86_64" else 117, ctypes.c_long(1 << 32), 0, 0, 0))
`})
	want := map[string]int{
		"tiocsti":              int(unix.EPERM), // ENOTTY without the filter: stdin is /dev/null
		"personality-query":    0,
		"personality-norandom": int(unix.EPERM),
		"clone3":               int(unix.ENOSYS), // EFAULT/EINVAL without the filter
		"fork":                 0,
		// Limits: a process may change its own (setrlimit, prlimit with
		// pid 0) and read anyone's, but not set another's, not even
		// through its own pid.
		"setrlimit-self":      0,
		"prlimit-self-pid0":   0,
		"prlimit-read-pid1":   0,
		"prlimit-set-own-pid": int(unix.EPERM),
		// PTRACE_TRACEME with a non-zero high word is not TRACEME.
		"ptrace-traceme-high-word": int(unix.EPERM),
	}
	o := runIn(t, Sandbox{}, dir, "calls.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
	}
	got := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(o.stdout), "\n") {
		var name string
		var n int
		fmt.Sscan(line, &name, &n)
		got[name] = n
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: errno %d, want %d", name, got[name], w)
		}
	}
	// The same calls without the filter behave differently, so the
	// expectations above are the filter's doing.
	o = runIn(t, Sandbox{Disable: []Layer{LayerSeccomp}}, dir, "calls.py")
	if strings.Contains(o.stdout, fmt.Sprintf("tiocsti %d\n", unix.EPERM)) || strings.Contains(o.stdout, fmt.Sprintf("clone3 %d\n", unix.ENOSYS)) {
		t.Errorf("without seccomp the calls still fail as with it: %q", o.stdout)
	}
}

// hostPathSocket listens on a pathname unix socket in a host folder that
// the sandbox identity may reach by file permissions. Landlock (ABI <= 7)
// has no right for connect(2) to such a socket: only the mount namespace,
// which masks the folder, stands in the way.
func hostPathSocket(t *testing.T) ([]string, func(outcome) bool) {
	dir := worldWritableDir(t)
	path := filepath.Join(dir, "host.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("unix sockets unavailable: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	os.Chmod(path, 0o777)
	return []string{path}, acceptOnce(ln)
}

// acceptOnce accepts one connection on ln in the background; the returned
// check closes ln and reports whether "hello" arrived.
func acceptOnce(ln net.Listener) func(outcome) bool {
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		b, _ := io.ReadAll(c)
		got <- string(b)
	}()
	return func(outcome) bool {
		ln.Close()
		select {
		case s := <-got:
			return s == "hello"
		case <-time.After(100 * time.Millisecond):
			return false
		}
	}
}
