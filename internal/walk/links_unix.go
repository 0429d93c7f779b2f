//go:build linux || darwin

package walk

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ResolveUnplanted resolves the absolute path p as the kernel does, one
// name at a time, and returns the real path with the lstat(2) data of
// what it names, or, in link, the first symlink met on the way whose
// owner planted reports as the sandbox identity's (run passes the sandbox
// identity of a root caller and the runs' own ids). Such a symlink
// was made by a sandboxed script (or by nobody's processes): one that a
// run with a write grant left in its folder (out/charts ->
// /root/.config/autostart) turned a later grant the caller named below it
// into a grant of the link's target, which the supervisor, as root,
// created folders in and handed over as an id-mapped tree, 0600 files of
// root's included. Each symlink's target is resolved in turn (to check
// the symlinks met there too), at most 40 of them. A name missing on the
// way (a write folder not created yet) ends the walk with info nil. The
// caller grants the real path with the identity in info: a folder on it
// swapped for a symlink afterwards is then caught by the check of device
// and inode (stageconfig.SameGrant), where resolving the path a second time would
// follow it.
func ResolveUnplanted(p string, planted func(owner uint32) bool) (real string, info fs.FileInfo, link string) {
	todo := strings.Split(p, "/")
	cur := "/"
	info, err := os.Lstat(cur)
	if err != nil {
		return "", nil, ""
	}
	for hops := 0; len(todo) > 0; {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			if info, err = os.Lstat(cur); err != nil {
				return "", nil, ""
			}
			continue
		}
		next := filepath.Join(cur, name)
		if info, err = os.Lstat(next); err != nil {
			return "", nil, ""
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && planted(st.Uid) {
			return "", nil, next
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > 40 {
			return "", nil, ""
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, info, ""
}
