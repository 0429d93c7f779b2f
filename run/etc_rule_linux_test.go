//go:build amd64 || arm64

package run

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// etcRuleChildEnv, in the environment of this test binary, makes
// TestEtcRuleChild the second half of TestEtcRuleNewPackage: the files it
// added to /etc, separated by ":", the first readable by anyone, the
// others not.
const etcRuleChildEnv = "SKILL_SANDBOX_ETC_RULE_CHILD"

// etcRuleScript reads each path it is given and prints how many bytes it
// read, or why it could not.
const etcRuleScript = `import sys
for p in sys.argv[1:]:
    try:
        print("READ", p, len(open(p, "rb").read()))
    except OSError as e:
        print("DENIED", p, e.strerror)
`

// snakeoilKey is Debian's ssl-cert key: 0640 root:ssl-cert in a folder
// 0710 root:ssl-cert, and /etc/ssl/private is on the deny list.
const snakeoilKey = "/etc/ssl/private/ssl-cert-snakeoil.key"

// etcLayerSettings are the runs checkEtc compares: every layer, without
// Landlock (the mounts alone), and without the mount namespace (Landlock's
// rules on the host's /etc alone, by the old list of names).
func etcLayerSettings() [][]Layer {
	return [][]Layer{nil, {LayerLandlockFS}, {LayerMountNS}}
}

// checkEtc runs etcRuleScript on the real secrets of a Debian /etc and on
// added (TestEtcRuleNewPackage's files, or none): /etc/shadow, /etc/gshadow
// and the snake-oil key must never be read, /etc/passwd (deny-listed,
// readable by anyone on the host) never with its content, with each layer
// setting; of added, the first must be read where the sandbox has its own
// root (a new package's configuration, by the rule) and refused without it
// (the old list, fail closed), the others never.
func checkEtc(t *testing.T, added []string) {
	t.Helper()
	secrets := []string{"/etc/shadow", "/etc/gshadow", snakeoilKey}
	// Not found, as opposed to not reachable (EACCES, as nobody).
	if _, err := os.Lstat(snakeoilKey); errors.Is(err, fs.ErrNotExist) && os.Getenv("CI") == "true" {
		t.Fatalf("no %s (.ci/run installs ssl-cert): %v", snakeoilKey, err)
	}
	dir := newSkill(t, map[string]string{"etc.py": etcRuleScript})
	args := append(append([]string{"/etc/passwd", "/etc/ld.so.cache"}, secrets...), added...)
	for _, disable := range etcLayerSettings() {
		o := runIn(t, Sandbox{Disable: disable}, dir, "etc.py", args...)
		if o.err != nil || o.res.ExitCode != 0 {
			t.Fatalf("disabled %v: %v\n%s", disable, o.err, o.stderr)
		}
		if !strings.Contains(o.stdout, "READ /etc/ld.so.cache ") {
			t.Errorf("disabled %v: the loader's cache not readable:\n%s", disable, o.stdout)
		}
		if strings.Contains(o.stdout, "READ /etc/passwd ") && !strings.Contains(o.stdout, "READ /etc/passwd 0\n") {
			t.Errorf("disabled %v: /etc/passwd read:\n%s", disable, o.stdout)
		}
		for _, p := range append(secrets, added[min(1, len(added)):]...) {
			if strings.Contains(o.stdout, "READ "+p+" ") {
				t.Errorf("disabled %v: %s read:\n%s", disable, p, o.stdout)
			}
		}
		if len(added) == 0 {
			continue
		}
		ownRoot := !slices.Contains(disable, LayerMountNS)
		if got := strings.Contains(o.stdout, "READ "+added[0]+" "); got != ownRoot {
			t.Errorf("disabled %v: %s read %v, want %v:\n%s", disable, added[0], got, ownRoot, o.stdout)
		}
	}
}

// TestEtcRule checks the sandbox's /etc on the host's real entries, for
// whoever runs the suite (TestUnprivileged runs it again as nobody).
func TestEtcRule(t *testing.T) {
	fullIsolation(t)
	if _, err := os.Lstat(snakeoilKey); errors.Is(err, fs.ErrNotExist) && os.Getenv("CI") != "true" {
		t.Logf("no %s here (ssl-cert): its check proves nothing", snakeoilKey)
	}
	checkEtc(t, nil)
}

