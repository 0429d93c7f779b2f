package run

// ExecInitIfRequested does nothing on Windows: there is no init process.
func ExecInitIfRequested() {}

// sandboxIdentity: the script runs as the caller; there are no uids.
func sandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check: the script runs as the caller.
func checkReachable(int, int, string, string, string) error { return nil }

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }
