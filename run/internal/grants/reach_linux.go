package grants

import (
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// checkOwnReach refuses a grant that the caller, as whom the sandbox runs,
// cannot use as reach says (a --read /root of an unprivileged user): the
// script would only meet EACCES. faccessat(2) with AT_EACCESS asks the
// kernel, so supplementary groups, ACLs and a read-only file system count
// as they will for the script. A mount namespace changes nothing here: the
// grant is bound in with its owner and mode, and the folders above it
// were searchable, or it could not have been resolved.
func checkOwnReach(reach map[string]string) error {
	for _, path := range slices.Sorted(maps.Keys(reach)) {
		want := reach[path]
		st, err := os.Stat(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", stageconfig.ErrBadConfig, path, err)
		}
		err = unix.Faccessat(unix.AT_FDCWD, path, wantBits(want, st.IsDir()), unix.AT_EACCESS)
		if err == nil {
			continue
		}
		how, chmod := accessWords(want, "u")
		return fmt.Errorf("%w: %s is not %s by uid %d, the identity the sandbox runs as (%v); the script could not use it (fix: chmod %s %s if it is yours, or grant a path you can use)", stageconfig.ErrBadConfig, path, how, os.Geteuid(), err, chmod, path)
	}
	return nil
}

// accessWords names what want ("r", "rw" or "x") asks of a path, and the
// chmod mode that gives it to who ("u" or "o").
func accessWords(want, who string) (how, chmod string) {
	switch want {
	case "rw":
		return "writable", who + "+rwX"
	case "x":
		return "searchable", who + "+x"
	}
	return "readable", who + "+rX"
}

// errGrantAccess names the path the sandbox identity cannot use, and the
// fix; unmapped says that it was to be id-mapped and could not be.
func errGrantAccess(path string, uid int, want string, unmapped bool) error {
	how, chmod := accessWords(want, "o")
	why := ""
	if unmapped {
		why = ", and it cannot be id-mapped here"
	}
	chown := fmt.Sprintf("chown %d %s, or ", uid, path)
	if identity.IsRunID(uint32(uid)) {
		chown = "" // the next run has another id
	}
	return fmt.Errorf("%w: %s is not %s by %s the identity the sandbox runs as%s (fix: %schmod %s %s, or let skill-sandbox create the --write folder, or run skill-sandbox as its owner rather than root)", stageconfig.ErrBadConfig, path, how, identity.Name(uid), why, chown, chmod, path)
}

// CheckReach is the permission check without a mount namespace,
// where the script reaches each grant through the host's folders as the
// sandbox identity. When that identity is the caller's own, the kernel
// answers for it (checkOwnReach).
func CheckReach(uid, gid int, reach map[string]string) error {
	if uid == os.Geteuid() {
		return checkOwnReach(reach)
	}
	for path, want := range reach {
		if bad := identity.Unreachable(path, uid, gid, identity.PermExec); bad != "" && bad != path {
			return &UnreachableError{Path: bad, UID: uid}
		}
		if !grantAccessible(path, uid, gid, want) {
			return errGrantAccess(path, uid, want, false)
		}
	}
	return nil
}
