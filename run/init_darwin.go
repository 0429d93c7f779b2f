//go:build darwin

package run

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const rlimitNPROC = unix.RLIMIT_NPROC

// nprocIsPerRun is true: RLIMIT_NPROC counts every process of the user
// here, and the supervisor adds the user's current count to MaxProcs
// (countProcs) before the init stage sets it. The limit binds the run's
// processes only (other programs of the user do not inherit it); its cost
// is that the run's budget shrinks while the user's other programs start
// processes during the run.
func nprocIsPerRun() bool { return true }

// sandboxExec is the program that applies a Seatbelt profile and executes
// a command under it.
const sandboxExec = "/usr/bin/sandbox-exec"

// applyLayers applies the resource limits and prepares the Seatbelt
// profile (see applySeatbelt).
func applyLayers(cfg *initConfig) ([]Layer, []Missing) {
	return runSteps(cfg, []step{{LayerRlimits, applyRlimits}, {LayerSeatbelt, applySeatbelt}})
}

// applySeatbelt checks that the profile can be applied here, by running
// /usr/bin/true under it, and then rewrites the command so that the script
// is executed through sandbox-exec under the same profile. The check
// catches what would otherwise surface only as a failed script: no
// sandbox-exec (it is deprecated and might go), a profile this macOS
// rejects, or a caller that is itself sandboxed (nested profiles are
// refused by the kernel). The cost is one short process per run.
func applySeatbelt(cfg *initConfig) error {
	if cfg.Seatbelt == "" {
		return errors.New("no profile was generated")
	}
	if st, err := os.Stat(sandboxExec); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is missing: this macOS has no command-line Seatbelt", sandboxExec)
	}
	check := exec.Command(sandboxExec, "-p", cfg.Seatbelt, "/usr/bin/true")
	check.Env = []string{}
	if out, err := check.CombinedOutput(); err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		return fmt.Errorf("sandbox-exec refused the profile (%v): %s", err, msg)
	}
	cfg.Argv = append([]string{sandboxExec, "-p", cfg.Seatbelt}, cfg.Argv...)
	return nil
}

// closeExtraFDs marks every descriptor above 2 close-on-exec.
func closeExtraFDs() {
	var lim unix.Rlimit
	max := 1024
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && lim.Cur < 1<<16 {
		max = int(lim.Cur)
	}
	for fd := 3; fd < max; fd++ {
		unix.CloseOnExec(fd)
	}
}

// execScript sets RLIMIT_AS and executes the script; it returns only when
// execve failed, after reporting.
func execScript(cfg *initConfig, report *os.File) {
	if err := setAddressSpace(cfg); err != nil {
		writeReport(report, initReport{ExecError: err.Error()})
		return
	}
	err := syscall.Exec(cfg.Argv[0], cfg.Argv, cfg.Env)
	writeReport(report, initReport{ExecError: err.Error()})
}

// isNamespaceInit is false: there are no PID namespaces here, so the init
// stage always execs the script itself.
func isNamespaceInit() bool { return false }

// spawnAndReap is never called here (see isNamespaceInit).
func spawnAndReap(*initConfig, *os.File, func() bool) int { return initExitFailure }
