//go:build unix

package plan

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// checkSocketWritable refuses a socket the run's identity could not
// connect to (connect needs write permission on the socket): the
// caller's own, as the kernel answers for it, or, for a root caller
// whose runs get host uids of their own, write permission for others.
func checkSocketWritable(p string, st os.FileInfo) error {
	if os.Geteuid() != 0 {
		if err := unix.Faccessat(unix.AT_FDCWD, p, unix.W_OK, unix.AT_EACCESS); err != nil {
			return fmt.Errorf("%w: AllowUnix %s: uid %d, as whom the run connects, may not write to the socket (%v); connecting needs that", ErrBadConfig, p, os.Geteuid(), err)
		}
		return nil
	}
	if st.Mode().Perm()&0o002 == 0 {
		return fmt.Errorf("%w: AllowUnix %s: a root caller's run connects as a host uid of its own, and the socket is not writable by others (mode %04o; connecting needs write permission: chmod o+w %s, or run skill-sandbox as the socket's owner)", ErrBadConfig, p, st.Mode().Perm(), p)
	}
	return nil
}
