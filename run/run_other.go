//go:build !linux && !darwin && !windows

package run

// ExecInitIfRequested does nothing on this platform: there is no init process.
func ExecInitIfRequested() {}

// sandboxIdentity has no meaning here.
func sandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check here.
func checkReachable(int, int, string, string, string) error { return nil }

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }
