package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestUsage wants exit status 2 for a misuse, before anything starts.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-replicas", "2"}, {"-runs", "1"}, {"extra"}, {"-nosuch"}} {
		if got := run(args, io.Discard, io.Discard); got != 2 {
			t.Errorf("servesim %q: exit %d, want 2", args, got)
		}
	}
}

// TestReconcile matches client results with audit records: a run a
// client saw complete without a record is a problem, a record no client
// saw complete is only counted.
func TestReconcile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	reps := []*replica{
		{n: 0, addr: "127.0.0.1:1", audit: write("a0", `{"request_id":"r1","tool":"run"}`+"\n")},
		{n: 1, addr: "127.0.0.1:2", audit: write("a1", `{"request_id":"r2"}`+"\n"+`{"request_id":"r9"}`+"\n")},
		{n: 2, addr: "127.0.0.1:3", audit: write("a2", "")},
	}
	tests := []struct {
		name              string
		results           []result
		unrecorded, extra int
	}{
		{"all recorded", []result{
			{status: 200, upstream: "127.0.0.1:1", ids: []string{"e1", "r1"}},
			{status: 200, upstream: "127.0.0.1:2", ids: []string{"r2"}},
			{status: 502, upstream: "127.0.0.1:1"},
			{err: "connection reset"},
		}, 0, 1},
		{"one unrecorded", []result{
			{status: 200, upstream: "127.0.0.1:3", ids: []string{"r3"}},
			{status: 200, upstream: "127.0.0.1:2", ids: []string{"r2"}},
		}, 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &report{results: tt.results}
			rep.reconcile(reps)
			if rep.unrecorded != tt.unrecorded || rep.extra != tt.extra {
				t.Errorf("unrecorded %d, extra %d; want %d, %d", rep.unrecorded, rep.extra, tt.unrecorded, tt.extra)
			}
			if (len(rep.problems) > 0) != (tt.unrecorded > 0) {
				t.Errorf("problems %q", rep.problems)
			}
		})
	}
}
