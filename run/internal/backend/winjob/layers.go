package winjob

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"github.com/skill-sandbox/skill-sandbox/run/internal/winproc"
)

// The parts of a Windows run (see launch_windows.go) that read the plan:
// its layers and its Job Object's limits. They are tested on every
// platform.

// appContainerReason is why LayerAppContainer is always missing.
const appContainerReason = "not implemented on Windows: the script runs with the caller's token, so it can read and write " +
	"what the caller can and use the network (an AppContainer or restricted token would confine it; skill-sandbox does not create one yet)"

// windowsLayers reports the layers of a Windows run.
// jobErr is why the job could not be created (nil when it was).
func windowsLayers(p *backend.Spec, jobErr error) (applied []stageconfig.Layer, missing []stageconfig.Missing) {
	for _, l := range backend.WindowsLayerList() {
		switch {
		case stageconfig.Has(p.Disabled, l):
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: "disabled"})
		case l == stageconfig.LayerJob && jobErr != nil:
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: jobErr.Error()})
		case l == stageconfig.LayerJob:
			applied = append(applied, l)
		default:
			missing = append(missing, stageconfig.Missing{Layer: l, Reason: appContainerReason})
		}
	}
	return applied, missing
}

// jobLimitsOf derives the job's limits from the same settings the Linux
// cgroup and rlimits use: MemoryMB for the whole tree (there is no tmpfs
// work folder here, so WorkDirMB is not added), MaxProcs processes, and
// the CPU seconds of each process.
func jobLimitsOf(p *backend.Spec) winproc.Limits {
	return winproc.Limits{
		JobMemoryBytes:  uint64(p.MemoryMB) << 20,
		ActiveProcesses: uint32(min(p.Config.Limits.Procs, 1<<31)),
		ProcessUserTime: int64(min(p.Config.Limits.CPUSeconds, 1<<32)) * 10_000_000,
	}
}
