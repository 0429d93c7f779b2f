package main

import (
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary act as runTree's reaping wrapper, which
// runTree starts as a copy of the running executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == reapArg {
		os.Exit(reapMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// TestRunTreeWaitsForOrphans checks runTree's two times on a command that
// returns at once and leaves a child behind, as bubblewrap leaves its
// pid 1: the tree is gone only once the orphan, reparented to the
// wrapper, has exited and been reaped.
func TestRunTreeWaitsForOrphans(t *testing.T) {
	const orphan = 300 * time.Millisecond
	tr, err := runTree([]string{"/bin/sh", "-c", "sleep 0.3 & exit 0"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.returned >= orphan {
		t.Errorf("returned after %v: the command itself did not wait for its child", tr.returned)
	}
	if tr.gone < orphan {
		t.Errorf("gone after %v, before the orphan's %v", tr.gone, orphan)
	}
	if tr.gone < tr.returned {
		t.Errorf("gone (%v) before returned (%v)", tr.gone, tr.returned)
	}
}

// TestRunTreeFailure checks that a failing command is an error, not a
// measurement.
func TestRunTreeFailure(t *testing.T) {
	if _, err := runTree([]string{"/bin/sh", "-c", "exit 3"}); err == nil {
		t.Error("a command exiting with status 3 gave no error")
	}
}
