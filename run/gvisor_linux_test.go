package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needRunsc skips the test where runsc is missing, except under CI=true,
// where it must be there (.ci/run installs it).
func needRunsc(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
}

// gvisorSkill makes a skill whose scripts/k.sh is body, in a folder the
// run's identity can reach by path.
func gvisorSkill(t testing.TB, body string) string {
	t.Helper()
	dir := t.TempDir()
	skill := filepath.Join(dir, "probe")
	if err := os.MkdirAll(filepath.Join(skill, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: probe\ndescription: Probes the kernel a script meets under the gvisor backend.\n---\nProbe.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skill, "scripts", "k.sh"), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(dir), dir} {
		os.Chmod(d, 0o755)
	}
	return skill
}

func TestGVisorExampleSameAsNative(t *testing.T) {
	needRunsc(t)
	skill, _ := filepath.Abs("../testdata/example/word-stats")
	sample := filepath.Join(skill, "references", "sample.txt")
	var outs [2]string
	for i, b := range []string{BackendNative, BackendGVisor} {
		res, err := (&Sandbox{SkillDir: skill, Backend: b}).Run(context.Background(), "scripts/stats.py", []string{sample})
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		res.WaitCleanup()
		if res.ExitCode != 0 || res.Backend != b {
			t.Fatalf("%s: exit %d, backend %q, stderr %q", b, res.ExitCode, res.Backend, res.Stderr.Captured)
		}
		outs[i] = string(res.Stdout.Captured)
	}
	if outs[0] != outs[1] || !strings.Contains(outs[1], `"words": 77`) {
		t.Fatalf("native %q, gvisor %q", outs[0], outs[1])
	}
}

func TestGVisorKernelSurface(t *testing.T) {
	needRunsc(t)
	var host syscall.Utsname
	syscall.Uname(&host)
	hostRelease := string(bytes.TrimRight(bytesOf(host.Release[:]), "\x00"))
	skill := gvisorSkill(t, "uname -r\ndmesg 2>&1 | head -1\ncat /proc/version\n")
	for _, b := range []string{BackendNative, BackendGVisor} {
		res, err := (&Sandbox{SkillDir: skill, Backend: b}).Run(context.Background(), "scripts/k.sh", nil)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		res.WaitCleanup()
		out := string(res.Stdout.Captured)
		release, _, _ := strings.Cut(out, "\n")
		gvisor := release != hostRelease && strings.Contains(out, "Starting gVisor")
		if gvisor != (b == BackendGVisor) {
			t.Errorf("%s: the script met the kernel %q (host %q), output %q", b, release, hostRelease, out)
		}
	}
}

// bytesOf turns a Utsname field into bytes: int8 on most architectures,
// uint8 on some (riscv64, s390x, ppc64).
func bytesOf[T int8 | uint8](f []T) []byte {
	b := make([]byte, len(f))
	for i, c := range f {
		b[i] = byte(c)
	}
	return b
}

func TestGVisorTimeoutLeavesNothing(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, "sleep 60 & sleep 60\n")
	sb := &Sandbox{SkillDir: skill, Backend: BackendGVisor, Timeout: 2 * time.Second, RequestID: "gvisortimeout" + filepath.Base(t.TempDir())}
	res, err := sb.Run(context.Background(), "scripts/k.sh", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != "SIGKILL" || res.ExitCode != -1 {
		t.Fatalf("timed out %v, signal %q, exit %d", res.TimedOut, res.Signal, res.ExitCode)
	}
	if left := processesNaming(t, containerIDOf(sb.RequestID)); len(left) > 0 {
		t.Fatalf("processes outlived the run: %q", left)
	}
}

// containerIDOf is the runsc container id of a request id (gvisor's
// containerID), for finding its processes.
func containerIDOf(requestID string) string { return "ss-" + requestID }

// processesNaming lists the command lines that contain s.
func processesNaming(t *testing.T, s string) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	return out
}

func TestGVisorWriteGrant(t *testing.T) {
	needRunsc(t)
	skill := gvisorSkill(t, "echo made > \"$1/out.txt\"\necho x > /etc/skill-sandbox-gvisor 2>/dev/null && echo WROTE-ETC\nexit 0\n")
	out := filepath.Join(t.TempDir(), "out")
	os.Chmod(filepath.Dir(out), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(out)), 0o755)
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	owner := os.Geteuid()
	res, err := (&Sandbox{SkillDir: skill, Backend: BackendGVisor, WritePaths: []string{out}}).Run(context.Background(), "scripts/k.sh", []string{out})
	if owner == 0 {
		// A root caller's write folder of root's is id-mapped natively,
		// which runsc cannot take: refused with the fix, fail closed
		// (TestGVisorRootGrantsRefused).
		if !errors.Is(err, ErrBadConfig) || res.Started {
			t.Fatalf("root caller: started %v, err %v; want ErrBadConfig", res.Started, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || strings.Contains(string(res.Stdout.Captured), "WROTE-ETC") {
		t.Fatalf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout.Captured, res.Stderr.Captured)
	}
	fi, err := os.Stat(filepath.Join(out, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if uid := int(fi.Sys().(*syscall.Stat_t).Uid); uid != owner {
		t.Fatalf("out.txt belongs to uid %d, want %d", uid, owner)
	}
}

func BenchmarkGVisorStartTrue(b *testing.B) {
	needRunsc(b)
	skill := gvisorSkill(b, "exec /bin/true\n")
	// Each backend without network and with a host allowlist (the
	// filtering proxy; under gVisor also the relay).
	for _, c := range []struct {
		name    string
		backend string
		hosts   []string
	}{
		{BackendNative, BackendNative, nil},
		{BackendGVisor, BackendGVisor, nil},
		{BackendNative + "-allowlist", BackendNative, []string{"example.com"}},
		{BackendGVisor + "-allowlist", BackendGVisor, []string{"example.com"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := (&Sandbox{SkillDir: skill, Backend: c.backend, AllowHosts: c.hosts}).Run(context.Background(), "scripts/k.sh", nil)
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res.ExitCode)
				}
				res.WaitCleanup()
			}
		})
	}
}

