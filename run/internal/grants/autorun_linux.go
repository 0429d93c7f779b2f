package grants

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/internal/walk"
	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// AutorunEntry is an existing auto-run entry of a write grant; Mount is
// set for a regular file or folder (a symlink or special file is left to
// the sweep, which goes by its inode).
type AutorunEntry struct {
	stageconfig.GrantMount
	Mount bool
}

// errTooMany ends FindAutorun past its bound.
var errTooMany = errors.New("too many")

// FindAutorun walks the write grant root (by descriptors, following no
// symlink: walk.NoFollowAt) for entries autorun.Matches matches and
// folders with a git folder's shape (artifacts.GitDirAt), not going into
// a matching folder, and returns them; more than max of them, or more
// than artifacts.MaxEntries entries walked, is an error, as is a folder
// it cannot read: a file left unseen would stay writable.
func FindAutorun(root string, max int) ([]AutorunEntry, error) {
	var out []AutorunEntry
	n := 0
	var stop error
	err := walk.NoFollowAt(root, func(parent int, name, p string, st *unix.Stat_t) walk.Step {
		if n++; n > artifacts.MaxEntries {
			stop = fmt.Errorf("more than %d entries", artifacts.MaxEntries)
			return walk.Stop
		}
		if p == root {
			return walk.On
		}
		if !autorun.Matches(p[len(root)+1:]) && (st.Mode&unix.S_IFMT != unix.S_IFDIR || !artifacts.GitDirAt(parent, name)) {
			return walk.On
		}
		if len(out) == max {
			stop = fmt.Errorf("%w: more than %d", errTooMany, max)
			return walk.Stop
		}
		t := st.Mode & unix.S_IFMT
		if err := sameUnderOtherCase(parent, name, p, st); err != nil && (t == unix.S_IFREG || t == unix.S_IFDIR) {
			stop = err
			return walk.Stop
		}
		out = append(out, AutorunEntry{
			GrantMount: stageconfig.GrantMount{Path: p, Dev: uint64(st.Dev), Ino: uint64(st.Ino)},
			Mount:      t == unix.S_IFREG || t == unix.S_IFDIR,
		})
		return walk.Skip
	})
	if stop != nil {
		return nil, stop
	}
	return out, err
}

// ciSharedDentry are the file systems whose case-insensitive folders
// (casefold, or the file system's own rule) look every spelling of a
// name up to one dentry (a d_compare of their own), so that a read-only
// mount on .envrc covers .ENVRC too: ext4, tmpfs, f2fs, vfat and msdos,
// exfat.
var ciSharedDentry = map[uint32]bool{0xEF53: true, 0x01021994: true, 0xF2F52010: true, 0x4d44: true, 0x2011BAB0: true}

// sameUnderOtherCase refuses an auto-run entry that the name with its
// letters' case swapped reaches too (a case-insensitive folder) on a file
// system not known to resolve both to one dentry: there (a FUSE file
// system that ignores case, an SMB share) the read-only mount on the
// entry was found bypassed by the other spelling (.ENVRC, .GIT/config).
func sameUnderOtherCase(parent int, name, p string, st *unix.Stat_t) error {
	other := strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, name)
	var ost unix.Stat_t
	if other == name || unix.Fstatat(parent, other, &ost, unix.AT_SYMLINK_NOFOLLOW) != nil || ost.Dev != st.Dev || ost.Ino != st.Ino {
		return nil
	}
	var fs unix.Statfs_t
	if err := unix.Fstatfs(parent, &fs); err == nil && ciSharedDentry[uint32(fs.Type)] {
		return nil
	}
	return fmt.Errorf("%s is also reached as %s: a case-insensitive file system (type %#x) where a read-only mount on one spelling does not cover the others", p, other, uint32(fs.Type))
}
