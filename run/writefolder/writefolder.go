// Package writefolder makes the folders that runs are then given to
// write in, as run.Sandbox makes a missing WritePaths folder.
//
// For most uses, call Make with the folder before naming it in
// run.Sandbox.WritePaths (or Cwd), when the caller writes in it first, as
// skill-sandbox's server does with an execution's input files, or must
// resolve it, as its MCP server does with a workspace:
//
//	made, err := writefolder.Make(dir, sandbox.Backend)
//
// The folder belongs to the caller. For a root caller whose sandbox runs
// as uid 65534 that holds where the folder can be handed to the run
// id-mapped (see docs/grants.md); where it cannot, the folder is given to
// uid 65534 so that scripts can write in it.
//
// It runs in the supervisor: the caller's own process.
package writefolder

import (
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// Make creates dir (with its parents) when it is missing, the way a run
// on backend (run.Sandbox.Backend) creates a missing WritePaths folder
// (see the package doc; the gvisor backend hands nothing over id-mapped,
// so there the folder is always the sandbox identity's). It reports
// whether it created dir; an existing dir is left as it is.
func Make(dir, backend string) (made bool, err error) {
	uid, gid := identity.Sandbox()
	all, err := grants.MakeWriteFolder(dir, uid, gid, func(parent string) bool {
		return backend != gvisor.Name && grants.CanMapWrite(parent, uid, gid)
	})
	return slices.Contains(all, dir), err
}
