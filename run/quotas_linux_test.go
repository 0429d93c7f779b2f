package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// quotaAttack takes all it can of one counter the kernel keeps per user
// and shares between the run and its caller (a root caller's: host
// root's), then holds it until the test has tried to use the same counter
// as the caller itself.
type quotaAttack struct {
	name  string
	layer Layer // the layer that bounds it
	// also are layers that stop the attack as well, disabled in every
	// try so that layer is the decisive one (see attack).
	also   []Layer
	script string
	// bound is what one run may take with the quotas layer, here: the
	// test needs more than that free to tell the layer's effect apart.
	bound int
	// free reports whether the caller has more than n of the counter
	// free now (taking n+1 and giving them back).
	free func(t *testing.T, n int) bool
	// prepare readies the caller's side before the run and returns its
	// try, made while the script holds what it took: nil when the
	// caller still gets one, else the kernel's refusal.
	prepare func(t *testing.T) (try func() error)
}

// inotifyHoldScript takes inotify instances until the kernel refuses one,
// says how many it holds, and holds them until its stdin ends.
const inotifyHoldScript = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
held = 0
while libc.inotify_init1(0) >= 0:
    held += 1
print("held %d" % held, flush=True)
sys.stdin.read(1)
`

// watchHoldScript adds inotify watches until the kernel refuses one
// (ENOSPC): on the same files from one instance after another, since a
// watch counts per instance and file, so that a few thousand files
// reach any limit.
const watchHoldScript = `import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
paths = []
for root, dirs, files in os.walk("/usr"):
    for n in dirs + files:
        paths.append(os.path.join(root, n).encode())
    if len(paths) >= 20000:
        break
held, full = 0, False
while not full:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    wds = set()  # a file met again (a link) is the same watch
    for p in paths:
        wd = libc.inotify_add_watch(fd, p, 2)  # IN_MODIFY
        if wd >= 0:
            wds.add(wd)
        elif ctypes.get_errno() == errno.ENOSPC:
            full = True
            break
    held += len(wds)
    if not wds:
        break
print("held %d" % held, flush=True)
sys.stdin.read(1)
`

func quotaAttacks() []quotaAttack {
	return []quotaAttack{
		{
			name: "inotify instances", layer: LayerQuotas, script: inotifyHoldScript, bound: 16,
			free: func(t *testing.T, n int) bool {
				var fds []int
				defer func() {
					for _, fd := range fds {
						unix.Close(fd)
					}
				}()
				for len(fds) <= n {
					fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
					if err != nil {
						return false
					}
					fds = append(fds, fd)
				}
				return true
			},
			prepare: func(*testing.T) func() error {
				return func() error {
					fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
					if err == nil {
						unix.Close(fd)
					}
					return err
				}
			},
		},
		{
			name: "inotify watches", layer: LayerQuotas, script: watchHoldScript, bound: 8192,
			free: func(t *testing.T, n int) bool {
				fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
				if err != nil {
					return false
				}
				defer unix.Close(fd) // removes its watches
				dir := t.TempDir()
				for i := 0; i <= n; i++ {
					p := filepath.Join(dir, strconv.Itoa(i))
					if err := os.WriteFile(p, nil, 0o600); err != nil {
						t.Fatal(err)
					}
					if _, err := unix.InotifyAddWatch(fd, p, unix.IN_MODIFY); err != nil {
						return false
					}
				}
				return true
			},
			prepare: func(t *testing.T) func() error {
				// The caller's instance, made before the run takes
				// the watches.
				fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
				if err != nil {
					t.Skipf("the caller has no inotify instance free: %v", err)
				}
				t.Cleanup(func() { unix.Close(fd) })
				target := filepath.Join(t.TempDir(), "watched")
				if err := os.WriteFile(target, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return func() error {
					wd, err := unix.InotifyAddWatch(fd, target, unix.IN_MODIFY)
					if err == nil {
						unix.InotifyRmWatch(fd, uint32(wd))
					}
					return err
				}
			},
		},
		{
			name: "fanotify groups", layer: LayerQuotas, script: fanotifyHoldScript, bound: 4,
			free: func(t *testing.T, n int) bool { return takeFDs(n+1, fanotifyGroup) },
			prepare: func(*testing.T) func() error {
				return func() error { return takeOne(fanotifyGroup) }
			},
		},
		{
			// One queue of the default size (10 messages of 8 KiB)
			// takes about 80 KiB of RLIMIT_MSGQUEUE.
			// Landlock refuses the queue's file in the namespace's
			// mqueue file system (no rule grants it).
			name: "POSIX message queues", layer: LayerRlimits, also: []Layer{LayerLandlockFS}, script: mqHoldScript, bound: 1,
			free: func(t *testing.T, n int) bool { return takeFDs(n+1, hostQueue) },
			prepare: func(*testing.T) func() error {
				return func() error { return takeOne(hostQueue) }
			},
		},
		{
			name: "queued signals", layer: LayerRlimits, script: sigqueueHoldScript, bound: 1024,
			free: func(t *testing.T, n int) bool {
				// Each is delivered (and ignored: nothing asks the Go
				// runtime for it) as soon as it is queued.
				return queueSignal() == nil
			},
			prepare: func(*testing.T) func() error { return queueSignal },
		},
	}
}

// fanotifyHoldScript takes fanotify groups of the kind a process without
// CAP_SYS_ADMIN may have until the kernel refuses one.
const fanotifyHoldScript = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
held = 0
while libc.fanotify_init(0x200, 0) >= 0:  # FAN_CLASS_NOTIF | FAN_REPORT_FID
    held += 1
print("held %d" % held, flush=True)
sys.stdin.read(1)
`

