package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestBackendUsageErrors(t *testing.T) {
	skill := newSkill(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "docker"}, `--backend must be native or gvisor, got "docker"`},
		{[]string{"--backend", "gvisor", "--allow-host", "example.com"}, "--backend gvisor does not give a run network access yet"},
		{[]string{"--backend", "gvisor", "--allow-network"}, "--backend gvisor does not give a run network access yet"},
	}
	for _, tt := range tests {
		log := filepath.Join(t.TempDir(), "audit.jsonl")
		args := append(append([]string{"run", "--audit-log", log}, tt.args...), skill, "ok.sh")
		r := runCLI(t, "", args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, tt.want) || strings.Contains(r.Stdout, "out") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tt.args, r.Code, r.Stderr, tt.want)
		}
		if recs := fileRecords(t, log); len(recs) != 1 {
			t.Errorf("%v: %d records, want 1", tt.args, len(recs))
		}
	}
}

func TestBackendGVisorRecord(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	skill := newSkill(t, nil)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	r := runCLI(t, "", "run", "--backend", "gvisor", "--audit-log", log, skill, "ok.sh", "a")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "out a\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	recs := fileRecords(t, log)
	if len(recs) != 1 || recs[0].Backend != "gvisor" || !strings.HasPrefix(recs[0].BackendVersion, "runsc version ") {
		t.Fatalf("records %+v, want one with backend gvisor and runsc's version", recs)
	}
	native := filepath.Join(t.TempDir(), "native.jsonl")
	runCLI(t, "", "run", "--audit-log", native, skill, "ok.sh")
	if recs := fileRecords(t, native); len(recs) != 1 || recs[0].Backend != "" {
		t.Fatalf("native records %+v: want no backend field", recs)
	}
}

// backendPolicy writes an operator policy with the [backend] rule
// "unsigned skills on gvisor, signed ones native", checked against
// allowed, and returns its path.
func backendPolicy(t *testing.T, allowed, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "op.toml")
	src := "[backend]\ndefault = \"gvisor\"\nsigned = \"native\"\n" + extra + "[signature]\nallowed_signers = \"" + allowed + "\"\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBackendByTrust checks that the [backend] signed rule gives a skill
// signed by an allowed key the native backend and every other skill
// gvisor, as policy, list and run say.
func TestBackendByTrust(t *testing.T) {
	signed, allowed := signedSkill(t)
	unsigned := newSkill(t, nil)
	// A signed skill whose files changed after signing is unsigned.
	tampered, allowed2 := signedSkill(t)
	if err := os.WriteFile(filepath.Join(tampered, "scripts", "extra.sh"), []byte("true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, skill, allowed, want, reason string
	}{
		{"signed", signed, allowed, "native", "[backend] signed"},
		{"unsigned", unsigned, allowed, "gvisor", "[backend] default"},
		{"changed after signing", tampered, allowed2, "gvisor", "[backend] default"},
		{"signed by another key", signed, allowed2, "gvisor", "[backend] default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol := backendPolicy(t, tt.allowed, "")
			r := runCLI(t, "", "policy", "--json", "--policy", pol, tt.skill)
			var out struct {
				Backend string `json:"backend"`
				Policy  struct {
					Backend struct{ Name, Reason string } `json:"backend"`
				} `json:"policy"`
			}
			if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &out) != nil {
				t.Fatalf("policy: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			if out.Backend != tt.want || out.Policy.Backend.Name != tt.want || out.Policy.Backend.Reason != tt.reason {
				t.Fatalf("policy --json: backend %q, %+v; want %s by %s", out.Backend, out.Policy.Backend, tt.want, tt.reason)
			}
			if unsignedWant := tt.want == "gvisor"; unsignedWant != strings.Contains(r.Stderr, "counts as unsigned") {
				t.Fatalf("policy stderr %q: want a notice exactly when the skill counts as unsigned", r.Stderr)
			}
			r = runCLI(t, "", "list", "--policy", pol, tt.skill)
			if first, _, _ := strings.Cut(r.Stdout, "\n"); r.Code != 0 || first != "backend: "+tt.want+" ("+tt.reason+")" {
				t.Fatalf("list: exit %d, first line %q\n%s", r.Code, first, r.Stderr)
			}
			// --backend wins over the rule.
			r = runCLI(t, "", "policy", "--json", "--backend", "gvisor", "--policy", pol, tt.skill)
			out.Policy.Backend.Reason = ""
			if json.Unmarshal([]byte(r.Stdout), &out) != nil || out.Backend != "gvisor" || out.Policy.Backend.Reason != "--backend" {
				t.Fatalf("policy --backend gvisor: %s", r.Stdout)
			}
		})
	}
}

// TestBackendFallbackCLI checks, where runsc is not on PATH, that a run
// the policy puts on gvisor is refused with the cause and the fix, and
// runs native with --backend-fallback (or allow_fallback) with the
// reason in its one record; a signed skill runs native either way.
func TestBackendFallbackCLI(t *testing.T) {
	signed, allowed := signedSkill(t)
	unsigned := newSkill(t, nil)
	noRunscPath(t)
	pol := backendPolicy(t, allowed, "")
	tests := []struct {
		name     string
		args     []string
		code     int
		fallback bool
	}{
		{"unsigned refused", []string{"--policy", pol, unsigned, "ok.sh"}, 1, false},
		{"unsigned, flag fallback", []string{"--backend-fallback", "--policy", pol, unsigned, "ok.sh"}, 0, true},
		{"unsigned, policy fallback", []string{"--policy", backendPolicy(t, allowed, "allow_fallback = true\n"), unsigned, "ok.sh"}, 0, true},
		{"signed runs native", []string{"--policy", pol, signed, "scripts/stats.py", "SKILL.md"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			r := runCLI(t, "", append([]string{"audit", "--audit-log", log}, tt.args...)...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.Code, tt.code, r.Stdout, r.Stderr)
			}
			recs := fileRecords(t, log)
			if len(recs) != 1 {
				t.Fatalf("%d records, want 1", len(recs))
			}
			rec := recs[0]
			switch {
			case tt.code == 1:
				if !strings.Contains(r.Stderr, "apt-get install runsc") || !strings.Contains(r.Stderr, "not on PATH") || rec.Backend != "gvisor" || rec.Started || rec.BackendFallback != "" {
					t.Fatalf("refusal: stderr %q, record backend %q started %v fallback %q", r.Stderr, rec.Backend, rec.Started, rec.BackendFallback)
				}
			case tt.fallback:
				if rec.Backend != "" || !strings.HasPrefix(rec.BackendFallback, "gvisor: ") || !strings.Contains(rec.BackendFallback, "runsc") || !rec.Started {
					t.Fatalf("fallback record: backend %q fallback %q started %v", rec.Backend, rec.BackendFallback, rec.Started)
				}
			default:
				if rec.Backend != "" || rec.BackendFallback != "" || !rec.Signature.Verified || rec.Signature.Required {
					t.Fatalf("signed record: backend %q fallback %q signature %+v", rec.Backend, rec.BackendFallback, rec.Signature)
				}
			}
		})
	}
}
