package run

import (
	"slices"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// MakeWriteFolder creates dir (with its parents) when it is missing, the
// way Run creates a missing WritePaths folder for a run on backend
// (Sandbox.Backend): owned by the caller. For a root caller whose sandbox
// runs as uid 65534 that holds where the folder can be handed over
// id-mapped (see docs/grants.md); where it cannot, or the backend is
// gvisor, which hands nothing over, dir is given to uid 65534 so that
// scripts can write in it. It reports whether it created dir.
func MakeWriteFolder(dir, backend string) (bool, error) {
	uid, gid := sandboxIdentity()
	made, err := makeWriteFolder(dir, backend != BackendGVisor, uid, gid)
	return slices.Contains(made, dir), err
}

// makeWriteFolder is grants.MakeWriteFolder for the run's host identity
// uid:gid; mapped is false when the run will have no mount namespace, so
// nothing is handed over id-mapped (canMapWrite).
func makeWriteFolder(dir string, mapped bool, uid, gid int) ([]string, error) {
	return grants.MakeWriteFolder(dir, uid, gid, func(parent string) bool {
		return mapped && canMapWrite(parent, uid, gid)
	})
}
