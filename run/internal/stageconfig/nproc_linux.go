package stageconfig

// NprocIsPerRun says whether RLIMIT_NPROC binds the run only. On Linux the supervisor adjusts the limit for the
// fallback without a user namespace (see launch), so it always applies.
func NprocIsPerRun() bool { return true }
