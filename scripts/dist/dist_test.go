package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// testVersion is the version the release tests build.
const testVersion = "v1.2.3-4-g757357a"

// repoRoot returns the module's root folder.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// needTool returns the path of a program the test needs; it skips the
// test without it, except under CI=true, whose image installs it.
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return path
}

// runDist writes the linux/amd64 release (archive, .deb where dpkg-deb
// is installed, SHA256SUMS) into a new folder and returns it.
func runDist(t *testing.T, env ...string) string {
	t.Helper()
	out := t.TempDir()
	var log bytes.Buffer
	cfg := config{
		out: out, version: testVersion, commit: "757357a0123456789abcdef0123456789abcdef0",
		epoch: 1796612732, maintainer: "Test <test@example.invalid>",
		targets: []target{{"linux", "amd64"}}, debArchs: []string{"amd64"},
		root: repoRoot(t), env: env, log: &log,
	}
	if err := dist(cfg); err != nil {
		t.Fatalf("dist: %v\n%s", err, log.String())
	}
	return out
}

// TestDistReproducible builds the linux/amd64 release twice and wants the
// same bytes. DIST_TEST_FRESH_CACHE=1 builds the second time with an
// empty Go build cache, as another machine would (minutes more).
func TestDistReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release twice")
	}
	needTool(t, "go")
	first := runDist(t)
	var env []string
	if os.Getenv("DIST_TEST_FRESH_CACHE") == "1" {
		env = append(env, "GOCACHE="+t.TempDir())
	}
	second := runDist(t, env...)
	a, b := dirFiles(t, first), dirFiles(t, second)
	if len(a) != len(b) {
		t.Fatalf("first run wrote %v, second %v", keys(a), keys(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
	archive := "skill-sandbox-" + testVersion + "-linux-amd64.tar.gz"
	if _, ok := a[archive]; !ok {
		t.Errorf("no %s in %v", archive, keys(a))
	}
	sums := string(a["SHA256SUMS"])
	for name := range a {
		if name != "SHA256SUMS" && !strings.Contains(sums, "  "+name+"\n") {
			t.Errorf("SHA256SUMS does not list %s:\n%s", name, sums)
		}
	}
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
		cmd.Dir = first
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum --check: %v\n%s", err, out)
		}
	}
	// The archive's binary runs and names its version.
	tar := needTool(t, "tar")
	x := t.TempDir()
	if out, err := exec.Command(tar, "-xzf", filepath.Join(first, archive), "-C", x).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	dir := filepath.Join(x, "skill-sandbox-"+testVersion+"-linux-amd64")
	for _, f := range []string{"LICENSE", "README.md", "man/skill-sandbox.1", "completions/skill-sandbox.bash", "completions/_skill-sandbox", "completions/skill-sandbox.fish", "apparmor/skill-sandbox"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("archive: %v", err)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "skill-sandbox"), "--version").Output()
	if err != nil || string(out) != "skill-sandbox "+testVersion+"\n" {
		t.Errorf("--version of the archive's binary: %q, %v", out, err)
	}
	if deb := "skill-sandbox_1.2.3+4.g757357a_amd64.deb"; a[deb] != nil {
		checkDeb(t, filepath.Join(first, deb))
	} else if _, err := exec.LookPath("dpkg-deb"); err == nil {
		t.Errorf("dpkg-deb is installed but no %s in %v", deb, keys(a))
	}
}

// TestDistBadVersion wants a version no Debian package can carry refused
// before anything is built or written.
func TestDistBadVersion(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	err := dist(config{out: out, version: "release-1", targets: defaultTargets(), debArchs: []string{"amd64"}, root: repoRoot(t), log: &log})
	if err == nil || !strings.Contains(err.Error(), `cannot make a Debian version of "release-1"`) {
		t.Fatalf("dist: %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output folder: %v", err)
	}
}

// dirFiles returns the files of dir by name.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	return files
}

// keys returns the names of files.
func keys(files map[string][]byte) []string {
	var out []string
	for k := range files {
		out = append(out, k)
	}
	return out
}

