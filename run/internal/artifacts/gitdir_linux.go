package artifacts

import "golang.org/x/sys/unix"

// gitMarkers are the names git's is_git_directory looks for: a folder
// holding HEAD and either commondir or both objects and refs is a
// repository's git folder to git whatever its own name (a bare
// repository, or a worktree's), and git's discovery uses it when the
// caller runs git in it or below, running what its config names
// (core.fsmonitor, core.pager, hooks). autorun.Matches cannot see it: the
// folder's name may be anything.
var gitMarkers = [...]string{"HEAD", "commondir", "objects", "refs"}

// gitDirIn reports whether the folder open as fd has git's shape.
func gitDirIn(fd int) bool {
	has := func(name string) bool {
		var st unix.Stat_t
		return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	}
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// GitDirAt reports whether the folder name in the folder open as parent
// (not followed if a symlink) has git's shape.
func GitDirAt(parent int, name string) bool {
	fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return gitDirIn(fd)
}

// GitDirPath reports whether the folder at the absolute path p has git's
// shape (run's inAutorun: a write grant in such a folder).
func GitDirPath(p string) bool {
	return GitDirAt(unix.AT_FDCWD, p)
}

// isGitMarker reports whether name is one of gitMarkers, whose making
// can turn its folder into a git folder.
func isGitMarker(name string) bool {
	for _, m := range gitMarkers {
		if name == m {
			return true
		}
	}
	return false
}
