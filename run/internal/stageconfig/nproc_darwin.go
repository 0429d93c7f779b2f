//go:build darwin

package stageconfig

// NprocIsPerRun is true: RLIMIT_NPROC counts every process of the user
// here, and the supervisor adds the user's current count to MaxProcs
// (posix.CountProcs) before the init process sets it. The limit binds the run's
// processes only (other programs of the user do not inherit it); its cost
// is that the run's budget shrinks while the user's other programs start
// processes during the run.
func NprocIsPerRun() bool { return true }
