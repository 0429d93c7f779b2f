package gvisor

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// fakeRunsc is a runsc whose "events --stats" runs body (sh).
func fakeRunsc(t *testing.T, body string) *Runtime {
	t.Helper()
	path := filepath.Join(t.TempDir(), "runsc")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Runtime{Path: path}
}

func TestMemoryUsage(t *testing.T) {
	tests := []struct {
		name, body string
		want       int64
		ok         bool
	}{
		{"runsc 20221219's stats", `echo '{"type":"stats","id":"x","data":{"cpu":{"usage":{"total":1}},"memory":{"usage":{"limit":0,"usage":223236096,"failcnt":0}},"pids":{"current":1}}}'`, 223236096, true},
		{"no memory", `echo '{"type":"stats","data":{}}'`, 0, false},
		{"not json", `echo 'loading sandbox: file does not exist'`, 0, false},
		{"failed", `echo '{"data":{"memory":{"usage":{"usage":1}}}}'; exit 1`, 0, false},
		{"endless", `yes '[[[[[[[['`, 0, false},
		{"nothing", `true`, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fakeRunsc(t, tc.body).memoryUsage(nil, "x")
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("%d, %v; want %d (ok %v)", got, err, tc.want, tc.ok)
			}
		})
	}
}

// TestWatchMemory: past the limit the watch reports watch.Memory, which
// ends the run; under it, it reports nothing and returns when the run
// ends.
func TestWatchMemory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage string
		limit int64
		want  string
	}{
		{"past", "2000", 1000, watch.Memory},
		{"under", "999", 1000, ""},
		{"no answer", "x", 1000, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fakeRunsc(t, `echo '{"data":{"memory":{"usage":{"usage":`+tc.usage+`}}}}'`)
			wd := backend.NewWatchdog()
			stop := make(chan struct{})
			wd.Start(context.Background(), time.Hour, func() { close(stop) })
			returned := make(chan struct{})
			go func() {
				r.watchMemory(nil, "x", tc.limit, runscCgroup{}, wd, stop)
				close(returned)
			}()
			if tc.want == "" {
				time.Sleep(300 * time.Millisecond) // a few looks
				close(stop)
			}
			<-returned
			<-stop // the watchdog ended the run, or the test did
			wd.Finish()
			if got := wd.Limit(); got != tc.want {
				t.Fatalf("limit %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWatchMemoryCgroup: as root the watch reads runsc's cgroup (here a
// folder of files as cgroup v1 writes them): its charge less the file
// cache, past the limit and gVisor's own allowance, ends the run and
// kills the cgroup's processes.
func TestWatchMemoryCgroup(t *testing.T) {
	const limit = 512 << 20
	for _, tc := range []struct {
		name         string
		usage, files int64
		want         string
	}{
		{"gVisor's memory past", limit + gvisorOwnMemory + 1, 0, watch.Memory},
		{"within gVisor's own allowance", limit + gvisorOwnMemory, 0, ""},
		{"file cache is not gVisor's", 2 * limit, limit + 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			victim := exec.Command("sleep", "60")
			if err := victim.Start(); err != nil {
				t.Fatal(err)
			}
			defer victim.Process.Kill()
			files := map[string]string{
				"memory.usage_in_bytes": fmt.Sprint(tc.usage),
				"memory.stat":           fmt.Sprintf("cache 1\ntotal_active_file %d\ntotal_inactive_file 0\ntotal_shmem 5\n", tc.files),
				"cgroup.procs":          fmt.Sprint(victim.Process.Pid),
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cg := runscCgroup{filepath.Join(dir, "memory.usage_in_bytes"), filepath.Join(dir, "memory.stat"), filepath.Join(dir, "cgroup.procs"), []string{"total_active_file", "total_inactive_file"}}
			// runsc is never asked as root: a look would fail the test.
			r := &Runtime{Path: "/nonexistent/runsc"}
			wd := backend.NewWatchdog()
			stop := make(chan struct{})
			wd.Start(context.Background(), time.Hour, func() { close(stop) })
			returned := make(chan struct{})
			go func() {
				r.watchMemory(nil, "x", limit, cg, wd, stop)
				close(returned)
			}()
			if tc.want == "" {
				time.Sleep(100 * time.Millisecond)
				close(stop)
			}
			<-returned
			<-stop
			wd.Finish()
			if got := wd.Limit(); got != tc.want {
				t.Fatalf("limit %q, want %q", got, tc.want)
			}
			if tc.want == "" {
				if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
					t.Errorf("the cgroup's process was ended: %v", err)
				}
				return
			}
			if err := victim.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Errorf("the cgroup's process: %v, want killed", err)
			}
		})
	}
}
