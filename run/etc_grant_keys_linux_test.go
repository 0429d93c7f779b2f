//go:build amd64 || arm64

package run

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// etcGrantChildEnv, in the environment of this test binary, makes
// TestEtcGrantKeysChild run (as uid 65534 in ssl-cert).
const etcGrantChildEnv = "SKILL_SANDBOX_ETC_GRANT_CHILD"

// TestEtcGrantHidesKeys: the host's keys and credentials in /etc
// (stageconfig.EtcSecrets) are masked in the sandbox's own /etc, but a
// grant of /etc bound the host's over it: uid 65534 in the group
// ssl-cert read the snake-oil key with --read /etc and --read /etc/ssl,
// as its groups allow on the host. They are on the grants' deny list
// now: masked inside such a grant, and a grant of one is refused. The
// run as uid 65534 in ssl-cert (TestEtcGrantKeysChild) needs root to
// start it.
func TestEtcGrantHidesKeys(t *testing.T) {
	if _, err := os.Lstat("/etc/ssl/private"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no /etc/ssl/private (.ci/run installs ssl-cert): %v", err)
		}
		t.Skipf("no /etc/ssl/private here (the ssl-cert package): %v", err)
	}
	for _, g := range []string{"/etc", "/etc/ssl"} {
		gp, err := (&Sandbox{ReadPaths: []string{g}}).planGrantsNominal("", false)
		if err != nil {
			t.Fatalf("--read %s: %v", g, err)
		}
		if !slices.Contains(gp.Grants.Masked, "/etc/ssl/private") {
			t.Errorf("--read %s masks %q, not /etc/ssl/private", g, gp.Grants.Masked)
		}
	}
	if _, err := (&Sandbox{ReadPaths: []string{"/etc/ssl/private"}}).planGrantsNominal("", false); !errors.Is(err, ErrBadConfig) {
		t.Errorf("--read /etc/ssl/private: %v, want it refused as a deny entry", err)
	}
	if os.Geteuid() != 0 || testing.Short() {
		return
	}
	g, err := user.LookupGroup("ssl-cert")
	if err != nil {
		t.Skipf("no group ssl-cert: %v", err)
	}
	gid, _ := strconv.Atoi(g.Gid)
	tmp, err := os.MkdirTemp("", "skill-sandbox-etcgrant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	if err := os.Chown(tmp, nobodyUID, nobodyUID); err != nil {
		t.Fatal(err)
	}
	out, err := rerunSuite("^TestEtcGrantKeysChild$", []string{etcGrantChildEnv + "=1", "TMPDIR=" + tmp},
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: []uint32{uint32(gid)}}})
	if err != nil || !strings.Contains(out, "PASS") || !strings.Contains(out, etcGrantChecked) {
		t.Fatalf("as uid %d in ssl-cert: %v\n%s", nobodyUID, err, out)
	}
}

// TestEtcGrantKeysChild is not a test: it is TestEtcGrantHidesKeys's run
// as uid 65534 in ssl-cert, and skips unless started by it.
func TestEtcGrantKeysChild(t *testing.T) {
	if os.Getenv(etcGrantChildEnv) == "" {
		t.Skip("helper of TestEtcGrantHidesKeys, run by it only")
	}
	needTool(t, "python3")
	f, err := os.Open(snakeoilKey)
	if err != nil {
		t.Skipf("the premise fails: this caller cannot read %s on the host: %v", snakeoilKey, err)
	}
	f.Close()
	dir := newSkill(t, map[string]string{"read.py": readProbe})
	for _, g := range []string{"/etc", "/etc/ssl"} {
		o := runIn(t, Sandbox{ReadPaths: []string{g}}, dir, "read.py", snakeoilKey)
		if o.err != nil || !strings.Contains(o.stdout, "denied ssl-cert-snakeoil.key") {
			t.Errorf("--read %s: err %v stdout %q stderr %s, want the key denied", g, o.err, o.stdout, o.stderr)
		}
	}
	fmt.Println(etcGrantChecked)
}

// etcGrantChecked is what TestEtcGrantKeysChild prints once it checked.
const etcGrantChecked = "etc grant keys: checked as a caller who may read the key"
