package posix

import (
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// ProcMountDesc is how the init process names its mount of a fresh /proc
// (initplan's mountProc), which its failures start with.
const ProcMountDesc = "mount /proc"

// ExplainIncomplete adds the cause to a refused fresh /proc: the kernel
// mounts a new proc only in a mount namespace where one is wholly visible
// (its mount_too_revealing check), and a container masks parts of its
// /proc by mounting over them (/proc/kcore, /proc/keys, /proc/acpi, ...:
// Docker's, Podman's and Kubernetes' default). The sandbox's mount
// namespace copies those mounts, locked, so its PID namespace cannot have
// a /proc of its own there; the run stays refused, with the way out. Read
// only once the mount failed, so the usual start pays nothing for it.
func ExplainIncomplete(incomplete []stageconfig.Missing) []stageconfig.Missing {
	for i, m := range incomplete {
		if m.Layer != stageconfig.LayerMountNS || !strings.HasPrefix(m.Reason, ProcMountDesc) || !strings.Contains(m.Reason, "(EPERM)") {
			continue
		}
		b, err := proc.ReadFile(proc.SelfMountinfo, proc.MaxMountinfo)
		if err != nil {
			continue
		}
		if over := procOvermounts(string(b)); len(over) > 0 {
			incomplete[i].Reason = m.Reason + "; " + procMaskedWhy(over)
		}
	}
	return incomplete
}

// procMaskedWhy words the cause of a refused fresh /proc whose host /proc
// has the mounts over.
func procMaskedWhy(over []string) string {
	list := strings.Join(over, ", ")
	if len(over) > 3 {
		list = fmt.Sprintf("%s and %d more", strings.Join(over[:3], ", "), len(over)-3)
	}
	return "the kernel mounts a new proc only where one is wholly visible, and this /proc has mounts over " + list +
		" (a container's masked paths); fix: unmask /proc for the container " +
		"(podman run --security-opt unmask=/proc/*, docker run --security-opt systempaths=unconfined, " +
		"Kubernetes securityContext.procMount: Unmasked), or run where /proc is not masked"
}

// procOvermounts returns the mount points below /proc in the mountinfo
// text s, but those the kernel lets a new proc ignore (the empty folder
// of binfmt_misc).
func procOvermounts(s string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		// id parent major:minor root mountpoint options ...
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		point := proc.UnescapeMount(f[4])
		if grants.PathUnder(point, "/proc") && point != "/proc/sys/fs/binfmt_misc" {
			out = append(out, point)
		}
	}
	return out
}
