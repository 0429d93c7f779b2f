package run

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

// needOwnRunIDs skips unless this caller's runs get host ids of their own
// (root in the initial user namespace, with user namespaces).
func needOwnRunIDs(t *testing.T) {
	t.Helper()
	if !identity.OwnRunIDs() {
		t.Skip("only a root caller in the initial user namespace gives runs ids of their own")
	}
	fullIsolation(t)
}

// heldRun is a run started by startHeld whose script holds what it took
// until stop.
type heldRun struct {
	held  int
	stdin *os.File
	done  chan heldResult
}

// heldResult is a held run's end.
type heldResult struct {
	res    *Result
	err    error
	stderr string
}

// startHeld runs script of dir in sb with args and waits until the script
// says what it holds ("held N", see heldLine). It fails the test when the
// run ends first.
func startHeld(t *testing.T, sb Sandbox, dir, script string, args ...string) *heldRun {
	t.Helper()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &heldWriter{seen: make(chan int, 1)}
	errb := &bytes.Buffer{}
	sb.SkillDir, sb.Stdin, sb.Stdout, sb.Stderr = dir, stdinR, out, errb
	sb.Timeout = 2 * time.Minute
	h := &heldRun{stdin: stdinW, done: make(chan heldResult, 1)}
	go func() {
		defer stdinR.Close()
		res, err := sb.Run(context.Background(), script, args)
		if res != nil {
			res.WaitCleanup()
		}
		h.done <- heldResult{res, err, errb.String()}
	}()
	select {
	case h.held = <-out.seen:
	case r := <-h.done:
		stdinW.Close()
		t.Fatalf("the script ended before it held anything: %v, exit %d, stderr %s", r.err, exitOf(r.res), r.stderr)
	}
	t.Cleanup(func() { h.stop() })
	return h
}

// stop ends the script's hold and waits for the run: once only.
func (h *heldRun) stop() heldResult {
	if h.stdin == nil {
		return heldResult{}
	}
	h.stdin.Close()
	h.stdin = nil
	return <-h.done
}

// holdScript says it holds one thing and waits for its stdin to end.
const holdScript = "import sys\nprint('held 1', flush=True)\nsys.stdin.read(1)\n"

// hostUIDOf returns the host uid of the process whose command line holds
// marker, read from its /proc status as the host sees it.
func hostUIDOf(t *testing.T, marker string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmd, []byte(marker)) {
			continue
		}
		uids, _ := proc.StatusValue("/proc/"+e.Name()+"/status", "Uid:")
		if f := strings.Fields(uids); len(f) == 4 {
			id, err := strconv.Atoi(f[0])
			if err == nil && f[0] == f[1] && f[1] == f[2] && f[2] == f[3] {
				return id
			}
		}
		t.Fatalf("process %s: uids %q", e.Name(), uids)
	}
	t.Fatalf("no process of %s", marker)
	return -1
}

// marker returns a fresh argument to find a script's process by.
func marker(t *testing.T) string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "marker-" + hex.EncodeToString(b[:])
}

// pooledHold returns a skill with holdScript as hold.py and a Sandbox
// with a pool of one init process, waiting; it skips unless runs get ids of
// their own.
func pooledHold(t *testing.T) (string, Sandbox) {
	needOwnRunIDs(t)
	dir := newSkill(t, map[string]string{"hold.py": holdScript})
	sb := Sandbox{}
	sb.Pool = newTestPool(t, 1, time.Hour, sb)
	waitIdle(t, sb.Pool, 1)
	return dir, sb
}

// TestRunIDsOfConcurrentRuns: two runs of a root caller at once, one of
// its own init process and one of a pool's, have different host uids of
// the block, as the host sees their scripts; the shared identity of
// before (sharedNobody) is nobody's.
func TestRunIDsOfConcurrentRuns(t *testing.T) {
	dir, pooled := pooledHold(t)
	seen := map[int]string{}
	for _, c := range []struct {
		name string
		sb   Sandbox
	}{{"own", Sandbox{}}, {"pooled", pooled}, {"own again", Sandbox{}}} {
		m := marker(t)
		h := startHeld(t, c.sb, dir, "hold.py", m)
		uid := hostUIDOf(t, m)
		defer func() {
			if r := h.stop(); r.err != nil || r.res.SandboxUID != uid {
				t.Errorf("%s: err %v, Result.SandboxUID %d, want %d", c.name, r.err, r.res.SandboxUID, uid)
			}
		}()
		if !identity.IsRunID(uint32(uid)) {
			t.Errorf("%s: the script runs as host uid %d, not an id of the block", c.name, uid)
		}
		if other, ok := seen[uid]; ok {
			t.Errorf("%s: host uid %d is also %s's", c.name, uid, other)
		}
		seen[uid] = c.name
		t.Logf("%s: host uid %d", c.name, uid)
	}
	if pooled.Pool.Stats().Taken != 1 {
		t.Errorf("the pooled run did not take the pooled init process: %+v", pooled.Pool.Stats())
	}
	m := marker(t)
	startHeld(t, Sandbox{sharedNobody: true}, dir, "hold.py", m)
	if uid := hostUIDOf(t, m); uid != nobodyUID {
		t.Errorf("with sharedNobody the script runs as host uid %d, want %d", uid, nobodyUID)
	}
}

