//go:build !linux && !darwin

package walk

import "io/fs"

// ResolveUnplanted finds nothing here: the sandbox runs as the caller,
// whose own symlinks cannot be told from a script's.
func ResolveUnplanted(string, func(uint32) bool) (string, fs.FileInfo, string) { return "", nil, "" }
