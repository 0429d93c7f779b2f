//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// errorLine returns the "skill-sandbox: error:" line of stderr, or "".
func errorLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "skill-sandbox: error: ") {
			return l
		}
	}
	return ""
}

// TestPolicyChecksGrants: "policy" refuses every grant that "run" refuses,
// with the same message and exit status 1, instead of printing it as the
// policy in force; and it creates nothing: a missing --write folder is
// checked, not made.
func TestPolicyChecksGrants(t *testing.T) {
	skill := newSkill(t, nil)
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	rootLink := filepath.Join(base, "rootlink")
	if err := os.Symlink("/", rootLink); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"the whole file system", []string{"--read", "/"}, "granting the whole file system is refused"},
		{"the home's .ssh", []string{"--read", filepath.Join(home, ".ssh")}, "is on the deny list"},
		{"/proc", []string{"--read", "/proc"}, "/proc is never granted"},
		{"a write folder under /proc", []string{"--write", "/proc/sandbox-test/out"}, "/proc is never granted"},
		{"a symlink to /", []string{"--read", rootLink}, "resolves to /"},
		{"a missing path", []string{"--read", filepath.Join(base, "missing")}, "no such file or directory"},
		{"a working directory outside the grants", []string{"--read", home, "--cwd", base}, "is not inside a --read or --write grant"},
		{"a write grant inside the skill", []string{"--write", filepath.Join(skill, "out")}, "overlaps the skill folder"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := runCLIEnv(t, env, append(append([]string{"policy"}, c.args...), skill)...)
			r := runCLIEnv(t, env, append(append([]string{"run"}, c.args...), skill, "ok.sh")...)
			pl, rl := errorLine(p.Stderr), errorLine(r.Stderr)
			if p.Code != 1 || !strings.Contains(pl, c.want) {
				t.Errorf("policy: exit %d stderr %q, want exit 1 and %q", p.Code, p.Stderr, c.want)
			}
			if r.Code != 1 || pl != rl {
				t.Errorf("run: exit %d, error line\n%q\nwant the one of policy\n%q", r.Code, rl, pl)
			}
		})
	}
	out := filepath.Join(base, "new", "out")
	p := runCLIEnv(t, env, "policy", "--write", out, "--cwd", out, skill)
	if p.Code != 0 || !strings.Contains(p.Stdout, out) {
		t.Errorf("a missing --write folder: exit %d stdout %q stderr %q", p.Code, p.Stdout, p.Stderr)
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); !os.IsNotExist(err) {
		t.Errorf("policy created %s (%v)", filepath.Join(base, "new"), err)
	}
}
