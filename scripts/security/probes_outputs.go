//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// outputProbes returns probes 38 and 39: what a run leaves in its write
// grant for the caller's own tools (issue 30, classes 2 and 3).
func outputProbes() []probe {
	return []probe{
		{38, "p38-planted-for-caller", "plant a git hook, fsmonitor, .envrc, VS Code task", mustBlock, setupP38, judgeP38},
		{39, "p39-output-traps", "leave links out of the grant and a FIFO", mustBlock, setupP39, judgeP39},
	}
}

// grantDir makes a fresh folder for a probe's --write grant, removed
// afterwards.
func grantDir(e *env, tag string) (string, error) {
	d, err := os.MkdirTemp("", "skill-sandbox-"+tag+"-")
	if err != nil {
		return "", err
	}
	e.defer_(func() { os.RemoveAll(d) })
	// Without user namespaces a root caller's sandbox runs as a host id
	// of its own (uid 65534 in a nested user namespace) and reaches the
	// grant only through its mode.
	if err := os.Chmod(d, 0o777); err != nil {
		return "", err
	}
	if e.sandboxed {
		e.inv.flags = append(e.inv.flags, "--write", d)
	}
	return d, nil
}

func setupP38(e *env) error {
	repo, err := grantDir(e, "p38")
	if err != nil {
		return err
	}
	if out, err := callerGit(repo, "init", "-q"); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	mark := filepath.Join(filepath.Dir(repo), filepath.Base(repo)+"-ran")
	e.defer_(func() { os.Remove(mark) })
	e.inv.args = []string{repo, mark}
	return nil
}

// callerGit runs git in repo as the caller would, without the host's
// global or system configuration.
func callerGit(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", repo, "-c", "safe.directory=*"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	return cmd.CombinedOutput()
}

func judgeP38(e *env, o *outcome) judgement {
	repo, mark := e.inv.args[0], e.inv.args[1]
	callerGit(repo, "status", "--short")
	callerGit(repo, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-q", "--allow-empty", "-m", "p38")
	var left []string
	if _, err := os.Stat(mark); err == nil {
		left = append(left, "the caller's git ran the planted program")
	}
	for _, p := range []string{".envrc", ".vscode"} {
		if _, err := os.Lstat(filepath.Join(repo, p)); err == nil {
			left = append(left, p+" planted")
		}
	}
	ev := stepEvidence(o, "hook .git/hooks/pre-commit", "config core.fsmonitor", "envrc", "vscode task")
	if len(left) > 0 {
		return judgement{verdict: vEffect, evidence: strings.Join(left, "; ") + "; " + ev}
	}
	if len(o.steps) == 0 && strings.Contains(o.stderr, "must stay read-only inside a write grant") {
		// Without a mount namespace nothing can keep .git read-only:
		// the run is refused before the script starts.
		return judgement{verdict: vNone, evidence: "refused before the start: .git cannot be kept read-only without a mount namespace", layer: "refused"}
	}
	return judgement{verdict: vNone, evidence: "git ran nothing planted; .envrc, .vscode renamed aside; " + ev, layer: "mountns+quarantine"}
}

func setupP39(e *env) error {
	out, err := grantDir(e, "p39")
	if err != nil {
		return err
	}
	secret := filepath.Join(filepath.Dir(out), filepath.Base(out)+"-secret")
	if err := os.WriteFile(secret, []byte("P39SECRET-"+e.nonce+"\n"), 0o600); err != nil {
		return err
	}
	e.defer_(func() { os.Remove(secret) })
	e.inv.args = []string{out, secret, e.cfg.home}
	return nil
}

func judgeP39(e *env, o *outcome) judgement {
	out := e.inv.args[0]
	var left []string
	entries, _ := os.ReadDir(out)
	for _, en := range entries {
		p := filepath.Join(out, en.Name())
		st, err := os.Lstat(p)
		if err != nil {
			continue
		}
		switch {
		case st.Mode()&os.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			left = append(left, en.Name()+" -> "+t)
		case st.Mode()&(os.ModeNamedPipe|os.ModeSocket|os.ModeDevice) != 0:
			left = append(left, en.Name()+" "+st.Mode().Type().String())
		}
	}
	ev := stepEvidence(o, "link result.json", "link logs", "fifo summary.txt")
	if len(left) > 0 {
		return judgement{verdict: vEffect, evidence: "left: " + strings.Join(left, ", ") + "; " + ev}
	}
	return judgement{verdict: vNone, evidence: "none left after the run; " + ev, layer: "sweep"}
}
