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

// The pass without user namespaces simulates a host that refuses them (a
// sysctl, Docker's seccomp profile, Ubuntu's AppArmor restriction) for the
// harness's own process tree only: as root, the harness re-runs itself in a
// user namespace that maps uids 0-65535 onto themselves and sets that
// namespace's own user.max_user_namespaces to 0, so clone(CLONE_NEWUSER)
// fails for everything below it and the global sysctl is untouched. There,
// the default must refuse to run (checked on one probe), and the probes
// run again with --allow-degraded to show what a degraded run lets through.

// forbidUserNamespaces sets user.max_user_namespaces to 0, but only in a
// user namespace other than the initial one: never the host's setting.
func forbidUserNamespaces() error {
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return err
	}
	if f := strings.Fields(string(m)); len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295" {
		return fmt.Errorf("-forbid-userns: this is the initial user namespace; refusing to change the host's sysctl")
	}
	return os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0)
}

// defaultRefusal runs one probe with the default flags, where user
// namespaces are refused, and returns the refusal's message; an error when
// the run was not refused for missing isolation.
func defaultRefusal(cfg *config) (string, error) {
	log := filepath.Join(cfg.tmpBase, "refusal.jsonl")
	defer os.Remove(log)
	skill := filepath.Join(cfg.root, "testdata", "example", "word-stats")
	out, err := exec.Command(cfg.bin, "audit", "--audit-log", log, skill, "stats.py", "--", "references/sample.txt").CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return "", err
	}
	var rec struct {
		Outcome   string `json:"outcome"`
		ErrorKind string `json:"error_kind"`
		Error     string `json:"error"`
	}
	if b, err := os.ReadFile(log); err == nil {
		json.Unmarshal(b, &rec)
	}
	if code != 1 || rec.ErrorKind != "isolation" || rec.Outcome != "refused" {
		return "", fmt.Errorf("the default ran or failed otherwise without user namespaces: exit %d, outcome %q, error_kind %q: %s",
			code, rec.Outcome, rec.ErrorKind, truncate(string(out), 300))
	}
	return rec.Error, nil
}

// runWithoutUserNS runs the pass and adds its column to rows. It reports
// false when the default did not refuse.
func runWithoutUserNS(cfg *config, rep *report, rows []probeReport, stderr io.Writer) bool {
	dir, err := os.MkdirTemp(cfg.tmpBase, "security-nouserns-")
	if err != nil {
		rep.NoUserNSSkipped = err.Error()
		return true
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		rep.NoUserNSSkipped = err.Error()
		return true
	}
	exe := filepath.Join(dir, "security")
	b, err := os.ReadFile(self)
	if err == nil {
		err = os.WriteFile(exe, b, 0o755)
	}
	if err != nil {
		rep.NoUserNSSkipped = err.Error()
		return true
	}
	out := filepath.Join(dir, "result.json")
	args := []string{"-bin", cfg.bin, "-suite", "security", "-no-baseline", "-ablate=false",
		"-unprivileged=false", "-without-userns=false", "-forbid-userns", "-tmp", dir, "-json", out}
	if cfg.only != nil {
		var nums []string
		for n := range cfg.only {
			nums = append(nums, fmt.Sprint(n))
		}
		args = append(args, "-only", strings.Join(nums, ","))
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = cfg.root
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 65536}},
		GidMappingsEnableSetgroups: true,
	}
	var so, se capBuffer
	cmd.Stdout, cmd.Stderr = &so, &se
	runErr := cmd.Run()
	if cfg.verbose {
		fmt.Fprintf(stderr, "--- pass without user namespaces (%v)\n%s%s", runErr, so.String(), se.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		rep.NoUserNSSkipped = fmt.Sprintf("no result (%v): %s", runErr, truncate(lastLines(se.String()+so.String(), 2), 200))
		return true
	}
	var nested report
	if err := json.Unmarshal(data, &nested); err != nil {
		rep.NoUserNSSkipped = err.Error()
		return true
	}
	rep.Refusal = nested.Refusal
	byNum := map[int]probeReport{}
	for _, r := range nested.Probes {
		byNum[r.Num] = r
	}
	for i := range rows {
		if r, ok := byNum[rows[i].Num]; ok {
			rows[i].NoUserNS, rows[i].NoUserNSEv = r.Sandboxed, r.Evidence
		}
	}
	if nested.Refusal == "" {
		rep.Failures = append(rep.Failures, "without user namespaces: "+strings.Join(nested.Failures, "; "))
		return false
	}
	return true
}