// syscallProbe calls system calls the native backend's seccomp filter
// denies (EPERM) and prints each one's errno; x86_64 numbers.
const syscallProbe = `import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
for name, nr in [("userfaultfd", 323), ("perf_event_open", 298)]:
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "ok")
`

func TestGVisorKernelSyscalls(t *testing.T) {
	needRunsc(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe's system call numbers are x86_64's")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 for the probe")
	}
	skill := gvisorSkill(t, "exec /usr/bin/python3 -c '"+syscallProbe+"'\n")
	// The native backend's seccomp filter answers EPERM; under gVisor the
	// same filter, which gVisor's kernel loads (runsc --oci-seccomp),
	// answers before that kernel would (ENOSYS, ENODEV).
	want := map[string]string{
		BackendNative: "userfaultfd EPERM\nperf_event_open EPERM\n",
		BackendGVisor: "userfaultfd EPERM\nperf_event_open EPERM\n",
	}
	for b, w := range want {
		res, err := (&Sandbox{SkillDir: skill, Backend: b}).Run(context.Background(), "scripts/k.sh", nil)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		res.WaitCleanup()
		if got := string(res.Stdout.Captured); got != w {
			t.Errorf("%s: %q (stderr %q), want %q", b, got, res.Stderr.Captured, w)
		}
	}
}

// hardeningProbe tries what the gvisor backend let through before it
// took the native backend's /etc view and seccomp filter: the host's
// accounts and name, ptrace of its own child, new namespaces, and raw,
// packet and ICMP datagram sockets. Each line is the attempt and "ok" or
// the errno (an empty file, as a mask shows it natively, or a passwd
// naming the sandbox's own identity alone, is "?");
// x86_64 numbers.
const hardeningProbe = `import ctypes, errno, os, signal, socket
libc = ctypes.CDLL(None, use_errno=True)
def say(name, f):
    try:
        r = f()
        print(name, "ok" if r is None or r >= 0 else errno.errorcode.get(ctypes.get_errno(), "?"))
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, "?"))
say("passwd", lambda: -1 if all(l.startswith("sandbox:") for l in open("/etc/passwd").read().splitlines()) else None)
say("hostname", lambda: -1 if open("/etc/hostname").read() == "" else None)
print("hosts-own", "skill-sandbox" in open("/etc/hosts").read())
pid = os.fork()
if pid == 0:
    signal.pause()
    os._exit(0)
say("ptrace-child", lambda: libc.ptrace(16, pid, 0, 0))
os.kill(pid, 9)
os.waitpid(pid, 0)
say("unshare-user", lambda: libc.unshare(0x10000000))
say("unshare-ns", lambda: libc.unshare(0x20000))
say("icmp-dgram", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP).close())
say("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close())
say("packet", lambda: socket.socket(17, socket.SOCK_RAW, 0).close())
say("clone3", lambda: libc.syscall(435, 0, 0))
say("openat2", lambda: libc.syscall(437, -100, b"/", 0, 0))
import threading
t = threading.Thread(target=print, args=("thread", "started"))
t.start()
t.join()
`

// TestGVisorHardening: the attempts of hardeningProbe are refused under
// the gvisor backend as they are natively (attack probes 1, 20, 22, 23
// and 29), as root and as uid 65534.
func TestGVisorHardening(t *testing.T) {
	needRunsc(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the probe's system call numbers are x86_64's")
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 for the probe")
	}
	skill := gvisorSkill(t, "exec /usr/bin/python3 -c '"+hardeningProbe+"'\n")
	for _, b := range []string{BackendNative, BackendGVisor} {
		res, err := (&Sandbox{SkillDir: skill, Backend: b}).Run(context.Background(), "scripts/k.sh", nil)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		res.WaitCleanup()
		out := string(res.Stdout.Captured)
		// clone3 and openat2 must answer ENOSYS, natively the filter's
		// answer and under gVisor its kernel's: the C library falls back
		// to clone and openat only then, else no thread starts.
		if res.ExitCode != 0 || !strings.Contains(out, "clone3 ENOSYS\nopenat2 ENOSYS\nthread started\n") {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", b, res.ExitCode, out, res.Stderr.Captured)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			name, result, _ := strings.Cut(line, " ")
			if result == "ok" || result == "False" {
				t.Errorf("%s: %s got through (%q)", b, name, out)
			}
		}
	}
}

func TestGVisorWithoutRunscRefused(t *testing.T) {
	skill := gvisorSkill(t, "echo RAN\n")
	t.Setenv("PATH", t.TempDir()) // no runsc there
	res, err := (&Sandbox{SkillDir: skill, Backend: BackendGVisor}).Run(context.Background(), "scripts/k.sh", nil)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "apt-get install runsc") || res.Started {
		t.Fatalf("started %v, err %v; want ErrUnsupported with the fix", res.Started, err)
	}
	if len(res.Stdout.Captured) > 0 || res.Backend != BackendGVisor {
		t.Fatalf("stdout %q, backend %q", res.Stdout.Captured, res.Backend)
	}
}
