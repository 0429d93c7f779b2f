//go:build !linux && !darwin

package plan

// SandboxIdentity has no meaning here: the script runs as the caller, or
// not at all.
func SandboxIdentity() (int, int) { return -1, -1 }

// checkReachable has nothing to check here.
func checkReachable(int, int, string, string, string) error { return nil }

// writableFolder leaves a missing write folder to the mkdir of the run
// here.
func writableFolder(string) error { return nil }
