package run

import (
	"errors"
	"fmt"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// Grants are the host paths a run may use besides its skill and work
// folders, as resolved by Run (absolute, symlinks resolved). They are
// recorded in Result.Grants.
type Grants struct {
	Read  []string // files and folders the script may read
	Write []string // folders the script may create and change files in
	Cwd   string   // the script's working directory when Sandbox.Cwd is set
	// Created lists the Write folders Run created because they were
	// missing.
	Created []string
	// Masked lists the deny-list entries found inside Read grants (and
	// inside Write grants exempted by AllowDenied), hidden from the script
	// (see DefaultDenyPaths).
	Masked []string
	// ReadOnly lists the ReadOnlyPaths that lie inside Write grants: the
	// script reads them but cannot change them.
	ReadOnly []string
	// Autorun lists the files and folders inside Write grants that the
	// caller's tools run on their own (.git, .envrc, .vscode, ...: see
	// docs/grants.md), kept read-only; AutorunWritable the Write grants
	// exempted (Sandbox.AutorunWritable).
	Autorun         []string
	AutorunWritable []string
}

// planGrants plans the grants of s (grants.New) for a run whose skill
// folder is skill ("" skips the overlap check) and whose host identity is
// uid:gid; dry makes no folder (CheckGrants). The planted-symlink check
// is against the sandbox identity a root caller's scripts run as. Under
// the gvisor backend nothing is id-mapped (runsc binds grants by path):
// a missing write folder is made as where no mapping can be had.
func (s *Sandbox) planGrants(skill string, dry bool, uid, gid int) (*grants.Plan, error) {
	nominal, _ := sandboxIdentity()
	gp, err := grants.New(grants.Request{
		Read: s.ReadPaths, Write: s.WritePaths, Cwd: s.Cwd,
		ReadOnly: s.ReadOnlyPaths, AllowDenied: s.AllowDenied, AutorunWritable: s.AutorunWritable,
		Deny:    append(DefaultDenyPaths(), s.DenyPaths...),
		Sockets: s.AllowUnix,
		Skill:   skill, Dry: dry, MountNS: !slices.Contains(s.Disable, LayerMountNS),
		UID: uid, GID: gid,
		Nominal:  nominal,
		Planted:  func(owner uint32) bool { return identity.SandboxOwner(owner, nominal) },
		RunIDs:   [2]int{RunIDFirst, RunIDFirst + RunIDCount - 1},
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
