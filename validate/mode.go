package validate

import (
	"fmt"
	"io/fs"
	"os"
)

// kindName describes a file type for an error message: "directory",
// "named pipe", "socket", ... fs.FileMode.Type().String() is no good
// here, as it prints "d---------" for a folder and so hides the kind
// behind permission dashes that are not the file's permissions.
func kindName(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeDir != 0:
		return "directory"
	case t&fs.ModeSymlink != 0:
		return "symlink"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "character device"
	case t&fs.ModeDevice != 0:
		return "block device"
	case t&fs.ModeIrregular != 0:
		return "irregular file"
	case t == 0:
		return "regular file"
	}
	return "special file"
}

// notRegular is the error text for a file that must be a regular file.
func notRegular(m fs.FileMode) string {
	return fmt.Sprintf("not a regular file (a %s)", kindName(m))
}

// checkReadable refuses a file that only root's permission override could
// read: root bypasses the permission bits, so a SKILL.md of mode 0000
// would validate as root and then be unreadable to anyone else, the
// sandbox's uid included. The rule applies to every caller (a non-root
// caller is refused by open(2) anyway): at least one read bit must be set.
// euid is the caller's effective uid.
func checkReadable(st os.FileInfo, euid int) error {
	if euid == 0 && st.Mode().Perm()&0o444 == 0 {
		return fmt.Errorf("not readable (mode %04o): only root's permission override could read it", st.Mode().Perm())
	}
	return nil
}
