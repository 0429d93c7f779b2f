//go:build !linux

package run

// hostIdentity is the sandbox identity here: runs have no ids of their
// own.
func (s *Sandbox) hostIdentity() (hostIdentity, error) {
	uid, gid := sandboxIdentity()
	return hostIdentity{uid: uid, gid: gid}, nil
}
