package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installed are the files make install writes under PREFIX.
var installed = []string{
	"bin/skill-sandbox",
	"share/man/man1/skill-sandbox.1",
	"share/bash-completion/completions/skill-sandbox",
	"share/zsh/site-functions/_skill-sandbox",
	"share/fish/vendor_completions.d/skill-sandbox.fish",
}

// makeIn runs make in the repository with args, the build outside it.
func makeIn(t *testing.T, build string, args ...string) {
	t.Helper()
	cmd := exec.Command(needTool(t, "make"), append([]string{"-C", repoRoot(t), "BUILDDIR=" + build}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make %v: %v\n%s", args, err, out)
	}
}

// TestMakeInstall installs with PREFIX and with DESTDIR, runs the installed
// binary and uninstalls.
func TestMakeInstall(t *testing.T) {
	git := needTool(t, "git")
	out, err := exec.Command(git, "-C", repoRoot(t), "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		// Not a checkout, or one git will not read for this user (its
		// safe.directory check), as make install's git describe would not.
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Skipf("git describe: %v: %s", err, stderr)
	}
	describe := strings.TrimSpace(string(out))
	build := t.TempDir()

	// PREFIX only: the binary runs from there and names the commit.
	prefix := t.TempDir()
	makeIn(t, build, "install", "PREFIX="+prefix, "DESTDIR=", "APPARMOR=0")
	for _, f := range installed {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Errorf("after make install: %v", err)
		}
	}
	version, err := exec.Command(filepath.Join(prefix, "bin", "skill-sandbox"), "--version").Output()
	if err != nil || string(version) != "skill-sandbox "+describe+"\n" {
		t.Errorf("installed --version: %q, %v; want the commit %s", version, err, describe)
	}
	if man, err := os.ReadFile(filepath.Join(prefix, "share/man/man1/skill-sandbox.1")); err != nil || !strings.HasPrefix(string(man), ".TH SKILL-SANDBOX 1") {
		t.Errorf("man page: %.40q, %v", man, err)
	}
	makeIn(t, build, "uninstall", "PREFIX="+prefix, "DESTDIR=", "APPARMOR=0")
	assertNoFiles(t, prefix)

	// DESTDIR and PREFIX: the files go under DESTDIR, the AppArmor profile
	// names the binary at PREFIX.
	dest := t.TempDir()
	makeIn(t, build, "install", "PREFIX=/opt/skill-sandbox", "DESTDIR="+dest, "APPARMOR=1")
	for _, f := range installed {
		if _, err := os.Stat(filepath.Join(dest, "opt/skill-sandbox", f)); err != nil {
			t.Errorf("after make install DESTDIR: %v", err)
		}
	}
	profile, err := os.ReadFile(filepath.Join(dest, "etc/apparmor.d/skill-sandbox"))
	if err != nil || !strings.Contains(string(profile), "\nprofile skill-sandbox /opt/skill-sandbox/bin/skill-sandbox flags=(attach_disconnected,mediate_deleted) {\n") {
		t.Errorf("AppArmor profile: %v\n%s", err, profile)
	}
	makeIn(t, build, "uninstall", "PREFIX=/opt/skill-sandbox", "DESTDIR="+dest, "APPARMOR=1")
	assertNoFiles(t, dest)
}

// assertNoFiles fails when a file is left under dir.
func assertNoFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("after make uninstall: %s is left", path)
		}
		return nil
	})
}
