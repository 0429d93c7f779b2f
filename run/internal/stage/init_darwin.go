//go:build darwin

package stage

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

const rlimitNPROC = unix.RLIMIT_NPROC

// SandboxExec is the program that applies a Seatbelt profile and executes
// a command under it.
const SandboxExec = "/usr/bin/sandbox-exec"

// applyLayers applies the resource limits and prepares the Seatbelt
// profile (see applySeatbelt).
func applyLayers(cfg *config) ([]stageconfig.Layer, []stageconfig.Missing) {
	return runSteps(cfg, []step{{stageconfig.LayerRlimits, applyRlimits, false}, {stageconfig.LayerSeatbelt, applySeatbelt, false}})
}

// applySeatbelt checks that the profile can be applied here, by running
// /usr/bin/true under it, and then rewrites the command so that the script
// is executed through sandbox-exec under the same profile. The check
// catches what would otherwise surface only as a failed script: no
// sandbox-exec (it is deprecated and might go), a profile this macOS
// rejects, or a caller that is itself sandboxed (nested profiles are
// refused by the kernel). The cost is one short process per run.
func applySeatbelt(cfg *config) error {
	if cfg.Seatbelt == "" {
		return errors.New("no profile was generated")
	}
	if st, err := os.Stat(SandboxExec); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is missing: this macOS has no command-line Seatbelt", SandboxExec)
	}
	check := exec.Command(SandboxExec, "-p", cfg.Seatbelt, "/usr/bin/true")
	check.Env = []string{}
	// Fork and exec: sandbox-exec follows, as the init process's
	// identity, running /usr/bin/true under the run's profile.
	if out, err := check.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return fmt.Errorf("sandbox-exec refused the profile (%v): %s", err, msg)
	}
	cfg.Argv = append([]string{SandboxExec, "-p", cfg.Seatbelt}, cfg.Argv...)
	return nil
}

// execScript sets RLIMIT_AS and executes the script; it returns only when
// execve failed, after reporting.
func execScript(cfg *config, report *os.File) {
	if err := setAddressSpace(cfg); err != nil {
		stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
		return
	}
	err := syscall.Exec(cfg.Argv[0], cfg.Argv, cfg.Env)
	stageconfig.WriteReport(report, stageconfig.Report{ExecError: err.Error()})
}
