//go:build !linux

package grants

// CanMapWrite: no id-mapped mounts here; the sandbox runs as the caller.
func CanMapWrite(string, int, int) bool { return false }
