package artifacts

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// restrictOthersWrite removes others' write permission from the regular
// file or folder p (named name in the folder open as parent) when the
// run gave it: its ctime is the run's (not before since) and it either
// did not exist before the run (by inode, in before's files or folders)
// or did not have that permission then. The script runs as the caller
// (or the caller's mapped id) in a write grant, so a chmod 0666 or 0777
// there would let any local user change the caller's files after the
// run. It goes by a descriptor opened without following links and
// checked to be the inode walked, as another run may share the grant.
func restrictOthersWrite(parent int, name, p string, st *unix.Stat_t, before *Snapshot, since time.Time) (Neutralised, bool) {
	t := st.Mode & unix.S_IFMT
	if (t != unix.S_IFREG && t != unix.S_IFDIR) || st.Mode&0o002 == 0 || time.Unix(st.Ctim.Unix()).Before(since) {
		return Neutralised{}, false
	}
	old, ok := before.files[p]
	if !ok {
		old, ok = before.folders[p]
	}
	if ok && old.ino == uint64(st.Ino) && old.mode.Perm()&0o002 != 0 {
		return Neutralised{}, false // the caller's choice, kept
	}
	nt := Neutralised{Path: p, Kind: Writable, Action: Restricted}
	if chmodSame(parent, name, st, st.Mode&0o7777&^0o002) != nil {
		nt.Action = Failed
	}
	return nt, true
}

// chmodSame sets the mode of the entry name in the folder open as parent
// to mode, if it is still the inode st describes. It holds the entry by
// an O_PATH descriptor opened without following a symlink, and changes
// it through /proc/self/fd, which reaches that inode itself: opening it
// for reading would need a read permission the script can take away.
func chmodSame(parent int, name string, st *unix.Stat_t, mode uint32) error {
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&unix.S_IFMT != st.Mode&unix.S_IFMT {
		return unix.ESTALE
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

// appendNeutralised appends nt to out within MaxFiles, setting
// truncated past it.
func appendNeutralised(out []Neutralised, truncated bool, nt Neutralised) ([]Neutralised, bool) {
	if len(out) < MaxFiles {
		return append(out, nt), truncated
	}
	return out, true
}
