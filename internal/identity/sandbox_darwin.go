package identity

import (
	"os"
	"os/user"
	"strconv"
)

// Sandbox returns the host uid and gid the script runs as: the caller's,
// or nobody's when the caller is root.
func Sandbox() (uid, gid int) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid()
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return 0xfffffffe, 0xfffffffe
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}
