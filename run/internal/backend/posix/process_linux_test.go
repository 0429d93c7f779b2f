package posix

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// startSleep starts /bin/sleep 30 as a child of the test, outside os/exec
// (whose *os.Process would reap it on its own terms).
func startSleep(t *testing.T) *Process {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		t.Skipf("cannot start /bin/sleep: %v", err)
	}
	return NewProcess(pid)
}

// TestChildKillWait checks child: Kill ends the process, Wait reaps it and
// keeps its status and usage, and once it is reaped neither Kill nor
// another Wait touches the pid again (which may by then be another
// process's).
func TestInitProcessKillWait(t *testing.T) {
	c := startSleep(t)
	if _, _, ok := c.ExitState(); ok || c.HasExitState() {
		t.Fatal("exit state before Wait")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	ws, ru, ok := c.ExitState()
	if !ok || !c.HasExitState() || ru == nil {
		t.Fatalf("exit state %v, %v, %v after Wait", ws, ru, ok)
	}
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("status %v, want killed by SIGKILL", ws)
	}
	if ru.Maxrss <= 0 {
		t.Errorf("resource usage %+v: no peak RSS", ru)
	}
	if err := c.Kill(); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Kill after Wait: %v, want os.ErrProcessDone", err)
	}
	if err := c.Wait(); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("second Wait: %v, want os.ErrProcessDone", err)
	}
	if c.pidfd != -1 {
		t.Errorf("pidfd %d still open after Wait", c.pidfd)
	}
}

// TestChildKillRacesWait kills a process from several goroutines while
// another reaps it (run with -race): every Kill either reaches the
// process or reports it reaped, and Wait reaps it once.
func TestInitProcessKillRacesWait(t *testing.T) {
	for range 20 {
		c := startSleep(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if err := c.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
						t.Errorf("Kill: %v", err)
						return
					}
				}
			}()
		}
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if ws, _, ok := c.ExitState(); !ok || !ws.Signaled() {
			t.Fatalf("exit state %v, %v", ws, ok)
		}
	}
}

// TestChildGone checks a child reaped behind Wait's back (as when the
// program ignores SIGCHLD): Wait reports it, no exit state is made up,
// and no signal goes to its pid after, which may by then be another
// process's.
func TestInitProcessGone(t *testing.T) {
	c := startSleep(t)
	if err := syscall.Kill(c.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(c.pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err == nil {
		t.Fatal("Wait of a child reaped elsewhere: no error")
	}
	if _, _, ok := c.ExitState(); ok || c.HasExitState() {
		t.Error("an exit state for a child reaped elsewhere")
	}
	if err := c.Kill(); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Kill of a child reaped elsewhere: %v, want os.ErrProcessDone", err)
	}
	if c.pidfd != -1 {
		t.Errorf("pidfd %d still open", c.pidfd)
	}
}

// TestChildWaitSweepsBeforeReaping checks WaitSweeping: sweep runs once
// the process has exited and before it is reaped (a zombie: its pid, and
// its group's and session's id, still its own), and once only; and also
// when the wait fails.
func TestInitProcessWaitSweepsBeforeReaping(t *testing.T) {
	c := startSleep(t)
	c.Kill()
	calls := 0
	err := c.WaitSweeping(func() {
		calls++
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
		if err != nil {
			t.Errorf("sweep: %v, want the process still there", err)
			return
		}
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) == 0 || f[0] != "Z" {
			t.Errorf("sweep: process state %q, want a zombie (Z)", f)
		}
	})
	if err != nil || calls != 1 {
		t.Fatalf("WaitSweeping: %v, sweep called %d times", err, calls)
	}
	calls = 0
	if err := c.WaitSweeping(func() { calls++ }); !errors.Is(err, os.ErrProcessDone) || calls != 1 {
		t.Errorf("second WaitSweeping: %v, sweep called %d times; want os.ErrProcessDone, once", err, calls)
	}
}

// TestChildWaitKeepsToItsPidfd reaps a child behind Wait's back once its
// pidfd is open, and makes another child of the test take its pid
// (/proc/sys/kernel/ns_last_pid, root only): Wait must not wait for or
// reap that other process, nor take its status, and Kill must not reach
// it.
func TestInitProcessWaitKeepsToItsPidfd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to set ns_last_pid")
	}
	c := startSleep(t)
	c.mu.Lock()
	fd := c.pidfdLocked()
	c.mu.Unlock()
	if fd < 0 {
		t.Skip("no pidfd here")
	}
	syscall.Kill(c.pid, syscall.SIGKILL)
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(c.pid, &ws, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(c.pid-1)), 0); err != nil {
		t.Skipf("ns_last_pid: %v", err)
	}
	other, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(other, syscall.SIGKILL)
		syscall.Wait4(other, &ws, 0, nil)
	}()
	if other != c.pid {
		t.Skipf("the pid went to another process first (%d, want %d)", other, c.pid)
	}
	if err := c.Kill(); err == nil {
		t.Error("Kill of a child reaped elsewhere reached its pid")
	}
	if err := c.Wait(); err == nil {
		t.Error("Wait of a child reaped elsewhere: no error")
	}
	if c.HasExitState() {
		t.Error("an exit state made up from another process")
	}
	// The other process is untouched: still running, and still ours to reap.
	if err := syscall.Kill(other, 0); err != nil {
		t.Errorf("the process that took the pid: %v", err)
	}
	if pid, err := syscall.Wait4(other, &ws, syscall.WNOHANG, nil); pid != 0 || err != nil {
		t.Errorf("the process that took the pid was reaped or is gone: %d, %v", pid, err)
	}
}
