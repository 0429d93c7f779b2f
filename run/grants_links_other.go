//go:build !linux && !darwin

package run

// plantedLink finds nothing here: the sandbox runs as the caller, whose
// own symlinks cannot be told from a script's.
func plantedLink(string, int) string { return "" }
