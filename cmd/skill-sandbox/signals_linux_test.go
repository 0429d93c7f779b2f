package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sigIgn returns the process's ignored-signal mask (SigIgn of
// /proc/self/status).
func sigIgn(t *testing.T) uint64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigIgn:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no SigIgn in /proc/self/status")
	return 0
}

// TestCatchSignals checks catchSignals: once it returns, SIGPIPE is
// ignored and a SIGTERM waits in the channel instead of ending the
// process; stopSignals gives SIGPIPE its handling back.
func TestCatchSignals(t *testing.T) {
	s := catchSignals()
	if sigIgn(t)&(1<<(syscall.SIGPIPE-1)) == 0 {
		t.Error("SIGPIPE not ignored when catchSignals returns")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		stopSignals(s)
		t.Fatal(err)
	}
	select {
	case sig := <-s:
		if sig != syscall.SIGTERM {
			t.Errorf("got %v, want SIGTERM", sig)
		}
	case <-time.After(5 * time.Second):
		t.Error("SIGTERM did not arrive in the channel")
	}
	stopSignals(s)
	if sigIgn(t)&(1<<(syscall.SIGPIPE-1)) != 0 {
		t.Error("SIGPIPE still ignored after stopSignals")
	}
}

// TestSignalRightAfterStartRun sends SIGTERM or SIGINT to a plain run (no
// record) 0 to 4 ms after exec, across its start, 100 times. One that
// comes before main has caught the signals must find nothing begun, the
// script not run; one after ends the run with 128+N, or comes after it
// and changes nothing.
func TestSignalRightAfterStartRun(t *testing.T) {
	if testing.Short() {
		t.Skip("100 runs")
	}
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	var early, caught int
	for i := range 100 {
		sig := syscall.SIGTERM
		if i%2 == 1 {
			sig = syscall.SIGINT
		}
		cmd := exec.Command(cliBinary, "run", "--quiet", skill, "ok.sh")
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%40) * 100 * time.Microsecond)
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			caught++ // after the script had finished
			continue
		}
		ws := exitErr.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled() && ws.Signal() == sig:
			early++
			if stdout.Len() > 0 {
				t.Fatalf("try %d: killed by %v after the script ran: %q", i, sig, stdout.String())
			}
		case ws.ExitStatus() == 128+int(sig):
			caught++
		default:
			t.Fatalf("try %d: %v", i, err)
		}
	}
	t.Logf("%d of 100 signals caught; %d arrived before they were caught", caught, early)
}
