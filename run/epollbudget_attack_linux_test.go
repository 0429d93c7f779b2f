//go:build linux && (amd64 || arm64)

package run

import (
	"errors"
	"os"
	"os/exec"
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
