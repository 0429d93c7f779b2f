//go:build !linux

package grants

import "io/fs"

// mountGrants: there is no mount namespace here (see readonly.go).
const mountGrants = false

// fileIDOf has no mount to check against here.
func fileIDOf(fs.FileInfo) [2]uint64 { return [2]uint64{} }

// mountIDOf has no mount to tell apart here.
func mountIDOf(string) uint64 { return 0 }
