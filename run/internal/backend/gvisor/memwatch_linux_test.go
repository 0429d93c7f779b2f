package gvisor

import (
	"context"
	"os"
	"path/filepath"
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
				r.watchMemory(nil, "x", tc.limit, wd, stop)
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
