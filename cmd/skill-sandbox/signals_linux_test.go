package main

import (
	"os"
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
