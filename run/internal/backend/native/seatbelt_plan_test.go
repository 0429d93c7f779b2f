package native

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/netproxy"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seatbelt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seatbelt/sbpltest"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestSeatbeltPolicyOf builds a macOS policy from a plan on this host: the
// deny list is expanded against $HOME, AllowDenied drops an entry,
// wildcards expand to what exists, and grants keep their access.
func TestSeatbeltPolicyOf(t *testing.T) {
	home := t.TempDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	for _, d := range []string{".ssh", ".aws", "data", "out"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"tok-1", "tok-2"} {
		if err := os.WriteFile(filepath.Join(home, "data", f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HOME", home)
	p := &backend.Spec{
		Config: stageconfig.Config{
			Argv:    []string{"/bin/sh", "x.sh"},
			Skill:   "/skills/probe",
			WorkDir: "/work/run-1",
			Grants:  []stageconfig.GrantMount{{Path: filepath.Join(home, "out"), Write: true}, {Path: filepath.Join(home, "data")}},
		},
		DenyPaths:   []string{filepath.Join(home, "data", "tok-*")},
		AllowDenied: []string{filepath.Join(home, ".aws")},
	}
	pol := seatbeltPolicyOf(p)
	for _, want := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, "data", "tok-1"), filepath.Join(home, "data", "tok-2")} {
		if !slices.Contains(pol.Deny, want) {
			t.Errorf("deny list lacks %s", want)
		}
	}
	if slices.Contains(pol.Deny, filepath.Join(home, ".aws")) {
		t.Error("AllowDenied entry still denied")
	}
	if !slices.Equal(pol.Write, []string{filepath.Join(home, "out")}) || !slices.Equal(pol.Read, []string{filepath.Join(home, "data")}) {
		t.Errorf("grants: read %v write %v", pol.Read, pol.Write)
	}
	if pol.Network != seatbelt.NoNetwork {
		t.Errorf("network %v", pol.Network)
	}
	prof, err := seatbelt.Profile(pol)
	if err != nil {
		t.Fatal(err)
	}
	rules := sbpltest.Rules(t, prof)
	if sbpltest.Allows(rules, "file-read-data", filepath.Join(home, "data", "tok-1")) {
		t.Error("a DenyPaths wildcard match inside a read grant is readable")
	}
	if !sbpltest.Allows(rules, "file-read-data", filepath.Join(home, "data", "notes")) {
		t.Error("the read grant is not readable")
	}
	p.Config.AllowNetwork = true
	if pol := seatbeltPolicyOf(p); pol.Network != seatbelt.FullNetwork {
		t.Errorf("AllowNetwork gave %v", pol.Network)
	}
	p.Config.AllowNetwork, p.Proxy, p.Config.ProxyPort = false, &netproxy.Config{}, 40000
	if pol := seatbeltPolicyOf(p); pol.Network != seatbelt.ProxyOnly || pol.ProxyPort != 40000 {
		t.Errorf("allowlist gave %v port %d", pol.Network, pol.ProxyPort)
	}
}

// TestSeatbeltInterpreterInDenied: the interpreter is the skill's choice
// (its shebang names any absolute path), and the profile grants it read
// and execute. One inside a deny entry (an executable AWS credential
// helper under ~/.aws, say) must stay denied, as the deny list wins over
// every grant; on Linux it is simply absent from the sandbox's root.
func TestSeatbeltInterpreterInDenied(t *testing.T) {
	home := t.TempDir()
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	helper := filepath.Join(home, ".aws", "bin", "credential-helper")
	if err := os.MkdirAll(filepath.Dir(helper), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("#!/bin/sh\necho secret\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	p := &backend.Spec{Config: stageconfig.Config{Argv: []string{helper, "x.sh"}, Skill: "/skills/probe", WorkDir: "/work/run-1"}}
	prof, err := seatbelt.Profile(seatbeltPolicyOf(p))
	if err != nil {
		t.Fatal(err)
	}
	rules := sbpltest.Rules(t, prof)
	for _, op := range []string{"file-read-data", "process-exec"} {
		if sbpltest.Allows(rules, op, helper) {
			t.Errorf("%s of an interpreter inside a deny entry (%s) is allowed", op, helper)
		}
	}
	if !sbpltest.Allows(rules, "process-exec", "/bin/sh") {
		t.Error("the system's programs are no longer executable")
	}
}
