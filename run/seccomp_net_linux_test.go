package run

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// policyCalls tries each call the seccomp policy filters and prints
// "name errno" (0: allowed).
const policyCalls = `import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def sock(name, fam, typ, proto=0):
    fd = libc.socket(fam, typ, proto)
    print(name, 0 if fd >= 0 else ctypes.get_errno())
    if fd >= 0:
        os.close(fd)
def pair(name, fam, typ):
    sv = (ctypes.c_int * 2)()
    r = libc.socketpair(fam, typ, 0, sv)
    print(name, 0 if r == 0 else ctypes.get_errno())
sock("alg", 38, 5)
sock("vsock", 40, 1)
sock("packet", 17, 2)
sock("raw", 2, 3, 1)
sock("ping", 2, 2, 1)
sock("sctp", 2, 1, 132)
sock("tcp", 2, 1 | 0o2000000)
sock("udp", 10, 2)
sock("unix", 1, 1)
sock("unix-dgram", 1, 2)
sock("netlink-route", 16, 3, 0)
sock("netlink-diag", 16, 3, 4)
pair("pair-stream", 1, 1)
pair("pair-dgram", 1, 2)
pair("pair-inet", 2, 1)
s = socket.socket()
try:
    s.setsockopt(6, 30, 1)
    print("tfo-connect", 0)
except OSError as e:
    print("tfo-connect", e.errno)
try:
    s.sendto(b"x", 0x20000000, ("127.0.0.1", 9))
    print("fastopen", 0)
except OSError as e:
    print("fastopen", e.errno)
# A binary written at run time, started from a memfd with fexecve.
try:
    fd = os.memfd_create("payload")
    print("memfd", 0)
except OSError as e:
    print("memfd", e.errno)
    fd = None
if fd is not None:
    os.write(fd, open("/bin/true", "rb").read())
    pid = os.fork()
    if pid == 0:
        argv = (ctypes.c_char_p * 2)(b"true", None)
        libc.syscall(322 if os.uname().machine == "x86_64" else 281, fd, b"", argv, argv, 0x1000)
        os._exit(100 + ctypes.get_errno())
    _, st = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(st)
    print("execveat", 0 if code == 0 else code - 100)
if os.uname().machine == "x86_64":
    buf = ctypes.create_string_buffer(16)
    r = libc.syscall(154, 0, buf, 16)
    print("modify_ldt", 0 if r >= 0 else ctypes.get_errno())
r = libc.shmget(0, 4096, 0o600)
print("shmget", 0 if r >= 0 else ctypes.get_errno())
if r >= 0:
    libc.shmctl(r, 0, None)
name = b"/skill-sandbox-test-%d" % os.getpid()
q = libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
print("mq_open", 0 if q >= 0 else ctypes.get_errno())
if q >= 0:
    libc.mq_unlink(name)
`

// TestSeccompPolicy checks the socket, TCP Fast Open, execveat, modify_ldt,
// IPC and memfd checks of the filter in every mode, and that without the
// filter the same calls succeed (so the filter is what refuses them).
func TestSeccompPolicy(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"calls.py": policyCalls})
	eperm, eafns := int(unix.EPERM), int(unix.EAFNOSUPPORT)
	// Refused in every mode.
	always := map[string]int{
		"alg": eafns, "vsock": eafns, "packet": eafns, "raw": eperm, "ping": eperm,
		"sctp": eperm, "tcp": 0, "netlink-diag": eafns, "pair-stream": 0, "pair-inet": eafns,
		"tfo-connect": eperm, "fastopen": eperm, "execveat": eperm, "memfd": 0,
	}
	if runtime.GOARCH == "amd64" {
		always["modify_ldt"] = eperm
	}
	with := func(m map[string]int) map[string]int {
		out := map[string]int{}
		for k, v := range always {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name    string
		disable []Layer
		want    map[string]int
	}{
		{"full sandbox", nil, with(map[string]int{
			"udp": 0, "unix": 0, "unix-dgram": 0, "pair-dgram": 0, "netlink-route": 0, "shmget": 0,
			// Landlock already refuses creating a queue: the mqueue file
			// system is not among its rules.
			"mq_open": int(unix.EACCES)})},
		{"no network namespace", []Layer{LayerNetNS}, with(map[string]int{
			"udp": eperm, "netlink-route": eafns, "unix": 0, "shmget": 0})},
		{"no mount namespace", []Layer{LayerMountNS}, with(map[string]int{
			"unix": eperm, "unix-dgram": eperm, "pair-dgram": eperm, "udp": 0})},
		{"no IPC namespace", []Layer{LayerIPCNS}, with(map[string]int{
			"shmget": eperm, "mq_open": eperm, "unix": 0})},
		// Without a cgroup nothing would count memfd or System V shared
		// memory pages (see seccomp.Policy.NoMemCgroup).
		{"no cgroup", []Layer{LayerCgroup}, with(map[string]int{
			"memfd": int(unix.ENOSYS), "shmget": eperm, "unix": 0})},
		// Without the filter, what it refuses works (AF_ALG and AF_VSOCK
		// depend on the kernel's modules, raw and packet sockets on
		// capabilities, so they are not listed).
		{"no seccomp, no namespaces, no cgroup", []Layer{LayerSeccomp, LayerNetNS, LayerMountNS, LayerIPCNS, LayerCgroup}, map[string]int{
			"udp": 0, "unix": 0, "pair-dgram": 0, "netlink-route": 0, "tfo-connect": 0,
			"execveat": 0, "shmget": 0, "pair-stream": 0, "memfd": 0}},
	}
	cgErr := openCgroupProbe()
	for _, c := range cases {
		if cgErr != nil && !stageconfig.Has(c.disable, LayerCgroup) && !stageconfig.Has(c.disable, LayerSeccomp) {
			// No cgroup here: every case runs without one.
			c.want["memfd"], c.want["shmget"] = int(unix.ENOSYS), eperm
			delete(c.want, "execveat")
		}
		if c.want["memfd"] != 0 {
			delete(c.want, "execveat") // needs a memfd
		}
	}
	if runtime.GOARCH == "amd64" {
		cases[len(cases)-1].want["modify_ldt"] = 0
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runIn(t, Sandbox{Disable: c.disable}, dir, "calls.py")
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
			for name, w := range c.want {
				if g, ok := got[name]; !ok || g != w {
					t.Errorf("%s: errno %d (reported %v), want %d", name, g, ok, w)
				}
			}
		})
	}
}

