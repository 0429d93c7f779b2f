package main

import (
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestNodeAddressSpaceHint: the hint names --memory 1536 only when V8
// failed to reserve its address space under the plain --memory limit.
func TestNodeAddressSpaceHint(t *testing.T) {
	v8 := []byte("\n#\n# Fatal process OOM in Failed to reserve virtual memory for CodeRange\n#\n")
	tests := []struct {
		name   string
		asMB   int
		stderr []byte
		want   string // substring of the hint, "" for none
	}{
		{"plain limit, V8 failed", 512, v8, "needs --memory 1536"},
		{"node's allowance applied", 1536, v8, ""},
		{"plain limit, other failure", 512, []byte("MemoryError\n"), ""},
		{"not started", 0, v8, ""},
	}
	for _, tt := range tests {
		res := &run.Result{AddressSpaceMB: tt.asMB, Stderr: run.Output{Captured: tt.stderr}}
		got := nodeAddressSpaceHint(res, 512)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
