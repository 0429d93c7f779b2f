//go:build !linux

package plan

// hostIdentity is the sandbox identity here: runs have no ids of their
// own.
func (s *Request) hostIdentity() (hostIdentity, error) {
	uid, gid := SandboxIdentity()
	return hostIdentity{uid: uid, gid: gid}, nil
}