// epollHoldScript adds epoll watches (the same pipes to one epoll
// instance after another) until the kernel refuses one (ENOSPC past
// fs.epoll.max_user_watches, counted per host user), says how many it
// holds, and holds them until its stdin ends.
const epollHoldScript = `import errno, os, select, sys
fds = []
for _ in range(100):
    fds += os.pipe()
held, eps, i = 0, [select.epoll()], 0
def add():
    global held, i
    try:
        eps[-1].register(fds[i], select.EPOLLIN)
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
        return False
    held, i = held + 1, i + 1
    if i == len(fds):
        eps.append(select.epoll())
        i = 0
    return True
while add():
    pass
print("held %d" % held, flush=True)
# Take every watch another process of the host user frees meanwhile, as
# an attacker would, until stdin ends.
while not select.select([sys.stdin], [], [], 0.001)[0]:
    add()
sys.stdin.read(1)
`

// epollOneScript adds one epoll watch: exit 0, or 3 with the error.
const epollOneScript = `import os, select, sys
r, w = os.pipe()
try:
    select.epoll().register(r, select.EPOLLIN)
except OSError as e:
    print(e)
    sys.exit(3)
`

// epollWatchesInUse returns the most epoll watches one host user has now
// (the "tfd:" lines of its processes' epoll descriptors).
func epollWatchesInUse() int {
	ents, _ := os.ReadDir("/proc")
	byUID := map[string]int{}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		uids, _ := proc.StatusValue("/proc/"+e.Name()+"/status", "Uid:")
		f := strings.Fields(uids)
		if len(f) == 0 {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + e.Name() + "/fdinfo")
		for _, fd := range fds {
			b, _ := os.ReadFile("/proc/" + e.Name() + "/fdinfo/" + fd.Name())
			byUID[f[0]] += bytes.Count(b, []byte("tfd:"))
		}
	}
	most := 0
	for _, n := range byUID {
		most = max(most, n)
	}
	return most
}

// lowerEpollWatches sets fs.epoll.max_user_watches to a few thousand
// above what any host user has now, so that a run can take all of it in
// a moment, and restores it at the test's end. It skips where the sysctl
// cannot be written.
func lowerEpollWatches(t *testing.T) int {
	t.Helper()
	const path = "/proc/sys/fs/epoll/max_user_watches"
	old, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no epoll watch limit to lower: %v", err)
	}
	limit := epollWatchesInUse() + 20000
	if n, err := strconv.Atoi(strings.TrimSpace(string(old))); err == nil && n <= limit {
		return n
	}
	if err := os.WriteFile(path, []byte(strconv.Itoa(limit)), 0); err != nil {
		t.Skipf("cannot lower %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile(path, old, 0); err != nil {
			t.Errorf("restoring %s: %v", path, err)
		}
	})
	return limit
}

// TestEpollWatchesPerRun: a run that takes every epoll watch its host
// user may have leaves them to a concurrent run and to the host's nobody
// processes when it has a host id of its own; sharing nobody
// (sharedNobody, what every root caller's run was) it takes them from
// both. No namespace or cgroup bounds this counter.
func TestEpollWatchesPerRun(t *testing.T) {
	needOwnRunIDs(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv is not installed")
	}
	python, err := lookPath("python3", sandboxPath)
	if err != nil {
		t.Skip("python3 is not installed")
	}
	limit := lowerEpollWatches(t)
	dir := newSkill(t, map[string]string{"hold.py": epollHoldScript, "one.py": epollOneScript})
	// A host process of nobody's, as an NFS or daemon process.
	nobody := func() error {
		out, err := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", epollOneScript).CombinedOutput()
		if err != nil {
			return errors.New(strings.TrimSpace(string(out)) + ": " + err.Error())
		}
		return nil
	}
	if err := nobody(); err != nil {
		t.Skipf("host nobody cannot add an epoll watch before the attack: %v", err)
	}
	other := func(sb Sandbox) error {
		var out, errb bytes.Buffer
		sb.SkillDir, sb.Stdout, sb.Stderr = dir, &out, &errb
		res, err := sb.Run(context.Background(), "one.py", nil)
		if err != nil {
			return err
		}
		if res.ExitCode != 0 {
			return errors.New(strings.TrimSpace(out.String() + errb.String()))
		}
		return nil
	}
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared nobody", false: "own ids"}[shared]
		t.Run(name, func(t *testing.T) {
			sb := Sandbox{sharedNobody: shared, MaxOpenFiles: 4096}
			h := startHeld(t, sb, dir, "hold.py")
			if h.held < limit-epollWatchesSlack {
				t.Fatalf("the run took %d epoll watches of %d", h.held, limit)
			}
			runErr, hostErr := other(Sandbox{sharedNobody: shared}), nobody()
			t.Logf("the run took %d epoll watches (limit %d); another run then got %v, host nobody %v", h.held, limit, runErr, hostErr)
			if r := h.stop(); r.err != nil || r.res.ExitCode != 0 {
				t.Fatalf("the holding run: %v exit %d stderr %s", r.err, exitOf(r.res), r.stderr)
			}
			if shared && (runErr == nil || hostErr == nil) {
				t.Errorf("sharing nobody, the run did not take the watches of all: another run %v, host nobody %v", runErr, hostErr)
			}
			if !shared && (runErr != nil || hostErr != nil) {
				t.Errorf("with its own id, the run took the watches of others: another run %v, host nobody %v", runErr, hostErr)
			}
		})
	}
}

