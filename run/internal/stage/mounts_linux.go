package stage

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// Flags and options of the small tmpfs mounts: the root (see
// rootOptions), the deny-list masks, /dev/shm.
const (
	maskFlags  = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	shmOptions = "size=64m,nr_inodes=1024,mode=1777"
)

// setupMounts builds the mount namespace's view of the file system, as
// bubblewrap does: a fresh tmpfs root holding only what the script needs,
// then pivot_root, and the host's tree detached.
//
//   - "/" becomes recursively private first, so nothing mounted here
//     propagates to the host (and nothing from the host appears later);
//   - the new root is a tmpfs mounted on a host folder (rootBase) and
//     built there while the host's tree is still the root, because bind
//     mounts need their sources in this mount namespace;
//   - buildRoot puts in the system folders read-only, /etc rebuilt from
//     etcReadable, a minimal /dev, a private /proc (fresh with a PID
//     namespace), and mount points for what follows; no other host folder
//     or file of "/" exists in it, and its cost does not grow with their
//     number;
//   - /tmp becomes a private, writable tmpfs;
//   - the grants, the skill and the work folders are bound in at their own
//     paths from descriptors opened on the host's tree (or attached from
//     the supervisor's trees, see handOver);
//   - unless it is kept, the work folder is a folder of the /tmp tmpfs
//     (when it lies in /tmp, the default) or a tmpfs of its own, capped at
//     WorkDirMB (disk fill is then impossible);
//   - the aliases in /tmp are made (see makeAliases; buildRoot made the
//     others); the deny-list entries inside grants are masked, the skill folder is
//     made read-only, /dev/shm is a small private tmpfs;
//   - enterRoot switches to the new root and detaches the host's tree, so
//     /proc/self/mountinfo lists the sandbox's mounts only.
//
// Landlock enforces the read/write split too; this layer is what still
// holds where Landlock is missing, and it hides host paths entirely.
//
// Only a refusal of the first mount(2) (refusedOutright), which changes
// nothing, leaves the layer as absent as on a host without it; every
// later failure leaves it built part-way and refuses the run (see
// step.builds): a grant, mask or read-only lock that did not apply must
// not go unnoticed behind "mountns missing".
func setupMounts(cfg *config) error {
	if pb := cfg.pre; pb != nil {
		if done, err := setupPrebuilt(cfg, pb); done {
			return err
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return refusedOutright(fmt.Errorf("make / private: %w", err))
	}
	h, err := openHostView(cfg)
	if err != nil {
		return err
	}
	defer h.close()
	root := rootBase(cfg)
	if err := unix.Mount("tmpfs", root, "tmpfs", maskFlags, rootOptions); err != nil {
		return fmt.Errorf("root tmpfs on %s: %w", root, err)
	}
	errs := []error{buildRoot(cfg, h, root)}
	if err := mountRunParts(cfg, h, root); err != nil {
		errs = append(errs, err)
		if errors.Is(err, errNoTmp) {
			return errors.Join(errs...)
		}
	}
	errs = append(errs, mountShm(root))
	return errors.Join(append(errs, enterRoot(root))...)
}

// mountShm mounts the root's /dev/shm, private and small: POSIX
// semaphores and shared memory (Python's multiprocessing locks and pools)
// need it. Its pages are memory outside RLIMIT_AS, hence the size cap.
func mountShm(root string) error {
	if err := unix.Mount("tmpfs", root+"/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, shmOptions); err != nil {
		return fmt.Errorf("/dev/shm: %w", err)
	}
	return nil
}

// errNoTmp marks mountRunParts' failure to mount the private /tmp, which
// enterRoot needs: without it the host's tree would stay reachable.
var errNoTmp = errors.New("no private /tmp")

// mountRunParts mounts what is the run's in the new root on root: the
// private /tmp, the grants, the skill and the work folders, the masks of
// the deny-list entries inside grants, and makes the skill folder
// read-only. An error wrapping errNoTmp means nothing after /tmp was
// tried.
func mountRunParts(cfg *config, h *hostView, root string) error {
	var errs []error
	// A private /tmp: programs that write /tmp by name, ignoring TMPDIR
	// (LibreOffice, many scripts), work. When the work folder lies in
	// /tmp (the default) it is a folder of this same tmpfs, so both count
	// against one cap of WorkDirMB.
	shared := cfg.WorkDirMB > 0 && Under(cfg.WorkDir, []string{"/tmp"})
	tmpMB := cfg.WorkDirMB
	if tmpMB == 0 {
		tmpMB = stageconfig.DefaultWorkDirMB
	}
	if err := unix.Mount("tmpfs", root+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(tmpMB, "1777")); err != nil {
		return fmt.Errorf("%w: /tmp tmpfs: %w", errNoTmp, err)
	}
	errs = append(errs, bindGrants(cfg, root, h.grants))
	if cfg.SkillTree != 0 {
		errs = append(errs, attachSkill(cfg, root))
	} else {
		errs = append(errs, unroot(root, rebind(h.skill, root+cfg.Skill)))
	}
	switch {
	case shared:
		if err := os.MkdirAll(root+cfg.WorkDir, 0o700); err != nil {
			errs = append(errs, fmt.Errorf("work folder: %w", unroot(root, err)))
		}
	case cfg.WorkDirMB > 0:
		// A size-capped work folder: a full disk is not the script's to
		// cause. Its mount point was made with the root (see
		// outsideMountPoints).
		if err := unix.Mount("tmpfs", root+cfg.WorkDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(cfg.WorkDirMB, "0700")); err != nil {
			errs = append(errs, fmt.Errorf("work folder tmpfs: %w", err))
		}
	default:
		// A kept work folder, on the host's disk: as the tmpfs would
		// be, nosuid, nodev and noexec, so that a program the script
		// writes there cannot run where Landlock is missing.
		errs = append(errs, unroot(root, rebind(h.work, root+cfg.WorkDir)))
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}
		if unix.MountSetattr(unix.AT_FDCWD, root+cfg.WorkDir, unix.AT_RECURSIVE, &attr) != nil {
			errs = append(errs, unroot(root, remount(root+cfg.WorkDir, unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC)))
		}
	}
	errs = append(errs, makeAliases(cfg, root, "/tmp", nil))
	errs = append(errs, maskDenied(cfg, root, h.devices["/dev/null"]))
	if err := remountReadOnly(root + cfg.Skill); err != nil {
		errs = append(errs, fmt.Errorf("skill folder %s read-only: %w", cfg.Skill, unroot(root, err)))
	}
	return errors.Join(errs...)
}

