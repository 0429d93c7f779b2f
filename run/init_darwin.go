//go:build darwin

package run

import (
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

const rlimitNPROC = unix.RLIMIT_NPROC

// nprocIsPerRun is false: RLIMIT_NPROC counts every process of the user
// here, so a per-run cap would break other programs of the same user.
func nprocIsPerRun() bool { return false }

// applyLayers applies what this platform offers: resource limits. The
// Linux kernel layers are reported missing.
func applyLayers(cfg *initConfig) ([]Layer, []Missing) {
	applied, missing := runSteps(cfg, []step{{LayerRlimits, applyRlimits}})
	for _, l := range cfg.Layers {
		if l != LayerRlimits {
			missing = append(missing, Missing{Layer: l, Reason: "not available on " + runtime.GOOS})
		}
	}
	return applied, missing
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
func spawnAndReap(*initConfig, *os.File) int { return initExitFailure }