// epollWatchesSlack is what the hold may fall short of the limit: the
// watches of the run's own runtime, none for a python script.
const epollWatchesSlack = 64

// nprocHoldScript forks argv[1] children that wait for its stdin to end
// and says how many it has; a refused fork ends the count.
const nprocHoldScript = `import os, sys
want, kids = int(sys.argv[1]), 0
r, w = os.pipe()
while kids < want:
    try:
        pid = os.fork()
    except OSError as e:
        print(e, file=sys.stderr, flush=True)
        break
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os._exit(0)
    kids += 1
print("held %d" % kids, flush=True)
sys.stdin.read(1)
os.close(w)
`

// TestMaxProcsPerRun: two concurrent runs of a root caller each start
// nearly MaxProcs processes, and both get them all: RLIMIT_NPROC counts
// per host user, and each run is its own.
func TestMaxProcsPerRun(t *testing.T) {
	needOwnRunIDs(t)
	const maxProcs, take = 24, 20
	dir := newSkill(t, map[string]string{"fork.py": nprocHoldScript})
	for _, c := range []struct {
		name    string
		disable []Layer
	}{{"full sandbox", nil}, {"without a cgroup", []Layer{LayerCgroup}}, {"without a user namespace", []Layer{LayerUserNS}}} {
		t.Run(c.name, func(t *testing.T) {
			sb := Sandbox{MaxProcs: maxProcs, Disable: c.disable}
			a := startHeld(t, sb, dir, "fork.py", strconv.Itoa(take))
			b := startHeld(t, sb, dir, "fork.py", strconv.Itoa(take))
			if a.held != take || b.held != take {
				t.Errorf("the runs started %d and %d processes of %d at once, with --max-procs %d", a.held, b.held, take, maxProcs)
			}
			for _, h := range []*heldRun{a, b} {
				if r := h.stop(); r.err != nil || r.res.ExitCode != 0 {
					t.Errorf("run: %v exit %d stderr %s", r.err, exitOf(r.res), r.stderr)
				}
			}
		})
	}
	// The processes of runs sharing nobody count together where the
	// kernel counts RLIMIT_NPROC per host user only; logged, since a
	// kernel that also counts per user namespace keeps them apart.
	sb := Sandbox{MaxProcs: maxProcs, sharedNobody: true}
	a := startHeld(t, sb, dir, "fork.py", strconv.Itoa(take))
	b := startHeld(t, sb, dir, "fork.py", strconv.Itoa(take))
	t.Logf("sharing nobody, the runs started %d and %d processes of %d", a.held, b.held, take)
}

// TestPoolStageBackAfterRefusal: a run of a pool whose init processes have
// ids of their own reserves one before its checks; refused, it gives the
// init process back with its id, and the next run takes it.
func TestPoolStageBackAfterRefusal(t *testing.T) {
	dir, sb := pooledHold(t)
	refused := sb
	refused.SkillDir = dir
	if _, err := refused.Run(context.Background(), "missing.py", nil); err == nil {
		t.Fatal("a missing script ran")
	}
	if st := sb.Pool.Stats(); st.Taken != 0 || st.Died != 0 {
		t.Errorf("after the refusal: %+v, want the stage back unused", st)
	}
	m := marker(t)
	startHeld(t, sb, dir, "hold.py", m)
	if uid := hostUIDOf(t, m); !identity.IsRunID(uint32(uid)) {
		t.Errorf("the pooled run runs as host uid %d", uid)
	}
	if st := sb.Pool.Stats(); st.Taken != 1 || st.Died != 0 || st.Prebuilt != 1 {
		t.Errorf("the run did not take the stage given back: %+v", st)
	}
}
