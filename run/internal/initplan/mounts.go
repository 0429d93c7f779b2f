//go:build linux && (amd64 || arm64)

package initplan

import (
	"os"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Flags and options of the small tmpfs mounts: the root, the deny-list
// masks, /dev/shm.
const (
	maskFlags   = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	shmOptions  = "size=64m,nr_inodes=1024,mode=1777"
	rootOptions = "size=1m,nr_inodes=4096,mode=0755"
	// oldRoot is where pivot_root puts the host's tree, in the private
	// /tmp (the new root is read-only by then), until enterRoot
	// detaches it.
	oldRoot = "/tmp/.host-root"
)

// mounter emits the mount namespace's layer: the root is built on a
// host folder (root, see rootBase) while the host's tree is still the
// root; base (regBase) holds a descriptor of that folder opened before it
// was covered, through which host paths below it are opened.
type mounter struct {
	*compiler
	root string
	base initproc.Register
}

// setupMounts builds the mount namespace's view of the file system, as
// bubblewrap does: a fresh tmpfs root holding only what the script needs,
// then pivot_root, and the host's tree detached.
//
//   - "/" becomes recursively private first, so nothing mounted here
//     propagates to the host (and nothing from the host appears later);
//   - the new root is a tmpfs mounted on a host folder (rootBase) and
//     built there while the host's tree is still the root, because bind
//     mounts need their sources in this mount namespace;
//   - buildRoot puts in the system folders read-only, the host's /etc
//     by a rule (buildEtc), a minimal /dev, a private /proc (fresh with a PID
//     namespace), and mount points for what follows; no other host folder
//     or file of "/" exists in it, and its cost does not grow with their
//     number;
//   - /tmp becomes a private, writable tmpfs;
//   - the grants, the skill and the work folders are bound in at their own
//     paths from descriptors opened on the host's tree (or attached from
//     the supervisor's trees, see run's handOver);
//   - unless it is kept, the work folder is a folder of the /tmp tmpfs
//     (when it lies in /tmp, the default) or a tmpfs of its own, capped at
//     WorkDirMB (disk fill is then impossible);
//   - the aliases in /tmp are made (buildRoot made the others); the
//     deny-list entries inside grants are masked, the skill folder is made
//     read-only, /dev/shm is a small private tmpfs;
//   - enterRoot switches to the new root and detaches the host's tree, so
//     /proc/self/mountinfo lists the sandbox's mounts only.
//
// Landlock enforces the read/write split too; this layer is what still
// holds where Landlock is missing, and it hides host paths entirely.
//
// Only a refusal of the first mount(2), which changes nothing, leaves the
// layer as absent as on a host without it; every later failure leaves it
// built part-way and refuses the run: a grant, mask or read-only lock that
// did not apply must not go unnoticed behind "mountns missing".
func (c *compiler) setupMounts() {
	m := c.newMounter()
	if pre := c.in.Prefix; pre != nil && pre.root {
		if m.prebuiltFits() {
			m.prebuiltRunParts()
			return
		}
		m.discardPrebuilt()
	}
	m.note("private / (recursive): nothing propagates to or from the host")
	m.mount("make / private", "", "/", "", unix.MS_REC|unix.MS_PRIVATE, "",
		initproc.Unavailable(unix.EPERM, unix.EACCES, unix.ENOSYS))
	m.openBase()
	if m.listing {
		m.notef("tmpfs / %s (the new root, built on %s)", rootOptions, m.root)
	}
	m.mount("root tmpfs on "+m.root, "tmpfs", m.root, "tmpfs", maskFlags, rootOptions)
	system := systemEntries()
	m.buildRoot(system)
	m.mountRunParts()
	m.mountShm()
	m.closeReg(m.base)
	m.enterRoot()
}

// newMounter starts the mount namespace's steps, on the root folder of
// rootBase (or the one a pooled prefix built on, with its descriptor).
func (c *compiler) newMounter() *mounter {
	m := &mounter{compiler: c, root: rootBase(c.cfg), base: regBase}
	if pre := c.in.Prefix; pre != nil && pre.root {
		m.root = pre.rootBase
	}
	return m
}

// openBase opens the root's folder (into m.base): the host's paths below
// it are opened through this descriptor once the root's tmpfs covers them.
func (m *mounter) openBase() {
	m.b.Sys("open "+m.root, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(m.root), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(m.base))
}

// mountShm mounts the root's /dev/shm, private and small: POSIX
// semaphores and shared memory (Python's multiprocessing locks and pools)
// need it. Its pages are memory outside RLIMIT_AS, hence the size cap.
func (m *mounter) mountShm() {
	m.note("tmpfs /dev/shm " + shmOptions)
	m.mount("/dev/shm", "tmpfs", m.root+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, shmOptions)
}

// rootBase is the host folder the new root's tmpfs is first mounted on.
// It must exist; pivot_root moves the tmpfs away from it, and anything it
// hides meanwhile is opened through mounter.base.
func rootBase(cfg *stageconfig.Config) string {
	if st, err := os.Lstat("/tmp"); err == nil && st.IsDir() {
		return "/tmp"
	}
	return cfg.WorkDir
}

// hostOpen opens path, a path of the host's tree, into r with flags:
// below the root's folder through m.base, since the root's tmpfs covers
// it now.
func (m *mounter) hostOpen(desc, path string, flags int, r initproc.Register, opts ...initproc.Opt) {
	dir, p := num(unix.AT_FDCWD), path
	if rel, ok := strings.CutPrefix(path, m.root+"/"); ok {
		dir, p = reg(m.base), rel
	} else if path == m.root {
		dir, p = reg(m.base), "."
	}
	m.b.Sys(desc, unix.SYS_OPENAT, []initproc.Arg{dir, m.ref(p), imm(uint64(flags))}, append([]initproc.Opt{initproc.Into(r)}, opts...)...)
}

// at is path in the new root being built (root+path), as the host sees it.
func (m *mounter) at(path string) string {
	if path == "/" {
		return m.root
	}
	return m.root + path
}

// place binds the host entry e in (recursively with rec) or re-creates
// its symlink; bound collects the bind mounts.
func (m *mounter) place(e hostEntry, rec bool, bound *[]string) {
	dst := m.at(e.path)
	if e.link != "" {
		m.note("symlink", e.path, "->", e.link)
		m.symlink("symlink "+e.path, e.link, dst)
		return
	}
	if m.listing {
		src, op := e.path, "bind"
		if e.target != "" {
			src = e.target
		}
		if rec {
			op = "rbind"
		}
		m.note(op, src, e.path)
	}
	m.placeholder("mount point "+e.path, dst, e.folder)
	fd := m.fd
	if e.target != "" {
		// A link of /etc bound from the file it leads to: opened with
		// no symlink on the way, and still a regular file.
		m.openBeneath("open "+e.target, "/", e.target, fd, unix.O_PATH|unix.O_CLOEXEC)
		m.fstat("fstat "+e.target, fd)
		m.assertType(e.target+" is no longer a regular file", unix.S_IFREG, false)
	} else {
		m.hostOpen("open "+e.path, e.path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, fd)
	}
	flags := uintptr(unix.MS_BIND)
	if rec {
		flags |= unix.MS_REC
	}
	m.mountFD("bind "+e.path, fd, dst, flags)
	m.closeReg(fd)
	*bound = append(*bound, dst)
}

// openBeneath opens path (absolute, as seen from the folder dir, a host
// path) below dir with openat2(2) into r, following no symlink on the way
// and none at the end (a final symlink is opened itself, with O_PATH and
// O_NOFOLLOW in flags): a path checked earlier by name can have been
// swapped since by anyone who may write to one of its folders (a
// concurrent run with a write grant there, the user). What this opens is
// then either the file that was checked, which the caller compares by
// device and inode, or an error, never the target of a symlink put in its
// place. Mounting onto the descriptor then leaves no second lookup to
// redirect.
func (m *mounter) openBeneath(desc, dir, path string, r initproc.Register, flags uint64, opts ...initproc.Opt) int {
	d := m.dir
	m.b.Sys("open "+dir, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(strings.TrimSuffix(dir, "/") + "/"), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(d))
	how := unix.OpenHow{Flags: flags, Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	hd := initproc.Struct(m.b, &how)
	rel := strings.TrimPrefix(path, "/")
	if rel == "" {
		rel = "."
	}
	i := m.b.Sys(desc, unix.SYS_OPENAT2, []initproc.Arg{reg(d), m.ref(rel), initproc.Ref(hd), imm(24)}, append([]initproc.Opt{initproc.Into(r), initproc.RetryAgain()}, opts...)...)
	m.closeReg(d)
	return i
}

// unroot names path under the new root as the script will see it: /tmp/usr
// (root /tmp) as /usr.
func (m *mounter) unroot(path string) string {
	if path == m.root {
		return "/"
	}
	if rest, ok := strings.CutPrefix(path, m.root); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return path
}

// enterRoot makes the root the root with pivot_root(2) and detaches the
// host's tree: nothing of the host stays reachable but what was bound in,
// and /proc/self/mountinfo lists only the sandbox's mounts.
func (m *mounter) enterRoot() {
	m.note("pivot_root to the new root; the host's tree detached")
	m.mkdir("pivot_root: mkdir "+oldRoot, m.at(oldRoot), 0o700, false)
	m.b.Sys("pivot_root", unix.SYS_PIVOT_ROOT, []initproc.Arg{m.ref(m.root), m.ref(m.at(oldRoot))})
	m.b.Sys("chdir /", unix.SYS_CHDIR, []initproc.Arg{m.ref("/")})
	m.b.Sys("detach the host's root", unix.SYS_UMOUNT2, []initproc.Arg{m.ref(oldRoot), imm(unix.MNT_DETACH)})
	m.b.Sys("remove "+oldRoot, unix.SYS_UNLINKAT, []initproc.Arg{num(unix.AT_FDCWD), m.ref(oldRoot), imm(unix.AT_REMOVEDIR)})
}
