package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/audit"
)

func TestBackendUsageErrors(t *testing.T) {
	skill := newSkill(t, nil)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--backend", "docker"}, `--backend must be native or gvisor, got "docker"`},
		{[]string{"--backend", "gvisor", "--allow-unix", "/run/postgresql/.s.PGSQL.5432"}, "--backend gvisor cannot grant --allow-unix"},
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

// needRunsc skips the test where runsc is missing, except under CI=true,
// where it must be there (.ci/run installs it).
func needRunsc(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
}

func TestBackendGVisorRecord(t *testing.T) {
	needRunsc(t)
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
	// The sandbox's CPU time and peak memory, from the cgroup the
	// supervisor keeps around runsc's (root, cgroup v1); 0, unknown,
	// elsewhere, never runsc's own figures.
	_, errV1 := os.Stat("/sys/fs/cgroup/memory/memory.max_usage_in_bytes")
	known := os.Geteuid() == 0 && errV1 == nil
	if rec := recs[0]; (rec.CPU > 0 && rec.PeakMemoryKB > 0) != known || !known && (rec.CPU != 0 || rec.PeakMemoryKB != 0) {
		t.Errorf("cpu_ms %v, peak_memory_kb %d; want both known: %v", rec.CPU, rec.PeakMemoryKB, known)
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

// TestBackendGVisorAllowHostCLI runs curl under --backend gvisor with
// --allow-host naming a server on the host's loopback by IP: it gets the
// page through the filtering proxy, another port of the host's loopback
// is refused, and the record's network section is the native run's.
func TestBackendGVisorAllowHostCLI(t *testing.T) {
	needRunsc(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	skill := newSkill(t, map[string]string{
		"scripts/get.sh": "for u in \"$@\"; do curl -sS -o /dev/null -w '%{http_code}\\n' \"$u\"; done\n",
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hi") })}
	go srv.Serve(ln)
	defer srv.Close()
	addr := ln.Addr().String()
	other := "127.0.0.1:1"
	var nets [2]audit.Network
	for i, backend := range []string{"native", "gvisor"} {
		r := runCLI(t, "", "audit", "--quiet", "--backend", backend, "--allow-host", addr, skill, "get.sh",
			"http://"+addr+"/a", "http://"+other+"/b", "http://169.254.169.254/")
		if r.Code != 0 || r.Stdout != "200\n403\n403\n" {
			t.Fatalf("%s: exit %d stdout %q stderr %s", backend, r.Code, r.Stdout, r.Stderr)
		}
		rec := stderrRecord(t, r.Stderr)
		n := rec.Network
		n.Totals.BytesUp, n.Totals.BytesDown = 0, 0
		for j := range n.Connections {
			c := &n.Connections[j]
			c.DurationMS, c.BytesUp, c.BytesDown = 0, 0, 0
		}
		nets[i] = n
	}
	if !reflect.DeepEqual(nets[0], nets[1]) || len(nets[1].Connections) != 3 {
		t.Errorf("network sections differ:\nnative %+v\ngvisor %+v", nets[0], nets[1])
	}
}
