// Package identity decides which host uid and gid a run's scripts get.
// An unprivileged caller's scripts run as the caller. A root caller's
// never run as host root: they run as nobody (Nobody), or, in the
// initial user namespace, as a host id of their own from a block above
// every range distributions and systemd hand out (RunIDFirst,
// RunIDCount), held for the run's lifetime by a lock file, so that the
// kernel's per-user counters (epoll watches, RLIMIT_NPROC, queued
// signals) are not shared between runs.
//
// For most uses: Sandbox is the identity a run gets without an id of its
// own, OwnRunIDs says whether runs get ids of their own, Take takes one
// (Release gives it back), RootKept says when a root caller's user
// namespace leaves the script host root, and FirstUnreachable finds the
// first of the skill folder, script and interpreter that another
// identity than the caller's cannot use. IsRunID, SandboxOwner and Name
// answer questions about an id for the grant checks and their errors.
//
// It runs in the supervisor. The init process changes to the identity
// chosen here (run/internal/initplan's RootCaller). On macOS Sandbox is
// the caller or nobody, and on Windows there is none (-1): the script
// runs as the caller. It sits outside run/ because internal/outfile,
// which the CLI and audit use, needs Sandbox and SandboxOwner.
package identity