// debPaths are the files the package installs.
var debPaths = []string{
	"/usr/bin/skill-sandbox",
	"/usr/share/man/man1/skill-sandbox.1.gz",
	"/usr/share/bash-completion/completions/skill-sandbox",
	"/usr/share/zsh/vendor-completions/_skill-sandbox",
	"/usr/share/fish/vendor_completions.d/skill-sandbox.fish",
	"/usr/share/doc/skill-sandbox/copyright",
	"/etc/apparmor.d/skill-sandbox",
}

// checkDeb inspects the package with dpkg-deb and, where the test may
// change the machine, installs and removes it with dpkg.
func checkDeb(t *testing.T, deb string) {
	info, err := exec.Command("dpkg-deb", "--info", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --info: %v\n%s", err, info)
	}
	for _, want := range []string{"Package: skill-sandbox", "Version: 1.2.3+4.g757357a", "Architecture: amd64", "Maintainer: Test <test@example.invalid>", "Description: ", "conffiles", "postinst", "prerm"} {
		if !bytes.Contains(info, []byte(want)) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}
	contents, err := exec.Command("dpkg-deb", "--contents", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --contents: %v\n%s", err, contents)
	}
	for _, p := range debPaths {
		if !bytes.Contains(contents, []byte(" ."+p+"\n")) {
			t.Errorf("package lacks %s:\n%s", p, contents)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(string(contents)), "\n") {
		if f := strings.Fields(line); len(f) < 2 || f[1] != "root/root" {
			t.Errorf("not owned by root: %s", line)
		}
	}
	conf, err := exec.Command("dpkg-deb", "--ctrl-tarfile", deb).Output()
	if err != nil || len(conf) == 0 {
		t.Errorf("dpkg-deb --ctrl-tarfile: %v", err)
	}
	profile, err := exec.Command("dpkg-deb", "--fsys-tarfile", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(profile, []byte("profile skill-sandbox /usr/bin/skill-sandbox flags=(attach_disconnected,mediate_deleted)")) {
		t.Error("the packaged AppArmor profile does not name /usr/bin/skill-sandbox")
	}
	installDeb(t, deb)
}

// installDeb installs the package with dpkg, runs it, removes it and
// purges it, checking that nothing stays behind. It changes the machine,
// so it runs only as root under CI=true or SKILL_SANDBOX_TEST_DPKG=1, and
// not where skill-sandbox is installed already.
func installDeb(t *testing.T, deb string) {
	switch {
	case os.Getenv("CI") != "true" && os.Getenv("SKILL_SANDBOX_TEST_DPKG") != "1":
		t.Log("dpkg -i skipped: it changes the machine (CI=true or SKILL_SANDBOX_TEST_DPKG=1 runs it)")
		return
	case os.Geteuid() != 0:
		t.Log("dpkg -i skipped: not root")
		return
	}
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Fatal("dpkg is not installed")
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "skill-sandbox").Output(); err == nil && len(out) > 0 && !strings.Contains(string(out), "not-installed") {
		t.Skipf("a skill-sandbox package is on this machine already (%s)", out)
	}
	for _, p := range debPaths {
		if _, err := os.Lstat(p); err == nil {
			t.Skipf("%s exists already", p)
		}
	}
	dpkg := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("dpkg", args...).CombinedOutput(); err != nil {
			t.Fatalf("dpkg %v: %v\n%s", args, err, out)
		}
	}
	dpkg("-i", deb)
	defer exec.Command("dpkg", "--purge", "skill-sandbox").Run()
	out, err := exec.Command("/usr/bin/skill-sandbox", "--version").Output()
	if err != nil || string(out) != "skill-sandbox "+testVersion+"\n" {
		t.Errorf("installed --version: %q, %v", out, err)
	}
	dpkg("-r", "skill-sandbox")
	// Removal keeps the conffile (Debian's rule for files under /etc);
	// purging removes it.
	for _, p := range debPaths {
		_, err := os.Lstat(p)
		if kept := p == "/etc/apparmor.d/skill-sandbox"; kept != (err == nil) {
			t.Errorf("after dpkg -r: %s present %v", p, err == nil)
		}
	}
	dpkg("--purge", "skill-sandbox")
	for _, p := range debPaths {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("after dpkg --purge: %s is left", p)
		}
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "skill-sandbox").Output(); len(out) > 0 && !strings.Contains(string(out), "not-installed") {
		t.Errorf("after purge: status %q", out)
	}
}
