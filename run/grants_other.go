//go:build !linux

package run

import (
	"io/fs"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// mountGrants: there is no mount namespace here (see grants_readonly.go).
const mountGrants = false

// handOver has nothing to hand over here: there is no mount namespace to
// attach a tree in, and the script reaches the grants as the host allows.
func handOver(int, int, *stageconfig.Config, bool) ([]*os.File, error) { return nil, nil }

// checkGrantReach leaves the grants to the host's permissions here.
func checkGrantReach(int, int, map[string]string) error { return nil }

// fileIDOf has no mount to check against here.
func fileIDOf(fs.FileInfo) [2]uint64 { return [2]uint64{} }

// mountIDOf has no mount to tell apart here.
func mountIDOf(string) uint64 { return 0 }

// canMapWrite: no id-mapped mounts here; the sandbox runs as the caller.
func canMapWrite(string, int, int) bool { return false }
