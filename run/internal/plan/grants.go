package plan

import (
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// PlanGrants plans the grants of s (grants.New) for a run whose skill
// folder is skill ("" skips the overlap check) and whose host identity is
// uid:gid; dry makes no folder (CheckGrants). The planted-symlink check
// is against the sandbox identity a root caller's scripts run as. Under
// the gvisor backend nothing is id-mapped (runsc binds grants by path):
// a missing write folder is made as where no mapping can be had.
func (s *Request) PlanGrants(skill string, dry bool, uid, gid int) (*grants.Plan, error) {
	nominal, _ := SandboxIdentity()
	gp, err := grants.New(grants.Request{
		Read: s.ReadPaths, Write: s.WritePaths, Cwd: s.Cwd,
		ReadOnly: s.ReadOnlyPaths, AllowDenied: s.AllowDenied, AutorunWritable: s.AutorunWritable,
		Deny:    append(stageconfig.DefaultDenyPaths(), s.DenyPaths...),
		Sockets: s.AllowUnix,
		Skill:   skill, Dry: dry, MountNS: !slices.Contains(s.Disable, stageconfig.LayerMountNS),
		UID: uid, GID: gid,
		Nominal:  nominal,
		Planted:  func(owner uint32) bool { return identity.SandboxOwner(owner, nominal) },
		RunIDs:   [2]int{identity.RunIDFirst, identity.RunIDFirst + identity.RunIDCount - 1},
		MapWrite: func(parent string) bool { return s.Backend != BackendGVisor && grants.CanMapWrite(parent, uid, gid) },
		Writable: writableFolder,
	})
	var nm *grants.NoMountNSError
	if errors.As(err, &nm) {
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, nm.Error())
	}
	return gp, err
}

// mountOnly is the error that refuses a run of gp without a mount
// namespace (grants.Plan.MountOnly), nil when it needs none.
func mountOnly(gp *grants.Plan) error {
	if gp.MountOnly == "" {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrIsolation, gp.MountOnly)
}

// pathUnder reports whether p lies strictly inside dir (grants.PathUnder).
func pathUnder(p, dir string) bool { return grants.PathUnder(p, dir) }
