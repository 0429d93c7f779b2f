package artifacts

import (
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

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
		if !under(t, root) {
			return target, true
		}
		start = t[len(root)+1:]
	} else if lex := filepath.Join(root, filepath.Dir(rel), target); lex != root && !under(lex, root) {
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

// under reports whether p lies strictly inside dir.
func under(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
