package stage

import (
	"fmt"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// rlimit pairs a resource with its value for setLimits.
type rlimit struct {
	name     string
	resource int
	value    uint64
}

// applyRlimits sets every resource limit except RLIMIT_AS (see
// setAddressSpace). Soft and hard limits are equal so the script cannot
// raise them. syscall.Setrlimit is used on purpose: for RLIMIT_NOFILE it
// also tells the Go runtime not to restore its own raised soft limit at
// execve.
func applyRlimits(cfg *config) error {
	l := cfg.Limits
	list := []rlimit{
		{"RLIMIT_CORE", syscall.RLIMIT_CORE, 0},
		{"RLIMIT_FSIZE", syscall.RLIMIT_FSIZE, l.FileSize},
		{"RLIMIT_NOFILE", syscall.RLIMIT_NOFILE, l.OpenFiles},
		{"RLIMIT_CPU", syscall.RLIMIT_CPU, l.CPUSeconds},
	}
	if l.Procs > 0 && stageconfig.NprocIsPerRun() {
		list = append(list, rlimit{"RLIMIT_NPROC", rlimitNPROC, l.Procs})
	}
	for _, r := range list {
		if r.value == 0 && r.resource != syscall.RLIMIT_CORE {
			continue
		}
		if err := setLimit(r.resource, r.value); err != nil {
			return fmt.Errorf("%s=%d: %w", r.name, r.value, err)
		}
	}
	return nil
}

// setAddressSpace sets RLIMIT_AS just before execve.
func setAddressSpace(cfg *config) error {
	if cfg.Limits.AddressSpace == 0 || !stageconfig.Has(cfg.Layers, stageconfig.LayerRlimits) {
		return nil
	}
	if err := setLimit(syscall.RLIMIT_AS, cfg.Limits.AddressSpace); err != nil {
		return fmt.Errorf("RLIMIT_AS: %w", err)
	}
	return nil
}

// setLimit sets soft and hard limit to v, or to the current hard limit if
// that is lower (see proc.WithinHardLimit).
func setLimit(resource int, v uint64) error {
	v = proc.WithinHardLimit(resource, v)
	return syscall.Setrlimit(resource, &syscall.Rlimit{Cur: v, Max: v})
}
