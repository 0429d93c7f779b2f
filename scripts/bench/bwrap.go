package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// bwrapArgs is the bubblewrap configuration the bench compares against,
// chosen to match skill-sandbox's isolation as far as bubblewrap can: every
// namespace bubblewrap offers (user, pid, mount, ipc, uts, net, cgroup),
// the nobody identity, no capabilities, a new session (no TIOCSTI on the
// caller's terminal), killed with its parent, a fresh root holding only
// read-only system folders, the few /etc files a program needs, the skill
// folder read-only, a private /tmp, a fresh /proc and a minimal /dev.
// It has no seccomp filter, Landlock or rlimits, which skill-sandbox adds.
// Install it with: apt-get install bubblewrap.
func bwrapArgs(skillDir string) []string {
	args := []string{
		"--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--uid", "65534", "--gid", "65534",
		"--ro-bind", "/usr", "/usr",
	}
	for _, p := range []string{"/lib", "/lib64", "/lib32", "/bin", "/sbin",
		"/etc/ld.so.cache", "/etc/alternatives", "/etc/passwd", "/etc/group",
		"/etc/nsswitch.conf", "/etc/localtime"} {
		args = append(args, "--ro-bind-try", p, p)
	}
	return append(args,
		"--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev",
		"--ro-bind", skillDir, skillDir,
		"--chdir", filepath.Join(skillDir, "scripts"),
		"--setenv", "PATH", systemPath,
	)
}

// findBwrap returns the path of bwrap on systemPath, or "".
func findBwrap() string {
	p, err := lookSystem("bwrap")
	if err != nil {
		return ""
	}
	return p
}

// bwrapArgv is the command line that runs k's script under bubblewrap.
func bwrapArgv(bwrap, base string, k kind) ([]string, error) {
	bare, err := bareArgv(base, k)
	if err != nil {
		return nil, err
	}
	return append(append([]string{bwrap}, bwrapArgs(filepath.Join(base, k.skill))...), bare...), nil
}

// runBwrap runs k's script under bubblewrap.
func runBwrap(bwrap, base string, k kind) error {
	argv, err := bwrapArgv(bwrap, base, k)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + systemPath, "LANG=" + benchLang}
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bwrap: %w: %s", err, strings.TrimSpace(errBuf.String()))
	}
	return nil
}
