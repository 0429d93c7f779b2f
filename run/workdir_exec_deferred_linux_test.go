package run

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter collects output and hands its first line over once written.
type lineWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if line, _, ok := strings.Cut(w.buf.String(), "\n"); ok && w.first != nil {
		w.first <- line
		w.first = nil
	}
	return len(p), nil
}

// TestDeferredWorkDirNotRemovedIfForeign: with a mount namespace the work
// folder exists only in the sandbox; a folder someone else puts at its
// host path during the run (the name is the script's $TMPDIR, and shows in
// mountinfo) is not removed by the run's cleanup, and the run's own work
// folder leaves nothing on the host.
func TestDeferredWorkDirNotRemovedIfForeign(t *testing.T) {
	fullIsolation(t)
	dir := newSkill(t, map[string]string{"tmp.py": "import os, sys, time\nprint(os.environ['TMPDIR'], flush=True)\ntime.sleep(0.5)\n"})
	first := make(chan string, 1)
	out := &lineWriter{first: first}
	sb := Sandbox{SkillDir: dir, Stdout: out, Stderr: os.Stderr, Timeout: 20 * time.Second}
	type result struct {
		res *Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := sb.Run(context.Background(), "tmp.py", nil)
		done <- result{res, err}
	}()
	var work string
	select {
	case work = <-first:
	case r := <-done:
		t.Fatalf("the run ended before printing its work folder: %v", r.err)
	}
	if !strings.Contains(work, "skill-sandbox-run-") {
		t.Fatalf("TMPDIR %q is not a work folder", work)
	}
	if _, err := os.Lstat(work); err == nil {
		t.Fatalf("the work folder %s exists on the host behind a mount namespace", work)
	}
	// Someone else's folder at that name (this test's uid is not the
	// sandbox identity's when it runs as root; otherwise it is the
	// caller's own, which the cleanup may remove).
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(work)
	os.WriteFile(work+"/keep", []byte("x"), 0o644)
	r := <-done
	if r.err != nil || r.res.ExitCode != 0 {
		t.Fatalf("err %v exit %d", r.err, r.res.ExitCode)
	}
	r.res.WaitCleanup()
	uid, _ := sandboxIdentity()
	_, err := os.Stat(work + "/keep")
	switch {
	case uid != os.Getuid() && err != nil:
		t.Errorf("the cleanup removed %s, a folder the run never made: %v", work, err)
	case uid == os.Getuid():
		t.Logf("running as the sandbox identity: the folder is the caller's own (kept: %v)", err == nil)
	}
}
