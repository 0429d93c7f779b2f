package run

// nprocIsPerRun: on Linux the supervisor adjusts the limit for the
// fallback without a user namespace (see launch), so it always applies.
func nprocIsPerRun() bool { return true }
