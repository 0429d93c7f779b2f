//go:build !linux && !darwin

package run

import "io/fs"

// resolveUnplanted finds nothing here: the sandbox runs as the caller,
// whose own symlinks cannot be told from a script's.
func resolveUnplanted(string, int) (string, fs.FileInfo, string) { return "", nil, "" }