// tmpfsOptions are those of a size-capped tmpfs of sizeMB MiB (with 64
// inodes per MiB, at least 1024) and the given octal mode.
func tmpfsOptions(sizeMB int, mode string) string {
	return fmt.Sprintf("size=%dm,nr_inodes=%d,mode=%s", sizeMB, max(sizeMB*64, 1024), mode)
}

// Under reports whether path is one of dirs or below one.
func Under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// rebind bind-mounts the folder open on fd onto path, creating path (in
// the private /tmp) first when it is missing. Errors are *os.PathError,
// for unroot.
func rebind(fd int, path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	if err := unix.Mount(fdPath(fd), path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return &os.PathError{Op: "rebind", Path: path, Err: err}
	}
	return nil
}

// unroot returns err with the paths under root (the new root being built,
// see rootBase) named as the script will see them, root+"/usr" as "/usr":
// the path of an *os.PathError (what os and this package's mount steps
// return), the new name of an *os.LinkError, and so in each error that
// errors.Join joined. Without it the messages named the host's temporary
// mount point ("remount /tmp/tmp/..."). An error already wrapped in a
// message is left as it is: call it before wrapping.
func unroot(root string, err error) error {
	under := func(path string) string {
		if path == root {
			return "/"
		}
		if rest, ok := strings.CutPrefix(path, root); ok && strings.HasPrefix(rest, "/") {
			return rest
		}
		return path
	}
	switch e := err.(type) {
	case *os.PathError:
		return &os.PathError{Op: e.Op, Path: under(e.Path), Err: e.Err}
	case *os.LinkError:
		return &os.LinkError{Op: e.Op, Old: e.Old, New: under(e.New), Err: e.Err}
	case interface{ Unwrap() []error }:
		parts := e.Unwrap()
		msgs := make([]string, len(parts))
		for i, p := range parts {
			msgs[i] = p.Error()
		}
		if strings.Join(msgs, "\n") != err.Error() {
			return err // fmt.Errorf's with several %w, not errors.Join's
		}
		out := make([]error, len(parts))
		for i, p := range parts {
			out[i] = unroot(root, p)
		}
		return errors.Join(out...)
	}
	return err
}

// remountReadOnly makes the mount at path read-only. Inside a user
// namespace the flags inherited from the host's mount are locked, so they
// are carried over.
func remountReadOnly(path string) error { return remount(path, unix.MS_RDONLY) }

// remount adds the mount flags set to the mount at path (before Linux
// 5.12, where mount_setattr(2) is missing), carrying over the locked ones
// as remountReadOnly does.
func remount(path string, set uintptr) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	flags := unix.MS_BIND | unix.MS_REMOUNT | set
	for _, f := range []struct{ st, ms int64 }{
		{unix.ST_RDONLY, unix.MS_RDONLY},
		{unix.ST_NOSUID, unix.MS_NOSUID},
		{unix.ST_NODEV, unix.MS_NODEV},
		{unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME},
		{unix.ST_NODIRATIME, unix.MS_NODIRATIME},
		{unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if int64(st.Flags)&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", path, "", flags, ""); err != nil {
		return &os.PathError{Op: fmt.Sprintf("remount (flags %#x)", set), Path: path, Err: err}
	}
	return nil
}
