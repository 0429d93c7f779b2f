package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/serve"
)

// writeTenantTokens writes a tokens file giving serveToken tenant "t1"
// the skills folder dir and the operator policy pol.
func writeTenantTokens(t *testing.T, dir, pol string) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "tokens.json")
	body := fmt.Sprintf(`{"tokens":[{"id":"cli","sha256":%q,"tenant":"t1","skills":[%q],"policy":%q}]}`, serve.HashToken(serveToken), dir, pol)
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// serveRecord waits for the record of execution id in the audit log.
func serveRecord(t *testing.T, log, id string) audit.Record {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		data, _ := os.ReadFile(log)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"request_id":"`+id+`"`) {
				return parseRecord(t, []byte(line))
			}
		}
	}
	t.Fatalf("no record of execution %s in %s", id, log)
	return audit.Record{}
}

// TestServeBackendPerTenant checks that a tenant's policy file puts its
// runs on gvisor, and that the --backend flag wins over it. As root the
// gvisor runs are refused with the cause (see rootGrantRefusal), as the
// record says; otherwise they run on gvisor, which only the tenant's
// policy chose (no flag).
func TestServeBackendPerTenant(t *testing.T) {
	if _, err := exec.LookPath("runsc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("runsc is missing under CI=true: %v", err)
		}
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	skill := newSkill(t, map[string]string{"scripts/kernel.sh": "uname -r\n"})
	requireSandbox(t, skill)
	pol := writeFile(t, "tenant.toml", "[backend]\ndefault = \"gvisor\"\n")
	for _, tc := range []struct {
		name    string
		args    []string
		backend string
	}{
		{"tenant policy", nil, "gvisor"},
		{"--backend native wins", []string{"--backend", "native"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The work folder's parents must let the sandbox's identity
			// through for gVisor, which looks the folder up itself.
			if err := os.Chmod(filepath.Dir(t.TempDir()), 0o755); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(t.TempDir(), "audit.jsonl")
			p := startServe(t, append([]string{"--tokens", writeTenantTokens(t, skill, pol), "--audit-log", log, "--prestart", "0"}, tc.args...)...)
			status, id := p.post(`{"skill":"e2e-skill","script":"scripts/kernel.sh"}`)
			if status != http.StatusAccepted {
				t.Fatalf("POST: %d\n%s", status, p.stderr.String())
			}
			rec := serveRecord(t, log, id)
			if rec.Outcome != "exited" || rec.Backend != tc.backend {
				t.Fatalf("record: outcome %s, backend %q (%s %s); want backend %q\n%s", rec.Outcome, rec.Backend, rec.ErrorKind, rec.Error, tc.backend, p.stderr.String())
			}
		})
	}
}

// TestServeBackendNotReady checks that a server whose tenant's runs go on
// gvisor, where runsc is missing, is not ready and says why: runsc is
// missing.
func TestServeBackendNotReady(t *testing.T) {
	skill := newSkill(t, nil)
	requireSandbox(t, skill)
	noRunscPath(t)
	if err := os.Chmod(filepath.Dir(t.TempDir()), 0o755); err != nil { // as TestServeBackendPerTenant
		t.Fatal(err)
	}
	p := startServe(t, "--tokens", writeTokens(t, skill), "--backend", "gvisor", "--prestart", "0")
	resp, err := http.Get(p.url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cause := "apt-get install runsc"
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(p.stderr.String(), cause) || !strings.Contains(p.stderr.String(), "--backend native") {
		t.Fatalf("/readyz %d; log:\n%s", resp.StatusCode, p.stderr.String())
	}
}
