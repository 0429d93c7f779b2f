//go:build linux && (amd64 || arm64)

package run

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// epollLimitEnv passes the lowered fs.epoll.max_user_watches to the
// rerun of TestEpollBudgetAttack as uid 65534, which cannot lower it.
const epollLimitEnv = "SKILL_SANDBOX_TEST_EPOLL_LIMIT"

// epollAttackBudget is the budget of the attacking run: far below the
// lowered limit, so that the run without its budget would take all.
const epollAttackBudget = 1000

// TestEpollBudgetAttack: a run whose host uid others share (a root
// caller's run that stays nobody; as uid 65534 every run, which is the
// caller) adds epoll watches until the kernel refuses. With
// fs.epoll.max_user_watches lowered for the test it would take all of
// them and a host process of the same uid would get ENOSPC; with the
// supervisor counting its additions it gets ENOSPC past its budget and
// the host process its watch, and the record says so.
func TestEpollBudgetAttack(t *testing.T) {
	python, err := lookPath("python3", sandboxPath)
	if err != nil {
		t.Skip("python3 is not installed")
	}
	var limit int
	var host func() error
	// The rerun as uid 65534 must not pass by skipping.
	rerun := os.Geteuid() != 0 && os.Getenv(epollLimitEnv) != ""
	skipf := t.Skipf
	if rerun {
		skipf = t.Fatalf
	}
	switch {
	case os.Geteuid() == 0:
		needOwnRunIDs(t)
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("setpriv is not installed")
		}
		limit = lowerEpollWatches(t)
		host = func() error {
			return epollOne(exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", epollOneScript))
		}
		// The same attack as uid 65534, which only root can set up.
		t.Run("uid 65534", func(t *testing.T) {
			out, err := rerunSuite("^TestEpollBudgetAttack$", []string{epollLimitEnv + "=" + strconv.Itoa(limit)},
				&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{}}})
			t.Logf("as uid %d:\n%s", nobodyUID, out)
			// The rerun fails rather than skips (see rerun below).
			if err != nil || !strings.Contains(out, "PASS") {
				t.Fatalf("as uid %d: %v", nobodyUID, err)
			}
		})
	case rerun:
		limit, _ = strconv.Atoi(os.Getenv(epollLimitEnv))
		host = func() error { return epollOne(exec.Command(python, "-c", epollOneScript)) }
	default:
		t.Skip("run as root: it lowers fs.epoll.max_user_watches, and reruns itself as uid 65534")
	}
	if err := host(); err != nil {
		skipf("the host process cannot add an epoll watch before the attack: %v", err)
	}
	dir := newSkill(t, map[string]string{"hold.py": epollHoldScript})
	sb := Sandbox{MaxEpollWatches: epollAttackBudget, MaxOpenFiles: 4096, sharedNobody: os.Geteuid() == 0}
	t.Run("own init process", func(t *testing.T) { epollAttack(t, sb, dir, limit, host) })
	if os.Geteuid() != 0 {
		// A root caller's pool has run ids of its own.
		t.Run("pooled", func(t *testing.T) {
			sb.Pool = newTestPool(t, 1, time.Hour, sb)
			epollAttack(t, sb, dir, limit, host)
		})
	}
}

// epollAttack runs epollHoldScript in sb and checks that the run held
// its budget and no more, that host got its watch meanwhile, and that
// the record names the budget.
func epollAttack(t *testing.T, sb Sandbox, dir string, limit int, host func() error) {
	h := startHeld(t, sb, dir, "hold.py")
	hostErr := host()
	r := h.stop()
	t.Logf("limit %d, budget %d: the run held %d watches, the host process then got %v", limit, epollAttackBudget, h.held, hostErr)
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("the holding run: %v exit %d stderr %s", r.err, exitOf(r.res), r.stderr)
	}
	if h.held > epollAttackBudget || h.held < epollAttackBudget-epollWatchesSlack {
		t.Errorf("the run held %d epoll watches, budget %d (limit %d)", h.held, epollAttackBudget, limit)
	}
	if hostErr != nil {
		t.Errorf("the run took the epoll watches of its host uid's other processes: %v", hostErr)
	}
	want := SharedQuota{Counter: QuotaEpollWatches, UID: r.res.SandboxUID, Bound: BoundRunBudget, Budget: epollAttackBudget}
	if want.UID == 0 {
		want.UID = os.Geteuid()
	}
	if len(r.res.SharedQuotas) != 1 || r.res.SharedQuotas[0] != want {
		t.Errorf("shared quotas %+v, want %+v", r.res.SharedQuotas, want)
	}
}