// hostUDPListener listens for one datagram on the host's 127.0.0.1.
func hostUDPListener(t *testing.T) ([]string, func(outcome) bool) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 64)
		pc.SetReadDeadline(time.Now().Add(30 * time.Second))
		n, _, err := pc.ReadFrom(b)
		if err == nil {
			got <- string(b[:n])
		}
	}()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	return []string{strconv.Itoa(port)}, func(outcome) bool {
		select {
		case s := <-got:
			return s == "hello"
		case <-time.After(200 * time.Millisecond):
			return false
		}
	}
}

// degradedAttacks are attacks that get through where a namespace is
// missing unless the seccomp policy stops them; TestLayerAttacks runs them
// with the namespace disabled as well (the `also` list).
func degradedAttacks() []attack {
	return []attack{
		{
			layer: LayerSeccomp, name: "UDP datagram to the host without a network namespace",
			also: []Layer{LayerNetNS},
			script: `import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"hello", ("127.0.0.1", int(sys.argv[1])))
print("sent")
`,
			setup: hostUDPListener,
		},
		{
			// Landlock's connect rule is off too: some kernels let a Fast
			// Open connect past it, others refuse it (EACCES on 6.18), and
			// this attack shows what seccomp adds on either.
			layer: LayerSeccomp, name: "TCP Fast Open connect without a network namespace or Landlock's connect rule",
			also: []Layer{LayerNetNS, LayerLandlockNet},
			script: `import socket, sys
s = socket.socket()
s.sendto(b"hello", 0x20000000, ("127.0.0.1", int(sys.argv[1])))
s.close()
print("sent")
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				if !tfoClientEnabled() {
					t.Skip("TCP Fast Open is off for clients here (net.ipv4.tcp_fastopen)")
				}
				return hostListener(t)
			},
		},
		{
			layer: LayerSeccomp, name: "connect to a host unix socket without a mount namespace",
			also:   []Layer{LayerMountNS},
			script: hostUnixConnectScript,
			setup:  hostPathSocket,
		},
		{
			layer: LayerLandlockFS, name: "read a host process's command line without a PID namespace",
			also: []Layer{LayerPIDNS},
			script: `import sys
print(open("/proc/%s/cmdline" % sys.argv[1]).read())
`,
			setup: func(t *testing.T) ([]string, func(outcome) bool) {
				token := fmt.Sprintf("host-secret-%d", time.Now().UnixNano())
				cmd := exec.Command("/bin/sh", "-c", "sleep 60; :", token)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
				return []string{strconv.Itoa(cmd.Process.Pid)}, func(o outcome) bool { return strings.Contains(o.stdout, token) }
			},
		},
		{
			layer: LayerSeccomp, name: "attach host SysV shared memory without an IPC namespace",
			also:   []Layer{LayerIPCNS},
			script: hostShmScript,
			setup:  hostSharedMemory,
		},
	}
}

// tfoClientEnabled reports whether the host lets clients use TCP Fast
// Open (net.ipv4.tcp_fastopen bit 0), which the Fast Open attack needs.
func tfoClientEnabled() bool {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_fastopen")
	if err != nil {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err == nil && n&1 != 0
}
