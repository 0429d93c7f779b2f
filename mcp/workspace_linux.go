package mcp

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"golang.org/x/sys/unix"
)

// beneath is how every path of a workspace call is resolved: below the
// workspace folder only (no "..", no absolute path, no magic link out)
// and through no symbolic link at all, including the last name. A script
// of a run may plant links in the workspace at any time; the kernel
// resolves the path and refuses them in one step, so a link swapped in
// after a check cannot redirect the open.
const beneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel below the folder dirfd with openat2(2) and the
// resolution of beneath, mapping its errors to the refusals of a
// workspace call, which name the path shown.
func openBeneath(dirfd int, rel, shown string, flags int, mode uint32) (int, error) {
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: beneath}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	for tries := 0; ; tries++ {
		fd, err := unix.Openat2(dirfd, rel, &how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN) && tries < 16:
			// EAGAIN: a rename raced the resolution; try again.
			continue
		}
		return -1, beneathError(shown, err)
	}
}

// beneathError words an error of openat2 for the agent and the record.
func beneathError(rel string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		return &fileError{kind: audit.KindUnsafePath, refused: true,
			err: fmt.Errorf("%s goes through a symbolic link: workspace files are reached without following any", rel)}
	case errors.Is(err, unix.EXDEV):
		return &fileError{kind: audit.KindUnsafePath, refused: true, err: fmt.Errorf("%s leaves the workspace", rel)}
	case errors.Is(err, unix.ENXIO):
		return &fileError{kind: audit.KindUnsafePath, refused: true, err: fmt.Errorf("%s is a socket, not a regular file", rel)}
	case errors.Is(err, unix.ENOTDIR):
		return &fileError{kind: audit.KindUnsafePath, refused: true, err: fmt.Errorf("%s: a name on the way is not a folder", rel)}
	case errors.Is(err, unix.ENOSYS):
		return &fileError{kind: audit.KindInternal,
			err: fmt.Errorf("%s: this kernel has no openat2(2), which workspace files need (Linux 5.6 or later)", rel)}
	}
	return &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, err)}
}

// checkRegular refuses what fstat says is not a regular file.
func checkRegular(rel string, st *unix.Stat_t) error {
	kind := ""
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFDIR:
		kind = "a folder"
	case unix.S_IFIFO:
		kind = "a FIFO"
	case unix.S_IFCHR, unix.S_IFBLK:
		kind = "a device"
	case unix.S_IFSOCK:
		kind = "a socket"
	case unix.S_IFLNK:
		kind = "a symbolic link"
	default:
		kind = "not a regular file"
	}
	return &fileError{kind: audit.KindUnsafePath, refused: true, err: fmt.Errorf("%s is %s, not a regular file", rel, kind)}
}

// openWorkspace opens the workspace folder itself, the root of every
// resolution.
func openWorkspace(ws string) (int, error) {
	fd, err := unix.Open(ws, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fileError{kind: audit.KindInternal, err: fmt.Errorf("workspace %s: %w", ws, err)}
	}
	return fd, nil
}

// readBeneath reads at most max bytes at offset of the regular file rel
// of the workspace ws, and returns them with the file's size. The file is
// opened without blocking (O_NONBLOCK: a FIFO is not waited on) and
// checked with fstat before anything is read.
func readBeneath(ws, rel string, offset int64, max int) ([]byte, int64, error) {
	root, err := openWorkspace(ws)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(root)
	fd, err := openBeneath(root, rel, rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, err)}
	}
	if err := checkRegular(rel, &st); err != nil {
		return nil, 0, err
	}
	if offset >= st.Size {
		return []byte{}, st.Size, nil
	}
	buf := make([]byte, min(int64(max), st.Size-offset))
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], offset+int64(n))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, st.Size, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, err)}
		}
		if m == 0 {
			break // the file shrank meanwhile
		}
		n += m
	}
	return buf[:n], st.Size, nil
}

