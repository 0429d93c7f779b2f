//go:build !linux && !darwin

package identity

// Sandbox returns -1, -1: the script runs as the caller, with no host
// identity of its own to tell apart.
func Sandbox() (uid, gid int) { return -1, -1 }
