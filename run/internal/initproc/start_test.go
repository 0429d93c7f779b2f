//go:build linux && (amd64 || arm64)

package initproc

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// started is a test's init process and the supervisor's ends.
type started struct {
	pid                      int
	cfgW, repR, outR, status *os.File
}

// startProg starts an init process with flags and sends it prog; stdin is
// /dev/null, stdout a pipe, stderr the test's.
func startProg(t *testing.T, flags uintptr, prog *Program) *started {
	t.Helper()
	return startProgUnshare(t, flags, 0, prog)
}

// startProgUnshare is startProg with Attr.Unshare: the child's word on it
// is read before the program goes.
func startProgUnshare(t *testing.T, flags, unshare uintptr, prog *Program) *started {
	t.Helper()
	pipe := func() (*os.File, *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	cfgR, cfgW := pipe()
	repR, repW := pipe()
	outR, outW := pipe()
	stR, stW := pipe()
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	at := &Attr{
		Cloneflags: flags,
		Unshare:    unshare,
		Files:      []int{int(null.Fd()), int(outW.Fd()), 2, int(cfgR.Fd()), int(repW.Fd()), int(stW.Fd())},
		ReportFD:   4,
	}
	if flags&unix.CLONE_NEWUSER != 0 {
		at.UIDMap = "0 " + itoa(os.Geteuid()) + " 1\n"
		at.GIDMap = "0 " + itoa(os.Getegid()) + " 1\n"
	}
	pid, err := Start(at)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	cfgR.Close()
	repW.Close()
	outW.Close()
	stW.Close()
	if unshare != 0 {
		if err := ReadUnshared(repR, pid, 10*time.Second); err != nil {
			t.Fatalf("the child's unshare: %v", err)
		}
	}
	if _, err := cfgW.Write(prog.Bytes); err != nil {
		t.Fatalf("sending the program: %v", err)
	}
	return &started{pid: pid, cfgW: cfgW, repR: repR, outR: outR, status: stR}
}

func itoa(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// readReport reads the layer report.
func readReport(t *testing.T, r io.Reader) Report {
	t.Helper()
	var rep Report
	buf := make([]byte, unsafe.Sizeof(rep))
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatalf("reading the report: %v", err)
	}
	rep = *(*Report)(unsafe.Pointer(&buf[0]))
	if rep.Magic != reportMagic {
		t.Fatalf("report magic %#x", rep.Magic)
	}
	return rep
}

func (s *started) wait(t *testing.T) unix.WaitStatus {
	t.Helper()
	var ws unix.WaitStatus
	if _, err := unix.Wait4(s.pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestStartExec(t *testing.T) {
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	b.Exec(Launch{Argv: []string{"/bin/sh", "-c", "echo hi $X; pwd"}, Env: []string{"X=there"}, Dir: "/", ReportFD: 4})
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, 0, prog)
	rep := readReport(t, s.repR)
	if rep.Stopped != 0 || rep.NFail != 0 {
		t.Fatalf("report %+v", rep)
	}
	out, _ := io.ReadAll(s.outR)
	ws := s.wait(t)
	if string(out) != "hi there\n/\n" || ws.ExitStatus() != 0 {
		t.Fatalf("output %q, status %v", out, ws)
	}
	// EOF on the report pipe after the report: execve succeeded.
	if rest, _ := io.ReadAll(s.repR); len(rest) != 0 {
		t.Fatalf("after the report: %q", rest)
	}
}

func TestStartReaper(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	b.Reaper(Launch{Argv: []string{"/bin/sh", "-c", "echo pid $$; sleep 0.1 & exit 3"}, Dir: "/", ReportFD: 4}, 5, 3, Int(-1))
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, unix.CLONE_NEWUSER|unix.CLONE_NEWPID, prog)
	rep := readReport(t, s.repR)
	if rep.Stopped != 0 {
		t.Fatalf("report %+v", rep)
	}
	out, _ := io.ReadAll(s.outR)
	st, _ := io.ReadAll(s.status)
	ws := s.wait(t)
	if ws.ExitStatus() != 0 || len(st) != 28 {
		t.Fatalf("reaper status %v, report %d bytes", ws, len(st))
	}
	script := unix.WaitStatus(uint32(st[0])<<24 | uint32(st[1])<<16 | uint32(st[2])<<8 | uint32(st[3]))
	if script.ExitStatus() != 3 || !strings.HasPrefix(string(out), "pid 2\n") {
		t.Fatalf("script status %v, output %q", script, out)
	}
}

func TestFailureStops(t *testing.T) {
	b := NewBuilder(0)
	b.Begin(1 << 2)
	b.Sys("mkdir /nonexistent/x", unix.SYS_MKDIRAT, []Arg{Int(unix.AT_FDCWD), Ref(b.String("/nonexistent/x")), Imm(0o755)})
	b.End()
	b.Report(4, 3, WaitNever)
	b.Exec(Launch{Argv: []string{"/bin/true"}, Dir: "/", ReportFD: 4})
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, 0, prog)
	rep := readReport(t, s.repR)
	ws := s.wait(t)
	if rep.Stopped != 1 || rep.NFail != 1 || rep.Fails[0].Kind != FailIncomplete || rep.Fails[0].Errno != uint32(unix.ENOENT) || rep.Fails[0].Op != 1 {
		t.Fatalf("report %+v", rep)
	}
	if prog.Describe(rep.Fails[0].Op) != "mkdir /nonexistent/x" || ws.ExitStatus() != 125 {
		t.Fatalf("described %q, status %v", prog.Describe(rep.Fails[0].Op), ws)
	}
}

