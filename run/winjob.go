package run

import (
	"sort"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The pure parts of a Windows run (see exec_windows.go): the Job Object's
// limits and the environment. They are tested on every platform.

// appContainerReason is why LayerAppContainer is always missing.
const appContainerReason = "not implemented on Windows: the script runs with the caller's token, so it can read and write " +
	"what the caller can and use the network (an AppContainer or restricted token would confine it; skill-sandbox does not create one yet)"

// windowsLayers reports the layers of a Windows run.
// jobErr is why the job could not be created (nil when it was).
func windowsLayers(p *plan, jobErr error) (applied []Layer, missing []Missing) {
	for _, l := range windowsLayerList() {
		switch {
		case stageconfig.Has(p.disabled, l):
			missing = append(missing, Missing{Layer: l, Reason: "disabled"})
		case l == LayerJob && jobErr != nil:
			missing = append(missing, Missing{Layer: l, Reason: jobErr.Error()})
		case l == LayerJob:
			applied = append(applied, l)
		default:
			missing = append(missing, Missing{Layer: l, Reason: appContainerReason})
		}
	}
	return applied, missing
}

// windowsLayerList are the layers of a Windows run.
func windowsLayerList() []Layer { return []Layer{LayerJob, LayerAppContainer} }

// jobLimits are the numbers a run's Job Object enforces.
type jobLimits struct {
	JobMemoryBytes  uint64 // JobMemoryLimit: committed memory of all processes together
	ActiveProcesses uint32 // ActiveProcessLimit: processes alive at once
	// ProcessUserTime is PerProcessUserTimeLimit, in 100 ns units: the
	// CPU time of each process, as RLIMIT_CPU on Linux.
	ProcessUserTime int64
}

// jobLimitsOf derives the job's limits from the same settings the Linux
// cgroup and rlimits use: MemoryMB for the whole tree (there is no tmpfs
// work folder here, so WorkDirMB is not added), MaxProcs processes, and
// the CPU seconds of each process.
func jobLimitsOf(p *plan) jobLimits {
	return jobLimits{
		JobMemoryBytes:  uint64(p.memoryMB) << 20,
		ActiveProcesses: uint32(min(p.cfg.Limits.Procs, 1<<31)),
		ProcessUserTime: int64(min(p.cfg.Limits.CPUSeconds, 1<<32)) * 10_000_000,
	}
}

// windowsEnv turns the environment buildEnv made (PATH, HOME, TMPDIR, a
// LANG, blank proxy variables, the request id, the caller's checked
// extras) into a Windows one: PATH holds the system folders and the
// interpreter's folder only; SystemRoot and windir (without which Winsock
// and much of the C runtime fail), ComSpec and PATHEXT are the system's;
// TEMP, TMP, USERPROFILE, APPDATA and LOCALAPPDATA point to the work
// folder. Windows names are case-insensitive, so a caller's variable
// spelled differently ("Path", "temp") is dropped in favour of these, and
// of two spellings of one name (http_proxy, HTTP_PROXY) the first is kept.
// The result is sorted by name, as CreateProcess wants it.
func windowsEnv(env []string, systemRoot, work, interpDir string) []string {
	sys32 := systemRoot + `\System32`
	path := []string{sys32, systemRoot, sys32 + `\Wbem`, sys32 + `\WindowsPowerShell\v1.0`}
	if interpDir != "" {
		path = append([]string{interpDir}, path...)
	}
	set := map[string]string{
		"PATH":         strings.Join(path, ";"),
		"SystemRoot":   systemRoot,
		"windir":       systemRoot,
		"ComSpec":      sys32 + `\cmd.exe`,
		"PATHEXT":      ".COM;.EXE;.BAT;.CMD",
		"TEMP":         work,
		"TMP":          work,
		"USERPROFILE":  work,
		"APPDATA":      work,
		"LOCALAPPDATA": work,
		"HOME":         work,
	}
	var out []string
	seen := map[string]bool{"TMPDIR": true} // a Unix name; TEMP and TMP say it here
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ours := lookupFold(set, k); !ours && !seen[strings.ToUpper(k)] {
			seen[strings.ToUpper(k)] = true
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToUpper(out[i]) < strings.ToUpper(out[j]) })
	return out
}

// lookupFold finds key in m ignoring case.
func lookupFold(m map[string]string, key string) (string, bool) {
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}