// writeBeneath writes data as the file rel of the workspace ws, creating
// the folders on the way that are missing, and reports whether the file
// is new. The data goes to a new file beside it, which is then renamed
// over the name: the write never goes through an inode that was there (a
// hard link to another file, a FIFO put there meanwhile), a reader never
// sees half a file, and the file belongs to the server's user, the
// caller. An existing regular file keeps its permission bits (set-id
// bits dropped); a new one is 0644. Anything else at the name (a link, a
// folder, a FIFO) is refused.
func writeBeneath(ws, rel string, data []byte) (created bool, err error) {
	root, err := openWorkspace(ws)
	if err != nil {
		return false, err
	}
	defer unix.Close(root)
	dir, name := path.Split(rel)
	parent, err := mkdirBeneath(root, strings.TrimSuffix(dir, "/"))
	if err != nil {
		return false, err
	}
	defer unix.Close(parent)
	perm := uint32(0o644)
	var st unix.Stat_t
	switch err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if err := checkRegular(rel, &st); err != nil {
			return false, err
		}
		perm = st.Mode & 0o777
	case errors.Is(err, unix.ENOENT):
		created = true
	default:
		return false, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, err)}
	}
	var rnd [8]byte
	if err := random.Read(rnd[:]); err != nil {
		return false, &fileError{kind: audit.KindInternal, err: err}
	}
	tmp := fmt.Sprintf(".%s.skill-sandbox-%x.tmp", truncName(name), rnd)
	fd, err := unix.Openat(parent, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: creating the new file: %w", rel, err)}
	}
	done := false
	defer func() {
		if !done {
			unix.Unlinkat(parent, tmp, 0)
		}
	}()
	werr := writeAll(fd, data)
	if werr == nil {
		werr = unix.Fchmod(fd, perm)
	}
	if cerr := unix.Close(fd); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return false, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, werr)}
	}
	if err := unix.Renameat(parent, tmp, parent, name); err != nil {
		return false, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", rel, err)}
	}
	done = true
	return created, nil
}

// truncName keeps a temporary name within the 255 bytes of a file name.
func truncName(name string) string {
	if len(name) > 200 {
		return name[:200]
	}
	return name
}

func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// mkdirBeneath opens the folder dir (slash-separated, "" for the root)
// below root, creating the missing ones one name at a time, each opened
// beneath root without following a link.
func mkdirBeneath(root int, dir string) (int, error) {
	cur, err := unix.Dup(root)
	if err != nil {
		return -1, &fileError{kind: audit.KindInternal, err: err}
	}
	if dir == "" {
		return cur, nil
	}
	done := ""
	for _, name := range strings.Split(dir, "/") {
		done = path.Join(done, name)
		next, err := openBeneath(cur, name, done, unix.O_PATH|unix.O_DIRECTORY, 0)
		if errors.Is(err, unix.ENOENT) {
			if merr := unix.Mkdirat(cur, name, 0o755); merr != nil && !errors.Is(merr, unix.EEXIST) {
				unix.Close(cur)
				return -1, &fileError{kind: audit.KindIO, err: fmt.Errorf("%s: %w", done, merr)}
			}
			next, err = openBeneath(cur, name, done, unix.O_PATH|unix.O_DIRECTORY, 0)
		}
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// gitDirMade returns the folder on the way to rel (the workspace itself,
// "." included) that would be a git folder once rel is written, whatever
// its name: one holding HEAD and either commondir or both objects and
// refs, git's own test (is_git_directory). Git's discovery takes such a
// folder for a bare repository when the caller runs git in it or below,
// and runs what its config names (core.fsmonitor, core.pager, hooks).
// Every entry counts, of any type; a folder still to be created holds one
// name only, so the walk stops at the first missing one. Errors leave the
// refusal to the write itself.
func gitDirMade(ws, rel string) string {
	cur, err := openWorkspace(ws)
	if err != nil {
		return ""
	}
	defer func() { unix.Close(cur) }()
	parts := strings.Split(rel, "/")
	for i, next := range parts {
		has := func(name string) bool {
			var st unix.Stat_t
			return name == next || unix.Fstatat(cur, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
		}
		if has("HEAD") && (has("commondir") || has("objects") && has("refs")) {
			return path.Join(append([]string{"."}, parts[:i]...)...)
		}
		if i == len(parts)-1 {
			break
		}
		fd, err := openBeneath(cur, next, next, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			break
		}
		unix.Close(cur)
		cur = fd
	}
	return ""
}
