package grants

import (
	"fmt"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// NeverGranted are trees no grant may touch: kernel interfaces, devices
// and runtime sockets. The sandbox has its own /proc and /dev.
func NeverGranted() []string { return []string{"/proc", "/sys", "/dev", "/run"} }

// PathUnder reports whether p lies strictly inside dir.
func PathUnder(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// CheckGrantable refuses a grant of, or inside, a deny entry or a tree
// that is never granted. p is the grant, flag the flag that named it,
// allowed the AllowDenied paths (as given and resolved).
func CheckGrantable(p, flag string, deny *denylist.List, allowed map[string]bool) error {
	return checkGrantable(p, flag, NeverGranted(), deny, allowed)
}

// socketNeverGranted are the trees no socket grant (run.Sandbox.AllowUnix)
// may touch: NeverGranted but /run, where servers keep their sockets; the
// sandbox has no /run of its own, so the one socket is all it shows there.
func socketNeverGranted() []string { return []string{"/proc", "/sys", "/dev"} }

// checkGrantable is CheckGrantable with the trees never granted.
func checkGrantable(p, flag string, never []string, deny *denylist.List, allowed map[string]bool) error {
	for _, n := range never {
		if PathUnder(p, n) || p == n {
			return fmt.Errorf("%w: %s %s: %s is never granted (kernel interfaces, devices and sockets)", stageconfig.ErrBadConfig, flag, p, n)
		}
	}
	if allowed[p] {
		return nil
	}
	if d, _ := deny.EntryOf(p); d != "" {
		return fmt.Errorf("%w: %s %s: %s is on the deny list (credentials, keys, history); only a policy naming the path exactly can grant it", stageconfig.ErrBadConfig, flag, p, d)
	}
	return nil
}
