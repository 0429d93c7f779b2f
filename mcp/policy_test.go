package mcp

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/policy"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestSandboxForIsolation: the template's RequireIsolation (the command
// line's --require-isolation) wins over an operator policy's
// allow_degraded, through policy.Resolve; without it the policy's
// allow_degraded applies.
func TestSandboxForIsolation(t *testing.T) {
	degraded := &policy.Policy{Sandbox: policy.Options{AllowDegraded: true}}
	tests := []struct {
		name    string
		require bool
		op      *policy.Policy
		want    bool
	}{
		{"policy allows degraded", false, degraded, true},
		{"require-isolation wins", true, degraded, false},
		{"no policy", false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := NewServer(Config{SkillDirs: []string{skillsDir(t)}, Policy: tt.op,
				Sandbox: run.Sandbox{RequireIsolation: tt.require}})
			if err != nil {
				t.Fatal(err)
			}
			probe := filepath.Join(srv.cfg.SkillDirs[0], "probe")
			sb, err := srv.sandboxFor(probe, probe, true)
			if err != nil {
				t.Fatal(err)
			}
			if sb.AllowDegraded != tt.want || sb.RequireIsolation != tt.require {
				t.Errorf("AllowDegraded %v RequireIsolation %v, want %v %v", sb.AllowDegraded, sb.RequireIsolation, tt.want, tt.require)
			}
		})
	}
}

// TestAnnouncedTimeout: the limit the tool descriptions and records start
// from is the flag's, else the operator policy's, else the default.
func TestAnnouncedTimeout(t *testing.T) {
	op := &policy.Policy{Resources: policy.Resources{Timeout: 7 * time.Second}}
	tests := []struct {
		name  string
		flags policy.Flags
		op    *policy.Policy
		want  string
	}{
		{"default", policy.Flags{}, nil, "at most 30 ("},
		{"operator policy", policy.Flags{}, op, "at most 7 ("},
		{"flag", policy.Flags{Timeout: 3 * time.Second}, op, "at most 3 ("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := NewServer(Config{SkillDirs: []string{skillsDir(t)}, Flags: tt.flags, Policy: tt.op})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(srv.tools())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("tool descriptions lack %q:\n%s", tt.want, b)
			}
			if got := srv.newRunCall(callInfo{}, ToolRunScript).meta.Timeout; got.String() != strings.TrimSuffix(strings.TrimPrefix(tt.want, "at most "), " (")+"s" {
				t.Errorf("a call's record starts with timeout %v, want %s", got, tt.want)
			}
		})
	}
}
