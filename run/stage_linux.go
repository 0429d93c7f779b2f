package run

// ExecInitIfRequested does nothing on Linux, where the sandbox's init
// process is a clone of the caller that never executes this program again
// (see run/internal/initproc); on macOS the init process is this program
// re-executed, and ExecInitIfRequested must then come first in main and in
// TestMain of tests that use Run. Calling it on every platform keeps a
// program portable.
func ExecInitIfRequested() {}