// TestEtcRuleNewPackage adds files to the host's /etc as a package nobody
// has seen would: a configuration file anyone may read (readable in the
// sandbox), a root-only (0600) and a root-group (0640) one (never
// readable); then checks them again as uid 65534 in the group ssl-cert
// (TestEtcRuleChild), whose snake-oil key its groups could read on the
// host, but not in the sandbox. Needs root, to write to /etc.
func TestEtcRuleNewPackage(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to add files to /etc")
	}
	fullIsolation(t)
	var nonce [6]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		t.Fatal(err)
	}
	base := "/etc/skill-sandbox-test-" + hex.EncodeToString(nonce[:])
	paths := []string{base + "rc", base + "-secret", base + "-group"}
	for i, mode := range []os.FileMode{0o644, 0o600, 0o640} {
		if err := os.WriteFile(paths[i], []byte("content\n"), mode); err != nil {
			t.Skipf("cannot add a file to /etc: %v", err)
		}
		t.Cleanup(func() { os.Remove(paths[i]) })
		if err := os.Chmod(paths[i], mode); err != nil {
			t.Fatal(err)
		}
	}
	checkEtc(t, paths)
	if testing.Short() {
		return
	}
	groups := []uint32{}
	if g, err := user.LookupGroup("ssl-cert"); err == nil {
		gid, _ := strconv.Atoi(g.Gid)
		groups = append(groups, uint32(gid))
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("no group ssl-cert (.ci/run installs ssl-cert): %v", err)
	}
	out, err := rerunSuite("^TestEtcRuleChild$", []string{etcRuleChildEnv + "=" + strings.Join(paths, ":")},
		&syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyUID, Gid: nobodyUID, Groups: groups}})
	if err != nil || !strings.Contains(out, "PASS") {
		t.Fatalf("as uid %d, groups %v: %v\n%s", nobodyUID, groups, err, out)
	}
}

// TestEtcRuleChild is not a test: it is TestEtcRuleNewPackage's check as
// uid 65534, and skips unless started by it.
func TestEtcRuleChild(t *testing.T) {
	spec := os.Getenv(etcRuleChildEnv)
	if spec == "" {
		t.Skip("helper of TestEtcRuleNewPackage, run by it only")
	}
	if f, err := os.Open(snakeoilKey); err == nil {
		// The premise: this caller's groups may read the key on the host.
		f.Close()
	} else if os.Getenv("CI") == "true" {
		t.Fatalf("the caller cannot read %s on the host: %v", snakeoilKey, err)
	}
	checkEtc(t, strings.Split(spec, ":"))
}

// TestMatplotlibPlot draws a plot to PNG with Debian's matplotlib, whose
// configuration is /etc/matplotlibrc: with a list of /etc names that file
// was missing and every import failed ("Could not find matplotlibrc").
// Skips where python3-matplotlib is not installed, except under CI=true
// (.ci/run installs it).
func TestMatplotlibPlot(t *testing.T) {
	needTool(t, "python3")
	if _, err := os.Stat("/etc/matplotlibrc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python3-matplotlib is not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("no Debian matplotlib here: %v", err)
	}
	dir := newSkill(t, map[string]string{"plot.py": `import io, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [1, 4, 9])
buf = io.BytesIO()
plt.savefig(buf, format="png")
print("rc", matplotlib.matplotlib_fname())
print("png", buf.getvalue()[:8] == b"\x89PNG\r\n\x1a\n", len(buf.getvalue()))
`})
	o := runIn(t, Sandbox{Timeout: 60 * time.Second}, dir, "plot.py")
	if o.err != nil || o.res.ExitCode != 0 {
		t.Fatalf("run: %v\nstdout: %s\nstderr: %s", o.err, o.stdout, o.stderr)
	}
	if !strings.Contains(o.stdout, "rc /etc/matplotlibrc\n") || !strings.Contains(o.stdout, "png True ") {
		t.Errorf("stdout: %s\nstderr: %s", o.stdout, o.stderr)
	}
}
