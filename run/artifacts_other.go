//go:build !linux && !darwin

package run

import "io/fs"

// hashOpenFlags: no run starts on this platform (see launch).
const hashOpenFlags = 0

// inodeOf has no inode to report here.
func inodeOf(fs.FileInfo) uint64 { return 0 }
