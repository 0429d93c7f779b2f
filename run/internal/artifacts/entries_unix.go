//go:build linux || darwin

package artifacts

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/walk"

	"golang.org/x/sys/unix"
)

// walkEntries calls visit for root and every entry under it (see
// walk.NoFollow, which never leaves root), until visit returns false.
func walkEntries(root string, visit func(p string, st fileState, folder bool) bool) error {
	return walk.NoFollow(root, func(p string, st *unix.Stat_t) bool {
		mode := modeOf(uint32(st.Mode))
		return visit(p, fileState{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: uint64(st.Ino), mode: mode}, mode.IsDir())
	})
}

// openNoFollow is walk.OpenNoFollow: no symlink is followed anywhere
// on p, and a FIFO planted in the file's place does not block.
func openNoFollow(p string) (*os.File, error) { return walk.OpenNoFollow(p) }

// modeOf converts a st_mode to an fs.FileMode, as os.Lstat does.
func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	for bit, fm := range map[uint32]fs.FileMode{unix.S_ISUID: fs.ModeSetuid, unix.S_ISGID: fs.ModeSetgid, unix.S_ISVTX: fs.ModeSticky} {
		if m&bit != 0 {
			mode |= fm
		}
	}
	return mode
}

// inodeOf returns the inode number of info.
func inodeOf(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}
