package run

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/autorun"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"golang.org/x/sys/unix"
)

// sweepGrants neutralises what a run left in its write grants roots that
// could lead the caller's tools out of the grant, block them, or run
// code on the caller's side, and lists each in the returned Neutralised
// (bounded by MaxArtifacts; truncated is set past it, or past
// maxEntries entries walked, maxSnapshotEntries for a run). A grant of
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
// descriptors (walkNoFollowAt): each entry is checked again by inode and
// acted on relative to its folder's descriptor, never through a symlink,
// as another run sharing the grant may still be changing it.
func sweepGrants(roots, autorunRoots []string, existing map[string]uint64, before *snapshot, since time.Time, maxEntries int) (out []Neutralised, truncated bool) {
	since = since.Add(-time.Second)
	n := 0
	for _, root := range roots {
		rootFd, err := openDirNoFollow(root)
		if err != nil {
			continue // gone: nothing to neutralise
		}
		quarantine := contains(autorunRoots, root)
		err = walkNoFollowAt(root, func(parent int, name, p string, st *unix.Stat_t) walkStep {
			if n++; n > maxEntries {
				truncated = true
				if !quarantine {
					return walkStop
				}
			}
			if nt, ok := restrictOthersWrite(parent, name, p, st, before, since); ok {
				out, truncated = appendNeutralised(out, truncated, nt)
			}
			if p == root {
				return walkOn
			}
			t := st.Mode & unix.S_IFMT
			rel := p[len(root)+1:]
			if ino, ok := existing[p]; ok && ino == uint64(st.Ino) {
				return walkSkip // the caller's own, read-only during the run
			}
			if old, ok := before.files[p]; (ok && old.ino == uint64(st.Ino)) || time.Unix(st.Ctim.Unix()).Before(since) {
				return walkOn // not the run's; a folder may hold newer entries
			}
			var nt Neutralised
			switch {
			case t == unix.S_IFIFO || t == unix.S_IFSOCK || t == unix.S_IFCHR || t == unix.S_IFBLK:
				nt = Neutralised{Path: p, Kind: specialKind(t), Action: NeutralisedRemoved}
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
					return walkOn
				}
				nt = Neutralised{Path: p, Kind: "symlink", Target: target, Action: NeutralisedRemoved}
			case quarantine && autorun.Matches(rel):
				nt = Neutralised{Path: p, Kind: "autorun"}
			default:
				if quarantine && isGitMarker(name) {
					out, truncated = unGitDir(parent, p, out, truncated)
				}
				return walkOn
			}
			if nt.Kind == "autorun" {
				aside, err := renameAside(parent, name, st)
				if err == unix.ENAMETOOLONG && t != unix.S_IFDIR && removeSame(parent, name, st) == nil {
					nt.Action = NeutralisedRemoved // no room for the suffix
				} else if err != nil {
					nt.Action = NeutralisedFailed
				} else {
					nt.Action, nt.Target = NeutralisedQuarantined, filepath.Join(filepath.Dir(p), aside)
				}
			} else if removeSame(parent, name, st) != nil {
				nt.Action = NeutralisedFailed
			}
			out, truncated = appendNeutralised(out, truncated, nt)
			return walkSkip
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
// out as sweepGrants does.
func unGitDir(parent int, p string, out []Neutralised, truncated bool) ([]Neutralised, bool) {
	var head unix.Stat_t
	if !gitDirIn(parent) || unix.Fstatat(parent, "HEAD", &head, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return out, truncated
	}
	nt := Neutralised{Path: filepath.Join(filepath.Dir(p), "HEAD"), Kind: "autorun", Action: NeutralisedFailed}
	if aside, err := renameAside(parent, "HEAD", &head); err == nil {
		nt.Action, nt.Target = NeutralisedQuarantined, filepath.Join(filepath.Dir(p), aside)
	}
	if len(out) >= MaxArtifacts {
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
// no symlink followed on the way (openParentNoFollow).
func openDirNoFollow(p string) (int, error) {
	parent, name, err := openParentNoFollow(p)
	if err != nil {
		return -1, err
	}
	defer unix.Close(parent)
	return unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// linkEscapes reads the symlink name in the folder parent (rel from the
// grant root, open as rootFd) and reports its target and whether it
// leads out of root: lexically (an absolute target elsewhere, a relative
// one climbing above root, also when dangling), or as the kernel resolves
// it beneath root (openat2 RESOLVE_BENEATH fails with EXDEV where a
// symlink on the way, or a ".." after one, leaves it). A target that is
// missing beneath root, or a loop, leads nowhere outside.
func linkEscapes(rootFd int, root, rel string, parent int, name string) (string, bool) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(parent, name, buf)
	if err != nil {
		return "", true
	}
	target := string(buf[:n])
	start := rel
	if filepath.IsAbs(target) {
		t := filepath.Clean(target)
		if t == root {
			return target, false
		}
		if !pathUnder(t, root) {
			return target, true
		}
		start = t[len(root)+1:]
	} else if lex := filepath.Join(root, filepath.Dir(rel), target); lex != root && !pathUnder(lex, root) {
		return target, true
	}
	fd, err := unix.Openat2(rootFd, start, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
	switch err {
	case nil:
		unix.Close(fd)
		return target, false
	case unix.ENOENT, unix.ENOTDIR, unix.ELOOP:
		return target, false
	case unix.ENOSYS:
		// Before Linux 5.6: lexically inside, but a ".." after another
		// symlink could still leave; keep only targets without "..".
		return target, strings.Contains("/"+target+"/", "/../")
	}
	return target, true
}

// removeSame removes the entry name of the folder parent if it is still
// the inode st describes (not a folder).
func removeSame(parent int, name string, st *unix.Stat_t) error {
	var now unix.Stat_t
	if err := unix.Fstatat(parent, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev || now.Mode&unix.S_IFMT == unix.S_IFDIR {
		return unix.ESTALE
	}
	return unix.Unlinkat(parent, name, 0)
}

// renameAside renames the entry name of the folder parent, still the
// inode st describes, to name+autorun.QuarantineSuffix (then ".1", ".2",
// ...), replacing nothing, and returns the new name. When the script took all
// those names beforehand, a random part goes before the suffix: a name
// it cannot have made.
func renameAside(parent int, name string, st *unix.Stat_t) (string, error) {
	var now unix.Stat_t
	if err := unix.Fstatat(parent, name, &now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return "", err
	}
	if now.Ino != st.Ino || now.Dev != st.Dev {
		return "", unix.ESTALE
	}
	var err error
	for i := 0; i < 100; i++ {
		aside := name + autorun.QuarantineSuffix
		if i > 0 {
			aside += "." + strconv.Itoa(i)
		}
		if err = unix.Renameat2(parent, name, parent, aside, unix.RENAME_NOREPLACE); err != unix.EEXIST {
			return aside, err
		}
	}
	for i := 0; i < 4 && err == unix.EEXIST; i++ {
		var rnd [8]byte
		if rerr := random.Read(rnd[:]); rerr != nil {
			return "", rerr
		}
		aside := fmt.Sprintf("%s.%x%s", name, rnd, autorun.QuarantineSuffix)
		if err = unix.Renameat2(parent, name, parent, aside, unix.RENAME_NOREPLACE); err == nil {
			return aside, nil
		}
	}
	return "", err
}
