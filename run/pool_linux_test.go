package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/writefolder"
)

// newTestPool starts a pool and closes it at the end of the test. It skips
// the test where user namespaces are not available (the pool needs them).
func newTestPool(t *testing.T, size int, maxIdle time.Duration, like Sandbox) *Pool {
	t.Helper()
	if degradedRerun() {
		t.Skip("pooled init processes need user namespaces, which this re-run forbids")
	}
	pl, err := NewPool(size, maxIdle, like)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pl.Close() })
	return pl
}

// idlePIDs returns the pids of the init processes waiting in pl.
func idlePIDs(pl *Pool) []int {
	pids, _, _ := pl.p.Idle()
	return pids
}

// waitIdle waits until pl has n init processes waiting and returns their
// pids. It waits for a state; nothing is timed.
func waitIdle(t *testing.T, pl *Pool, n int) []int {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if pids := idlePIDs(pl); len(pids) >= n {
			return pids
		}
		_, failed, disabled := pl.p.Idle()
		if disabled != nil {
			t.Skipf("the pool cannot start stages here: %v", disabled)
		}
		if failed != nil {
			t.Fatalf("the pool failed to start a stage: %v", failed)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool never had %d stages waiting", n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ourChild reports whether pid is still a process of ours (a child of the
// test, reaped or not): an init process that was killed and reaped is not.
func ourChild(pid int) bool {
	ppid, ok := proc.StatusValue("/proc/"+strconv.Itoa(pid)+"/status", "PPid:")
	return ok && ppid == strconv.Itoa(os.Getpid())
}

// TestPoolRuns runs scripts on pooled init processes: each run takes a
// waiting init process (never one used before: the init process is gone
// after its run), gets its own stdin, output, grants and layers exactly as
// a run with an init process of its own, and sees nothing of the run before
// it.
func TestPoolRuns(t *testing.T) {
	dir := newSkill(t, map[string]string{
		"echo.sh":   "#!/bin/sh\necho \"in:$(cat)\"\n",
		"linger.sh": "#!/bin/sh\n(sleep 300 &) ; echo pooled-secret > \"$HOME/secret\"; echo left\n",
		"procs.sh":  "#!/bin/sh\nfor p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done; ls \"$HOME\"\n",
		"write.sh":  "#!/bin/sh\necho written > \"$1/out.txt\"\n",
		"layers.sh": "#!/bin/sh\nexit 0\n",
	})
	out := t.TempDir()
	if _, err := writefolder.Make(filepath.Join(out, "w"), BackendNative); err != nil {
		t.Fatal(err)
	}
	write := filepath.Join(out, "w")
	pl := newTestPool(t, 1, 0, Sandbox{})
	fresh := runIn(t, Sandbox{}, dir, "layers.sh")
	for _, tc := range []struct {
		name   string
		sb     Sandbox
		script string
		args   []string
		check  func(t *testing.T, o outcome)
	}{
		{"stdin from a reader", Sandbox{Stdin: strings.NewReader("hello")}, "echo.sh", nil, func(t *testing.T, o outcome) {
			if o.stdout != "in:hello\n" {
				t.Errorf("stdout %q", o.stdout)
			}
		}},
		{"no stdin", Sandbox{}, "echo.sh", nil, func(t *testing.T, o outcome) {
			if o.stdout != "in:\n" {
				t.Errorf("stdout %q", o.stdout)
			}
		}},
		{"stdin from a file", Sandbox{Stdin: openFile(t, filepath.Join(dir, "SKILL.md"))}, "echo.sh", nil, func(t *testing.T, o outcome) {
			if !strings.Contains(o.stdout, "name: probe") {
				t.Errorf("stdout %q", o.stdout)
			}
		}},
		{"write grant", Sandbox{WritePaths: []string{write}}, "write.sh", []string{write}, func(t *testing.T, o outcome) {
			if b, _ := os.ReadFile(filepath.Join(write, "out.txt")); string(b) != "written\n" {
				t.Errorf("out.txt %q", b)
			}
		}},
		{"same layers as a stage of its own", Sandbox{}, "layers.sh", nil, func(t *testing.T, o outcome) {
			if !slices.Equal(o.res.Applied, fresh.res.Applied) || len(o.res.Missing) != len(fresh.res.Missing) {
				t.Errorf("applied %v missing %v; a stage of its own: %v %v", o.res.Applied, o.res.Missing, fresh.res.Applied, fresh.res.Missing)
			}
		}},
		{"a run leaves a process and a file", Sandbox{}, "linger.sh", nil, func(t *testing.T, o outcome) {
			if o.stdout != "left\n" {
				t.Errorf("stdout %q", o.stdout)
			}
		}},
		{"the next run sees nothing of it", Sandbox{}, "procs.sh", nil, func(t *testing.T, o outcome) {
			if strings.Contains(o.stdout, "sleep") || strings.Contains(o.stdout, "secret") {
				t.Errorf("the previous run reached this one:\n%s", o.stdout)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := waitIdle(t, pl, 1)[0]
			before := pl.Stats()
			tc.sb.Pool = pl
			o := runIn(t, tc.sb, dir, tc.script, tc.args...)
			if o.err != nil || o.res.ExitCode != 0 {
				t.Fatalf("err %v exit %d stderr %q", o.err, o.res.ExitCode, o.stderr)
			}
			if got := pl.Stats(); got.Taken != before.Taken+1 {
				t.Fatalf("the run did not take the waiting stage: %+v then %+v", before, got)
			}
			if ourChild(pid) {
				t.Errorf("the stage %d is still there after its run", pid)
			}
			if slices.Contains(idlePIDs(pl), pid) {
				t.Errorf("the stage %d went back into the pool", pid)
			}
			tc.check(t, o)
		})
	}
	if st := pl.Stats(); st.Started < st.Taken {
		t.Errorf("stats %+v: more taken than started", st)
	}
}

func openFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// runWithPool is runIn with the pool set.
func runWithPool(t *testing.T, pl *Pool, sb Sandbox, dir, script string) outcome {
	t.Helper()
	sb.Pool = pl
	return runIn(t, sb, dir, script)
}

// TestPoolReplacesStages checks the pool's life cycle: an init process that
// waited past the maximum is killed and replaced; one that died is
// discarded, not used; a run of another shape starts its own; Close leaves
// no init process.
func TestPoolReplacesStages(t *testing.T) {
	dir := newSkill(t, map[string]string{"ok.sh": "#!/bin/sh\necho ok\n"})
	readDir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\nexec cat\n"})

	t.Run("expired", func(t *testing.T) {
		pl := newTestPool(t, 1, 50*time.Millisecond, Sandbox{})
		first := waitIdle(t, pl, 1)[0]
		deadline := time.Now().Add(time.Minute)
		for pl.Stats().Expired == 0 || ourChild(first) {
			if time.Now().After(deadline) {
				t.Fatalf("the stage %d never expired: %+v", first, pl.Stats())
			}
			time.Sleep(5 * time.Millisecond)
		}
		if next := waitIdle(t, pl, 1)[0]; next == first {
			t.Error("the expired stage is still waiting")
		}
	})

	t.Run("died", func(t *testing.T) {
		pl := newTestPool(t, 1, time.Hour, Sandbox{})
		pid := waitIdle(t, pl, 1)[0]
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The init process is dead (a zombie nobody reaped) before the run.
		deadline := time.Now().Add(time.Minute)
		for state, _ := proc.StatusValue("/proc/"+strconv.Itoa(pid)+"/status", "State:"); !strings.HasPrefix(state, "Z"); state, _ = proc.StatusValue("/proc/"+strconv.Itoa(pid)+"/status", "State:") {
			if time.Now().After(deadline) {
				t.Fatalf("stage %d not dead after SIGKILL: %s", pid, state)
			}
			time.Sleep(time.Millisecond)
		}
		o := runWithPool(t, pl, Sandbox{}, dir, "ok.sh")
		if o.err != nil || o.stdout != "ok\n" {
			t.Fatalf("err %v stdout %q stats %+v", o.err, o.stdout, pl.Stats())
		}
		if st := pl.Stats(); st.Died != 1 || st.Taken != 0 {
			t.Errorf("stats %+v, want the dead stage discarded", st)
		}
	})

	t.Run("hand-over fails", func(t *testing.T) {
		// The send to an init process fails (as for one that died just
		// after the liveness check): the run starts its own, with all of
		// its stdin.
		pl := newTestPool(t, 1, time.Hour, Sandbox{})
		waitIdle(t, pl, 1)
		pl.p.CloseOldestConfig()
		o := runWithPool(t, pl, Sandbox{Stdin: strings.NewReader("all of it")}, readDir, "cat.sh")
		if o.err != nil || o.stdout != "all of it" {
			t.Fatalf("err %v stdout %q", o.err, o.stdout)
		}
		if st := pl.Stats(); st.Died != 1 || st.Taken != 0 || st.Missed != 1 {
			t.Errorf("stats %+v, want the stage discarded and the run on its own", st)
		}
	})

	t.Run("other shape", func(t *testing.T) {
		pl := newTestPool(t, 1, time.Hour, Sandbox{})
		waitIdle(t, pl, 1)
		o := runWithPool(t, pl, Sandbox{AllowNetwork: true}, dir, "ok.sh")
		if o.err != nil || o.stdout != "ok\n" {
			t.Fatalf("err %v stdout %q", o.err, o.stdout)
		}
		if st := pl.Stats(); st.Missed != 1 || st.Taken != 0 {
			t.Errorf("stats %+v, want a miss", st)
		}
	})

	t.Run("closed", func(t *testing.T) {
		pl := newTestPool(t, 2, time.Hour, Sandbox{})
		pids := waitIdle(t, pl, 2)
		if err := pl.Close(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if ourChild(pid) {
				t.Errorf("stage %d left after Close", pid)
			}
		}
		o := runWithPool(t, pl, Sandbox{}, dir, "ok.sh")
		if o.err != nil || o.stdout != "ok\n" {
			t.Fatalf("a run with a closed pool: err %v stdout %q", o.err, o.stdout)
		}
	})
}

// TestPoolRefusesBadSizes checks NewPool's arguments.
func TestPoolRefusesBadSizes(t *testing.T) {
	for _, tc := range []struct {
		size    int
		maxIdle time.Duration
	}{{-1, 0}, {1, -time.Second}} {
		if _, err := NewPool(tc.size, tc.maxIdle, Sandbox{}); !errors.Is(err, ErrBadConfig) {
			t.Errorf("NewPool(%d, %v): %v, want ErrBadConfig", tc.size, tc.maxIdle, err)
		}
	}
}

// TestPoolCgroupAttacks runs the cgroup attacks on pooled init processes:
// an init process waits in a cgroup without limits, and the run's limits
// (memory, pids) must be in force once it takes it.
func TestPoolCgroupAttacks(t *testing.T) {
	fullIsolation(t)
	needCgroup(t)
	pl := newTestPool(t, 1, time.Hour, Sandbox{})
	for _, a := range cgroupAttacks() {
		t.Run(a.name, func(t *testing.T) {
			waitIdle(t, pl, 1)
			before := pl.Stats().Taken
			a.sb.Pool = pl
			runAttack(t, a)
			if pl.Stats().Taken == before {
				t.Errorf("no run took a pooled stage: %+v", pl.Stats())
			}
		})
	}
}

// TestIdleStageOutOfReach checks that an init process waiting in a pool is
// out of reach of the caller's other processes, which share its uid (a
// concurrent run's script with its layers disabled among them): its
// descriptors, the supervisor's home cgroup tasks files included, and its
// namespaces cannot be opened through /proc once its prefix has made it not
// dumpable (initplan's notDumpable). Root reaches any process
// (CAP_SYS_PTRACE), so TestUnprivileged runs this as an unprivileged user.
func TestIdleStageOutOfReach(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reaches every process through CAP_SYS_PTRACE; TestUnprivileged runs this test unprivileged")
	}
	pl := newTestPool(t, 1, 5*time.Minute, Sandbox{}) // not replaced meanwhile
	pid := waitIdle(t, pl, 1)[0]
	dir := "/proc/" + strconv.Itoa(pid)
	uids, _ := proc.StatusValue(dir+"/status", "Uid:")
	if f := strings.Fields(uids); len(f) == 0 || f[0] != strconv.Itoa(os.Geteuid()) {
		t.Fatalf("the stage runs as uid %q, not as the caller: the check below would prove nothing", uids)
	}
	// The init process is in the pool once its prefix is sent; the prefix
	// turns it not dumpable as its first step. Wait for that state.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, errFD := os.ReadDir(dir + "/fd")
		_, errNS := os.Readlink(dir + "/ns/pid")
		if errFD != nil && errNS != nil {
			if !errors.Is(errFD, os.ErrPermission) || !errors.Is(errNS, os.ErrPermission) {
				t.Fatalf("want permission errors, got %v and %v", errFD, errNS)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a waiting stage's descriptors and namespaces stay open to its uid (fd: %v, ns: %v)", errFD, errNS)
		}
		time.Sleep(2 * time.Millisecond)
	}
	for fd := stageconfig.HomeTasksFD; fd < stageconfig.HomeTasksFD+stageconfig.HomeTasksSlots; fd++ {
		if f, err := os.OpenFile(dir+"/fd/"+strconv.Itoa(fd), os.O_WRONLY, 0); err == nil {
			f.Close()
			t.Errorf("opened the stage's descriptor %d", fd)
		}
	}
}
