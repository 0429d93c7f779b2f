package run

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
)

// startSleep starts /bin/sleep 30 as a child of the test, outside os/exec
// (whose *os.Process would reap it on its own terms).
func startSleep(t *testing.T) *child {
	t.Helper()
	pid, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		t.Skipf("cannot start /bin/sleep: %v", err)
	}
	return newChild(pid)
}

// TestChildKillWait checks child: Kill ends the process, Wait reaps it and
// keeps its status and usage, and once it is reaped neither Kill nor
// another Wait touches the pid again (which may by then be another
// process's).
func TestChildKillWait(t *testing.T) {
	c := startSleep(t)
	if _, _, ok := c.exitState(); ok || c.reaped() {
		t.Fatal("exit state before Wait")
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	ws, ru, ok := c.exitState()
	if !ok || !c.reaped() || ru == nil {
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
func TestChildKillRacesWait(t *testing.T) {
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
		if ws, _, ok := c.exitState(); !ok || !ws.Signaled() {
			t.Fatalf("exit state %v, %v", ws, ok)
		}
	}
}

// TestChildGone checks a child reaped behind Wait's back (as when the
// program ignores SIGCHLD): Wait reports it, no exit state is made up,
// and no signal goes to its pid after, which may by then be another
// process's.
func TestChildGone(t *testing.T) {
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
	if _, _, ok := c.exitState(); ok || c.hasExitState() {
		t.Error("an exit state for a child reaped elsewhere")
	}
	if err := c.Kill(); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Kill of a child reaped elsewhere: %v, want os.ErrProcessDone", err)
	}
	if c.pidfd != -1 {
		t.Errorf("pidfd %d still open", c.pidfd)
	}
}
