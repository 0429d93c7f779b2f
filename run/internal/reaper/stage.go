//go:build linux || darwin

package reaper

import "os"

// Stage is what the init stage hands the reaper besides the config: what
// it decided or opened on its way through the layers.
type Stage struct {
	// OOMScore is the reaper's own oom_score_adj, opened before Landlock
	// (see OpenOOMScore); nil leaves it alone.
	OOMScore *os.File
	// Filtered says that the init stage loaded its seccomp filter (the
	// seccomp layer applied); only then does the reaper put it on its
	// other threads (seccomp.SyncThreads). PR_GET_SECCOMP cannot tell: a
	// filter of the caller's own (a container's profile) shows as
	// SECCOMP_MODE_FILTER too, and where the init stage's was not loaded,
	// for want of no_new_privs, the reaper's attempt would fail the same
	// way and kill the script.
	Filtered bool
}