// mqHoldScript makes POSIX message queues of the default size until the
// kernel refuses one (EMFILE past RLIMIT_MSGQUEUE).
const mqHoldScript = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
held = 0
while libc.mq_open(b"/hold-%d" % held, os.O_CREAT | os.O_RDWR, 0o600, None) >= 0:
    held += 1
print("held %d" % held, flush=True)
sys.stdin.read(1)
`

// sigqueueHoldScript queues real-time signals to itself, blocked, until
// the kernel refuses one (EAGAIN past RLIMIT_SIGPENDING).
const sigqueueHoldScript = `import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
sig = signal.SIGRTMIN + 6
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
held = 0
while libc.sigqueue(os.getpid(), sig, ctypes.c_void_p(0)) == 0:
    held += 1
print("held %d" % held, flush=True)
sys.stdin.read(1)
`

// takeFDs reports whether make gives n descriptors, closing them.
func takeFDs(n int, make func() (int, error)) bool {
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for len(fds) < n {
		fd, err := make()
		if err != nil {
			return false
		}
		fds = append(fds, fd)
	}
	return true
}

// takeOne makes one descriptor and closes it: the kernel's refusal, or nil.
func takeOne(make func() (int, error)) error {
	fd, err := make()
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// fanotifyGroup makes a fanotify group as an unprivileged process may.
func fanotifyGroup() (int, error) {
	return unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_REPORT_FID, unix.O_RDONLY|unix.O_CLOEXEC)
}

// hostQueue makes a POSIX message queue of the default size in the
// caller's IPC namespace and unlinks it at once: its descriptor keeps it
// (and its charge) until closed.
func hostQueue() (int, error) {
	var b [8]byte
	if _, err := unix.Getrandom(b[:], 0); err != nil {
		return -1, err
	}
	name, err := unix.BytePtrFromString(fmt.Sprintf("skill-sandbox-test-%x", b))
	if err != nil {
		return -1, err
	}
	fd, _, errno := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_CREAT|unix.O_EXCL|unix.O_RDWR|unix.O_CLOEXEC, 0o600, 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(name)), 0, 0)
	return int(fd), nil
}

// queueSignal queues a real-time signal to this process, which the
// kernel refuses (EAGAIN) once the caller's queued signals reach its
// RLIMIT_SIGPENDING.
func queueSignal() error {
	info := unix.Siginfo{Signo: 40, Code: -1} // SI_QUEUE
	_, _, errno := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(os.Getpid()), 40, uintptr(unsafe.Pointer(&info)))
	if errno != 0 {
		return errno
	}
	return nil
}

// TestQuotaAttacks shows each quota attack taking all the caller has of
// its counter with the quotas layer disabled (the caller is then refused
// while the run holds it), and taking no more than the layer's bound with
// the layer, the caller still served, in a run of its own and in one a
// pool started ahead (as the MCP server's).
func TestQuotaAttacks(t *testing.T) {
	fullIsolation(t)
	for _, a := range quotaAttacks() {
		t.Run(a.name, func(t *testing.T) {
			if !a.free(t, a.bound+1) {
				t.Skipf("the caller has no more than %d %s free: a run within its bound could take them all", a.bound+1, a.name)
			}
			dir := newSkill(t, map[string]string{"hold.py": a.script})
			held, err := holdQuota(t, a, Sandbox{Disable: append([]Layer{a.layer}, a.also...)}, dir)
			if err == nil {
				t.Skipf("with %s disabled the run took %d %s and the caller still got one: this host's limit is beyond what a run can take", a.layer, held, a.name)
			}
			t.Logf("without %s: the run took %d %s; the caller then got %v", a.layer, held, a.name, err)
			for _, c := range []struct {
				name    string
				disable []Layer
				pool    bool
			}{
				{"own init process", a.also, false},
				{"pooled init process", a.also, true},
				{"full sandbox", nil, false},
			} {
				if c.name == "full sandbox" && len(a.also) == 0 {
					continue // the first try was that
				}
				sb := Sandbox{Disable: c.disable}
				if c.pool {
					sb.Pool = newTestPool(t, 1, time.Hour, sb)
					waitIdle(t, sb.Pool, 1)
				}
				held, err := holdQuota(t, a, sb, dir)
				if err != nil {
					t.Errorf("%s: the run took %d %s and the caller was refused: %v", c.name, held, a.name, err)
				}
				if held > a.bound || held == 0 && len(a.also) == 0 {
					t.Errorf("%s: the run took %d %s, want 1 to %d", c.name, held, a.name, a.bound)
				}
				if c.pool && sb.Pool.Stats().Taken != 1 {
					t.Errorf("the run did not take the pooled init process: %+v", sb.Pool.Stats())
				}
			}
		})
	}
}

// heldLine is the hold scripts' report of what they took.
var heldLine = regexp.MustCompile(`held (\d+)\n`)

// holdQuota runs a's script in sb and, while the script holds what it
// took, makes the caller's try: it returns how many the script held and
// the try's error.
func holdQuota(t *testing.T, a quotaAttack, sb Sandbox, dir string) (int, error) {
	t.Helper()
	try := a.prepare(t)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdinW.Close()
	out := &heldWriter{seen: make(chan int, 1)}
	var errb bytes.Buffer
	sb.SkillDir, sb.Stdin, sb.Stdout, sb.Stderr = dir, stdinR, out, &errb
	sb.Timeout = time.Minute
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := sb.Run(context.Background(), "hold.py", nil)
		if res != nil {
			res.WaitCleanup()
		}
		done <- ran{res, err}
	}()
	var held int
	var tryErr error
	select {
	case held = <-out.seen:
		tryErr = try()
		stdinW.Close()
		r := <-done
		if r.err != nil {
			t.Fatalf("run: %v\nstderr: %s", r.err, errb.String())
		}
	case r := <-done:
		t.Fatalf("the script ended before it held anything: %v, exit %d, stderr %s", r.err, exitOf(r.res), errb.String())
	}
	return held, tryErr
}

// exitOf is res's exit code, -1 without a result.
func exitOf(res *Result) int {
	if res == nil {
		return -1
	}
	return res.ExitCode
}

// heldWriter takes a hold script's stdout and sends the count of its
// "held N" line on seen, once.
type heldWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	sent bool
	seen chan int
}

// Write implements io.Writer.
func (w *heldWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := heldLine.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		n, _ := strconv.Atoi(string(m[1]))
		w.sent = true
		w.seen <- n
	}
	return len(p), nil
}