// epollOne runs epollOneScript's command and returns its failure.
func epollOne(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return errors.New(strings.TrimSpace(string(out)) + ": " + err.Error())
	}
	return nil
}

// epollOrphanScript leaves a child that adds an epoll watch every 50 ms
// and appends "ok" or the errno's name to argv[1], until one fails or 30
// s pass; the script itself waits for its stdin to end.
const epollOrphanScript = `import errno, os, select, sys, time
out = sys.argv[1]
if os.fork() == 0:
    r, w = os.pipe()
    deadline = time.time() + 30
    while time.time() < deadline:
        ep = select.epoll()
        try:
            ep.register(r, select.EPOLLIN)
            res = "ok"
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        ep.close()
        with open(out, "a") as f:
            f.write(res + "\n")
        if res != "ok":
            break
        time.sleep(0.05)
    os._exit(0)
print("held 1", flush=True)
sys.stdin.read(1)
`

// epollHelperEnv names, in a rerun of this binary, the folder of
// TestEpollSupervisorHelper's run.
const epollHelperEnv = "SKILL_SANDBOX_TEST_EPOLL_HELPER"

// TestEpollSupervisorHelper is the supervisor TestEpollAfterSupervisorDeath
// kills: it runs epollOrphanScript, on a shared uid and without a PID
// namespace (so that the script's child outlives the run), until killed.
func TestEpollSupervisorHelper(t *testing.T) {
	dir := os.Getenv(epollHelperEnv)
	if dir == "" {
		t.Skip("run by TestEpollAfterSupervisorDeath")
	}
	stdinR, _, err := os.Pipe() // never closed: the run waits until killed
	if err != nil {
		t.Fatal(err)
	}
	sb := Sandbox{SkillDir: filepath.Join(dir, "skill"), WritePaths: []string{filepath.Join(dir, "out")}, Stdin: stdinR, Stdout: os.Stdout, Stderr: os.Stderr,
		Disable: []Layer{LayerPIDNS, LayerCgroup}, sharedNobody: os.Geteuid() == 0, MaxEpollWatches: 10000, Timeout: time.Minute}
	res, err := sb.Run(context.Background(), "orphan.py", []string{filepath.Join(dir, "out", "adds")})
	t.Fatalf("the run ended before it was killed: %v %+v", err, res)
}

// TestEpollAfterSupervisorDeath: once the supervisor that counts a run's
// epoll additions is killed, a process of the run that outlived it (no PID
// namespace) neither hangs on its next addition nor adds it uncounted: the
// kernel answers ENOSYS, the listener being gone.
func TestEpollAfterSupervisorDeath(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("run as root: a root caller's run on nobody's uid stands for a shared one")
	}
	needOwnRunIDs(t)
	if _, err := lookPath("python3", sandboxPath); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	skill := newSkill(t, map[string]string{"orphan.py": epollOrphanScript})
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(os.Chmod(dir, 0o755), os.Chmod(out, 0o777), os.Symlink(skill, filepath.Join(dir, "skill"))); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/proc/self/exe", "-test.run", "^TestEpollSupervisorHelper$", "-test.count", "1")
	cmd.Env = append(os.Environ(), epollHelperEnv+"="+dir)
	var helperOut strings.Builder
	cmd.Stdout, cmd.Stderr = &helperOut, &helperOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	adds := filepath.Join(out, "adds")
	waitFor := func(what string, ok func(string) bool) string {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			b, _ := os.ReadFile(adds)
			if ok(string(b)) {
				return string(b)
			}
		}
		b, _ := os.ReadFile(adds)
		t.Fatalf("no %s in 30 s: additions %q; the supervisor: %s", what, b, helperOut.String())
		return ""
	}
	waitFor("counted addition", func(s string) bool { return strings.HasPrefix(s, "ok\n") })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	got := waitFor("failed addition", func(s string) bool {
		return strings.HasSuffix(s, "\n") && strings.Count(s, "\n") > strings.Count(s, "ok\n")
	})
	lines := strings.Split(strings.TrimSpace(got), "\n")
	if last := lines[len(lines)-1]; last != "ENOSYS" {
		t.Errorf("after the supervisor's death the run's addition got %s, want ENOSYS (all: %q)", last, lines)
	}
	t.Logf("the run's additions: %d ok, then %s", len(lines)-1, lines[len(lines)-1])
}
