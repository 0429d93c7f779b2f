//go:build linux || darwin

package reaper

import (
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
)

// Stage is what the init stage hands the reaper besides the config: what
// it decided or opened on its way through the layers.
type Stage struct {
	// OOMScore is the reaper's own oom_score_adj, opened before Landlock
	// (see OpenOOMScore); nil leaves it alone.
	OOMScore *os.File
	// Seccomp is the policy of the init stage's filter, which the reaper
	// puts on the Go runtime's other threads too (TSYNC).
	Seccomp seccomp.Policy
	// Filtered says that the init stage loaded that filter (the seccomp
	// layer applied); only then does the reaper load it on its other
	// threads. PR_GET_SECCOMP cannot tell: a filter of the caller's own (a
	// container's profile) shows as SECCOMP_MODE_FILTER too, and where the
	// init stage's was not loaded, for want of no_new_privs, the reaper's
	// attempt would fail the same way and kill the script.
	Filtered bool
}
