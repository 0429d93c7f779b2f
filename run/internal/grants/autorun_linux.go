package grants

import (
	"errors"
	"fmt"

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
