//go:build !linux

package run

import "github.com/skill-sandbox/skill-sandbox/internal/identity"

// hostIdentity is the sandbox identity here: runs have no ids of their
// own.
func (s *Sandbox) hostIdentity() (hostIdentity, error) {
	uid, gid := sandboxIdentity()
	return hostIdentity{uid: uid, gid: gid}, nil
}

// unreserve has nothing to put back here: pools hold no init processes.
func (pl *Pool) unreserve(*pooledInit, *identity.RunID) {}
