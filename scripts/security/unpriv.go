//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// nobodyID is the identity of the unprivileged pass.
const nobodyID = 65534

// runUnprivileged, when the harness runs as root, runs the sandboxed probes
// once more as uid/gid 65534 with a home of that user, so a root-only CI
// also covers the unprivileged path (where the sandbox runs as the caller
// and cannot lean on dropping to another uid). It returns the rows of that
// pass by probe number, or a reason why the pass was skipped.
func runUnprivileged(cfg *config, stderr io.Writer) (map[int]probeReport, string) {
	if os.Getuid() != 0 {
		return nil, "not root: this run already is the unprivileged one"
	}
	// Not under /tmp: the sandbox masks /tmp, and a real home is elsewhere.
	dir, err := os.MkdirTemp(cfg.tmpBase, "security-nobody-")
	if err != nil {
		return nil, err.Error()
	}
	defer os.RemoveAll(dir)
	home, tmp := filepath.Join(dir, "home"), filepath.Join(dir, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err.Error()
		}
		if err := os.Chown(d, nobodyID, nobodyID); err != nil {
			return nil, err.Error()
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err.Error()
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err.Error()
	}
	exe := filepath.Join(dir, "security")
	b, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(exe, b, 0o755)
	}
	if err != nil {
		return nil, err.Error()
	}
	out := filepath.Join(home, "result.json")
	args := []string{"-bin", cfg.bin, "-suite", "security", "-no-baseline", "-ablate=false", "-backend", cfg.backend,
		"-unprivileged=false", "-tmp", tmp, "-json", out}
	if cfg.only != nil {
		var nums []string
		for n := range cfg.only {
			nums = append(nums, fmt.Sprint(n))
		}
		args = append(args, "-only", strings.Join(nums, ","))
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = cfg.root
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobodyID, Gid: nobodyID, Groups: []uint32{}}}
	var so, se capBuffer
	cmd.Stdout, cmd.Stderr = &so, &se
	runErr := cmd.Run()
	if cfg.verbose {
		fmt.Fprintf(stderr, "--- unprivileged pass (%v)\n%s%s", runErr, so.String(), se.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Sprintf("no result as uid %d (%v): %s", nobodyID, runErr,
			truncate(lastLines(se.String()+so.String(), 2), 200))
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, err.Error()
	}
	rows := map[int]probeReport{}
	for _, r := range rep.Probes {
		rows[r.Num] = r
	}
	return rows, ""
}
