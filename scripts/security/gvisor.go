//go:build linux

package main

import (
	"fmt"
	"os/exec"
	"strings"
)

// The gvisor backend's pass (-backend gvisor): every sandboxed probe runs
// with --backend gvisor. What the pass cannot show is said, never passed
// over: the ablation (it disables the native backend's layers one at a
// time) and the pass without user namespaces do not apply, and a probe
// whose run the gvisor backend refuses for what the probe needs (the
// network, a root caller's grants) is skipped with the refusal as its
// reason, not scored.

// useBackend checks -backend and sets what the gvisor pass changes; it
// returns a usage problem, or "".
func useBackend(cfg *config) string {
	switch cfg.backend {
	case "native":
		return ""
	case "gvisor":
	default:
		return fmt.Sprintf("-backend must be native or gvisor, got %q", cfg.backend)
	}
	if _, err := exec.LookPath("runsc"); err != nil {
		return "-backend gvisor needs runsc on PATH (apt-get install runsc)"
	}
	cfg.extraFlags = append(cfg.extraFlags, "--backend", "gvisor")
	cfg.ablate, cfg.noUserNS = false, false
	return ""
}

// ablationSkipped says why the gvisor pass ablates nothing; "" otherwise.
func ablationSkipped(cfg *config) string {
	if cfg.backend != "gvisor" {
		return ""
	}
	return "the gvisor backend does not take the native layers the ablation disables one at a time; the pass without user namespaces is skipped too (rootless runsc needs them)"
}

// gvisorSkip returns why a sandboxed run of the gvisor pass says nothing
// about gVisor: the gvisor backend refused it before the script started
// (a usage error or an unsupported configuration), or it ran on another
// backend. "" when the run is the gvisor backend's.
func gvisorSkip(cfg *config, o *outcome) string {
	if cfg.backend != "gvisor" || o == nil || o.record == nil {
		return ""
	}
	started, _ := o.record["started"].(bool)
	kind, _ := o.record["error_kind"].(string)
	msg, _ := o.record["error"].(string)
	backend, _ := o.record["backend"].(string)
	switch {
	case !started && (kind == "usage" || kind == "unsupported"):
		if msg == "" {
			msg = strings.TrimSpace(o.stderr)
		}
		return "the gvisor backend refuses this probe's run: " + truncate(msg, 240)
	case started && backend != "gvisor":
		return "ran on the " + orNative(backend) + " backend, not gvisor"
	}
	return ""
}

func orNative(b string) string {
	if b == "" {
		return "native"
	}
	return b
}

// knownGap returns why probe num is known not to be stopped on cfg's
// backend for a caller of uid, or "". Only the gvisor backend has known
// gaps (docs/backends.md, "The attack probes on gvisor"): the pass
// reports them and fails on any other probe not stopped, and on a
// listed one that is stopped, so the list shrinks as gaps close.
func knownGap(cfg *config, num, uid int) string {
	if cfg.backend != "gvisor" {
		return ""
	}
	// None left: 13 and 14 (root) and 14, 24 and 36 (rootless) were
	// closed by RLIMIT_NPROC, the memory watch and (24, the work folder,
	// which is in gVisor's memory) the sized /tmp and the write-grant
	// watch. A new one goes here, with why.
	root := map[int]string{}
	rootless := map[int]string{}
	if uid == 0 {
		return root[num]
	}
	return rootless[num]
}