func TestMissingGoesOn(t *testing.T) {
	b := NewBuilder(0)
	b.Begin(1 << 3)
	b.Sys("mkdir /nonexistent/x", unix.SYS_MKDIRAT, []Arg{Int(unix.AT_FDCWD), Ref(b.String("/nonexistent/x")), Imm(0o755)}, Unavailable(unix.ENOENT))
	b.Sys("never", unix.SYS_GETPID, nil)
	b.End()
	b.Begin(1 << 4)
	b.Sys("getpid", unix.SYS_GETPID, nil)
	b.End()
	b.Report(4, 3, WaitNever)
	b.Exec(Launch{Argv: []string{"/bin/echo", "ok"}, Dir: "/", ReportFD: 4})
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, 0, prog)
	rep := readReport(t, s.repR)
	out, _ := io.ReadAll(s.outR)
	s.wait(t)
	if rep.Stopped != 0 || rep.Missing != 1<<3 || rep.Applied != 1<<4 || rep.NFail != 1 || rep.Fails[0].Kind != FailMissing {
		t.Fatalf("report %+v", rep)
	}
	if !bytes.Equal(out, []byte("ok\n")) {
		t.Fatalf("output %q", out)
	}
}

// TestChildMemory checks what the init process keeps of the supervisor's
// memory: never its first stack (argv and environment, which anyone could
// read as /proc/1/cmdline), and, in a program without cgo (whose C library
// registers an rseq area), nothing but the executable's read-only
// mappings and the arena.
func TestChildMemory(t *testing.T) {
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	b.Reaper(Launch{Argv: []string{"/bin/sleep", "10"}, Dir: "/", ReportFD: 4}, 5, 3, Int(-1))
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	s := startProg(t, unix.CLONE_NEWUSER|unix.CLONE_NEWPID, prog)
	readReport(t, s.repR)
	maps, err := os.ReadFile("/proc/" + itoa(s.pid) + "/maps")
	cmdline, err2 := os.ReadFile("/proc/" + itoa(s.pid) + "/cmdline")
	s.cfgW.Close() // ends the run
	s.wait(t)
	if errors.Is(err, os.ErrPermission) && os.Geteuid() != 0 {
		t.Skipf("this unprivileged user may not read the init process's maps here: %v", err)
	}
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if len(cmdline) != 0 {
		t.Errorf("the init process's cmdline is %q, want none", cmdline)
	}
	if strings.Contains(string(maps), "[stack]") {
		t.Errorf("the supervisor's first stack is still mapped:\n%s", maps)
	}
	maps0, err := proc.ReadFile("/proc/self/maps", maxMaps)
	if err != nil {
		t.Fatal(err)
	}
	f := facts.get(maps0) // found by the Start above
	t.Logf("full unmapping: %v\n%s", f.full, maps)
	if !f.full {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(maps)), "\n")
	var writable, other []string
	for _, l := range lines {
		fs := strings.Fields(l)
		switch {
		case len(fs) > 1 && strings.Contains(fs[1], "w"):
			writable = append(writable, l)
		case len(fs) > 5 && (strings.HasPrefix(fs[5], "[") || fs[4] != "0"):
			// the executable's read-only segments, the kernel's
		default:
			other = append(other, l)
		}
	}
	// The arena is the only writable mapping, unless another rseq area
	// was registered (a C library's, with cgo), in which case the copy
	// stays whole.
	if !rseqTaken(t) && (len(writable) != 1 || len(other) > 0) {
		t.Errorf("the init process kept %q and %q", writable, other)
	}
}

