//go:build !linux

package run

// runID is a run's own host id; runs have none here.
type runID struct{ id int }

// release does nothing here.
func (*runID) release() {}

// ownRunIDs is false here: root callers' runs have no ids of their own.
func ownRunIDs() bool { return false }

// hostIdentity is the sandbox identity here.
func (s *Sandbox) hostIdentity() (hostIdentity, error) {
	uid, gid := sandboxIdentity()
	return hostIdentity{uid: uid, gid: gid}, nil
}

// unreserve has nothing to put back here: pools hold no stages.
func (pl *Pool) unreserve(*pooledInit, *runID) {}
