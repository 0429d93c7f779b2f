package artifacts

import (
	"path/filepath"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/internal/walk"
	"golang.org/x/sys/unix"
)

// Sweep neutralises what a run left in its write grants roots that
// could lead the caller's tools out of the grant, block them, or run
// code on the caller's side, and lists each in the returned Neutralised
// (bounded by MaxFiles; truncated is set past it, or past
// maxEntries entries walked, MaxEntries for a run). A grant of
// autorunRoots is walked whole all the same: it held at most that many
// entries when the run was planned, and a script that made more would
// otherwise hide a planted .git behind them. An entry counts as the
// run's when its ctime, which a script cannot set back, is not before
// since (less a second for the coarse file clock) and it is not the
// inode the snapshot before the run saw at its path:
//
//   - a FIFO, socket or device node is removed (it holds no data; a
//     reader blocks on a FIFO, a device opens the host's hardware);
//   - a symlink whose target, resolved from the grant, leaves it
//     (linkEscapes) is removed: `cp -L`, `tar -h` and file readers
//     follow it to the caller's files;
//   - a file or folder, the grant's own included, that others may write
//     after the run and could not before it (new, or the run's chmod)
//     loses others' write permission (restrictOthersWrite): another
//     local user must not get to change the caller's files through the
//     run;
//   - in the grants of autorunRoots, an entry autorun.Matches matches
//     that is not the one that existed when the run was planned
//     (existing, by inode; those were read-only) is renamed aside with
//     autorun.QuarantineSuffix, and
//     so is the HEAD of a folder that one of the run's entries named as
//     in gitMarkers left with a git folder's shape (gitDirIn), whatever
//     the folder's name: git no longer takes it for a repository.
//
// It runs when every process of the run is gone, and goes by
// descriptors (walk.NoFollowAt): each entry is checked again by inode and
// acted on relative to its folder's descriptor, never through a symlink,
// as another run sharing the grant may still be changing it.
func Sweep(roots, autorunRoots []string, existing map[string]uint64, before *Snapshot, since time.Time, maxEntries int) (out []Neutralised, truncated bool) {
	since = since.Add(-time.Second)
	n := 0
	for _, root := range roots {
		rootFd, err := openDirNoFollow(root)
		if err != nil {
			continue // gone: nothing to neutralise
		}
		quarantine := contains(autorunRoots, root)
		err = walk.NoFollowAt(root, func(parent int, name, p string, st *unix.Stat_t) walk.Step {
			if n++; n > maxEntries {
				truncated = true
				if !quarantine {
					return walk.Stop
				}
			}
			if nt, ok := restrictOthersWrite(parent, name, p, st, before, since); ok {
				out, truncated = appendNeutralised(out, truncated, nt)
			}
			if p == root {
				return walk.On
			}
			t := st.Mode & unix.S_IFMT
			rel := p[len(root)+1:]
			if ino, ok := existing[p]; ok && ino == uint64(st.Ino) {
				return walk.Skip // the caller's own, read-only during the run
			}
			if old, ok := before.files[p]; (ok && old.ino == uint64(st.Ino)) || time.Unix(st.Ctim.Unix()).Before(since) {
				return walk.On // not the run's; a folder may hold newer entries
			}
			var nt Neutralised
			switch {
			case t == unix.S_IFIFO || t == unix.S_IFSOCK || t == unix.S_IFCHR || t == unix.S_IFBLK:
				nt = Neutralised{Path: p, Kind: specialKind(t), Action: Removed}
			case t == unix.S_IFLNK:
				target, escapes := linkEscapes(rootFd, root, rel, parent, name)
				if !escapes {
					if quarantine && autorun.Matches(rel) {
						nt = Neutralised{Path: p, Kind: "autorun", Target: target}
						break
					}
					if quarantine && isGitMarker(name) {
						out, truncated = unGitDir(parent, p, out, truncated)
					}
					return walk.On
				}
				nt = Neutralised{Path: p, Kind: "symlink", Target: target, Action: Removed}
			case quarantine && autorun.Matches(rel):
				nt = Neutralised{Path: p, Kind: "autorun"}
			default:
				if quarantine && isGitMarker(name) {
					out, truncated = unGitDir(parent, p, out, truncated)
				}
				return walk.On
			}
			if nt.Kind == "autorun" {
				aside, err := renameAside(parent, name, st)
				if err == unix.ENAMETOOLONG && t != unix.S_IFDIR && removeSame(parent, name, st) == nil {
					nt.Action = Removed // no room for the suffix
				} else if err != nil {
					nt.Action = Failed
				} else {
					nt.Action, nt.Target = Quarantined, filepath.Join(filepath.Dir(p), aside)
				}
			} else if removeSame(parent, name, st) != nil {
				nt.Action = Failed
			}
			out, truncated = appendNeutralised(out, truncated, nt)
			return walk.Skip
		})
		unix.Close(rootFd)
		truncated = truncated || err != nil
	}
	return out, truncated
}

// unGitDir renames aside the HEAD of the folder open as parent when the
// run's entry p, one of gitMarkers, is in it and the folder has a git
// folder's shape (gitDirIn), whatever its name; with HEAD gone git no
// longer takes it for a repository. The HEAD may be the caller's: the
// folder is the run's repository all the same. It appends what it did to
// out as Sweep does.
func unGitDir(parent int, p string, out []Neutralised, truncated bool) ([]Neutralised, bool) {
	var head unix.Stat_t
	if !gitDirIn(parent) || unix.Fstatat(parent, "HEAD", &head, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return out, truncated
	}
	nt := Neutralised{Path: filepath.Join(filepath.Dir(p), "HEAD"), Kind: "autorun", Action: Failed}
	if aside, err := renameAside(parent, "HEAD", &head); err == nil {
		nt.Action, nt.Target = Quarantined, filepath.Join(filepath.Dir(p), aside)
	}
	if len(out) >= MaxFiles {
		return out, true
	}
	return append(out, nt), truncated
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func specialKind(t uint32) string {
	switch t {
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	}
	return "device"
}

// openDirNoFollow opens the folder at the absolute path p (O_PATH), with
// no symlink followed on the way (walk.OpenParent).
func openDirNoFollow(p string) (int, error) {
	parent, name, err := walk.OpenParent(p)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	return unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}
