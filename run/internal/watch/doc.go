// Package watch is the supervisor's watch of a run (layer "watch"): it
// keeps two promises that no kernel layer keeps without privileges.
//
//   - The work folder's total size and inode count, when the work folder is
//     a plain folder on the host disk: kept (--keep-workdir), or a degraded
//     run without a mount namespace and so without the size-capped tmpfs.
//     RLIMIT_FSIZE caps each file, but nothing caps the sum, and a project
//     quota (XFS/ext4 prjquota) needs root and a prepared file system.
//   - The run's total memory, when no cgroup caps it (an ordinary user
//     without a delegated cgroup v2 subtree): RLIMIT_AS is per process, so
//     128 processes of 450 MiB fit under a 512 MiB limit.
//
// It also caps the growth of the write grants, which the work folder's
// tmpfs never covers.
//
// For most uses: fill a Plan (a zero cap is not checked; GrantsUsage gives
// what the write grants hold before the run, InodeCap the inode cap of a
// work folder, PIDNSLink the init process's PID namespace), start Run in a
// goroutine of its own, and close its done channel when the run ends. Past
// a cap Run calls its exceeded function once with the cap's name
// (WorkDirBytes, WorkDirInodes, Memory, WriteBytes: the values of
// run.Result.LimitExceeded) and returns; the caller kills the run.
//
// Every Interval the watch walks the work folder (stopping as soon as it
// passes a cap, so a walk costs at most the inode cap in lstat calls) and,
// every ProcEvery walks, the run's processes (procSet): their open
// descriptors for files deleted but still held on the work folder's file
// system (which no walk finds), and their private resident memory (statm's
// cheap figure first, smaps_rollup's exact one past the cap). It is a
// poll, not a kernel limit: a run can overshoot by what it writes or
// allocates in one interval plus the kill (docs/security.md has the
// measured figures).
//
// It runs in the supervisor and reads /proc, which only Linux has:
// elsewhere Run does nothing.
package watch
