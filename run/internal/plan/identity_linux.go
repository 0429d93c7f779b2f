package plan

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
	"path/filepath"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"

	"golang.org/x/sys/unix"
)

// hostIdentity returns the host uid and gid s's run gets: an id of its own
// (see identity.OwnRunIDs), the one of a pooled init process it reserves
// when s has a pool whose init processes have theirs, else the sandbox
// identity. A run with a write grant that is not id-mapped keeps the
// sandbox identity, nobody (see unmappedWrite).
func (s *Request) hostIdentity() (hostIdentity, error) {
	uid, gid := SandboxIdentity()
	if s.SharedNobody || uid != nobodyUID || !identity.OwnRunIDs() || s.unmappedWrite() {
		return hostIdentity{uid: uid, gid: gid}, nil
	}
	if pi := s.reserve(); pi != nil {
		if id := pi.TakeID(); id != nil {
			return hostIdentity{uid: id.ID, gid: id.ID, own: id, stage: pi}, nil
		}
		s.Pool.Discard(pi)
	}
	id, err := identity.Take(identity.LockBase)
	if err != nil {
		return hostIdentity{}, err
	}
	return hostIdentity{uid: id.ID, gid: id.ID, own: id}, nil
}

// unmappedWrite reports whether a write grant of s may be handed over
// without an id-mapping (see grants.HandOver): a folder of nobody's (made so by
// grants.MakeWriteFolder where no mapping can be had, or by an earlier version),
// a folder still to be made where none can be had (canMapWrite), or any
// write grant without a mount namespace or under the gvisor backend,
// which hands nothing over. Such a folder is written as the
// sandbox identity itself, from one run to the next, so that identity must
// stay the same: nobody, shared with other such runs, as before runs had
// ids of their own. A wrong guess costs no access: the grant is checked
// again when it is handed over. It stays in run for the grants' layers.
func (s *Request) unmappedWrite() bool {
	if len(s.WritePaths) == 0 {
		return false
	}
	if slices.Contains(s.Disable, stageconfig.LayerMountNS) || s.Backend == BackendGVisor {
		return true
	}
	for _, p := range s.WritePaths {
		abs, err := filepath.Abs(p)
		if err != nil {
			continue // refused later
		}
		var st unix.Stat_t
		if unix.Stat(abs, &st) == nil {
			if st.Uid == nobodyUID {
				return true
			}
			continue
		}
		parent := filepath.Dir(abs) // the folder it is to be made in
		for unix.Stat(parent, &st) != nil && filepath.Dir(parent) != parent {
			parent = filepath.Dir(parent)
		}
		if !grants.CanMapWrite(parent, nobodyUID, nobodyUID) {
			return true
		}
	}
	return false
}
