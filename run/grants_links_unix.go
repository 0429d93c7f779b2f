//go:build linux || darwin

package run

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// plantedLink returns the first symlink met while resolving the absolute
// path p that belongs to uid, the sandbox identity of a root caller, or
// "" when there is none. Such a symlink was made by a sandboxed script (or
// by nobody's processes): one that a run with a write grant left in its
// folder (out/charts -> /root/.config/autostart) turned a later grant the
// caller named below it into a grant of the link's target, which the
// supervisor, as root, created folders in and handed over as an id-mapped
// tree, 0600 files of root's included. The walk resolves as the kernel
// does, one name at a time, following each symlink's target (to check
// the symlinks met there too), at most 40 of them; it stops at the first
// missing name, below which nothing exists to be a symlink.
func plantedLink(p string, uid int) string {
	todo := strings.Split(p, "/")
	cur := "/"
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		info, err := os.Lstat(next)
		if err != nil {
			return ""
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			return next
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > 40 {
			return ""
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return ""
}