// TestReaperNeedsPIDNamespace: the init process refuses to reap outside a PID
// namespace, where its kill(-1) would reach every process of the caller's.
func TestReaperNeedsPIDNamespace(t *testing.T) {
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	b.Reaper(Launch{Argv: []string{"/bin/true"}, Dir: "/", ReportFD: 4}, 5, 3, Int(-1))
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProg(t, 0, prog)
	readReport(t, s.repR)
	rest, _ := io.ReadAll(s.repR)
	ws := s.wait(t)
	if ws.ExitStatus() != 125 || len(rest) != int(unsafe.Sizeof(ExecError{})) {
		t.Fatalf("status %v, after the report %d bytes", ws, len(rest))
	}
	if e := (*ExecError)(unsafe.Pointer(&rest[0])); e.Step != StepReaper || e.Errno != uint32(unix.EPERM) {
		t.Fatalf("exec error %+v", *e)
	}
}

// rseqTaken reports whether this process's threads have an rseq area
// registered by someone else (the C library, with cgo): rseq(2) then
// refuses another one on the calling thread with EINVAL (or EBUSY).
func rseqTaken(t *testing.T) bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var area [64]byte
	p := (uintptr(unsafe.Pointer(&area[0])) + 31) &^ 31
	_, _, e := unix.RawSyscall6(unix.SYS_RSEQ, p, 32, 0, rseqSignature, 0, 0)
	if e == 0 {
		// Registered now: unregister before the stack frame goes.
		unix.RawSyscall6(unix.SYS_RSEQ, p, 32, 1, rseqSignature, 0, 0)
		return false
	}
	t.Logf("rseq: %v", e)
	return e != unix.ENOSYS
}

// TestStartUnshare: namespaces of Attr.Unshare are the child's own, made
// by the child itself after the clone, and its program runs in them; a
// user or PID namespace cannot be asked for so.
func TestStartUnshare(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	b := NewBuilder(0)
	b.Report(4, 3, WaitNever)
	b.Exec(Launch{Argv: []string{"/bin/sh", "-c", "readlink /proc/self/ns/net /proc/self/ns/uts /proc/self/ns/ipc /proc/self/ns/mnt"}, Dir: "/", ReportFD: 4})
	prog, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s := startProgUnshare(t, unix.CLONE_NEWUSER, unix.CLONE_NEWNET|unix.CLONE_NEWUTS|unix.CLONE_NEWIPC|unix.CLONE_NEWNS, prog)
	if rep := readReport(t, s.repR); rep.Stopped != 0 || rep.NFail != 0 {
		t.Fatalf("report %+v", rep)
	}
	out, _ := io.ReadAll(s.outR)
	if ws := s.wait(t); ws.ExitStatus() != 0 {
		t.Fatalf("status %v", ws)
	}
	got := strings.Fields(string(out))
	if len(got) != 4 {
		t.Fatalf("output %q", out)
	}
	for i, ns := range []string{"net", "uts", "ipc", "mnt"} {
		own, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		if got[i] == own {
			t.Errorf("the child's %s namespace is this process's, %s", ns, own)
		}
	}
	for _, bad := range []uintptr{unix.CLONE_NEWUSER, unix.CLONE_NEWPID, unix.CLONE_VM} {
		if _, err := Start(&Attr{Unshare: bad}); err == nil {
			t.Errorf("Start with Unshare %#x: no error", bad)
		}
	}
}

// TestReadUnsharedChildGone: a child that ends before its word (killed
// here right after the clone, maybe before it unshared) does not leave
// ReadUnshared waiting on a pipe whose other end the caller still holds.
func TestReadUnsharedChildGone(t *testing.T) {
	if _, err := os.Stat("/proc/self/ns/user"); err != nil {
		t.Skip("no user namespaces")
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer repR.Close()
	defer repW.Close() // held throughout, as the supervisor does
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer cfgR.Close()
	defer cfgW.Close()
	for range 5 {
		pid, err := Start(&Attr{Cloneflags: unix.CLONE_NEWUSER, Unshare: unix.CLONE_NEWNET, ReportFD: 4,
			Files: []int{-1, -1, 2, int(cfgR.Fd()), int(repW.Fd())}})
		if err != nil {
			t.Fatal(err)
		}
		unix.Kill(pid, unix.SIGKILL)
		start := time.Now()
		err = ReadUnshared(repR, pid, 5*time.Second)
		if time.Since(start) > 4*time.Second {
			t.Fatalf("ReadUnshared waited %v for a killed child (err %v)", time.Since(start), err)
		}
		var ws unix.WaitStatus
		unix.Wait4(pid, &ws, 0, nil)
	}
}
