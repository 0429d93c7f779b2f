package stage

import (
	"errors"
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/reaper"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// prebuilt is the part of a pooled stage's new root that no run changes,
// built while the stage waits for its run (see prebuildRoot): mounting it
// is most of the mount layer's cost, and this way it is off the run's
// path.
type prebuilt struct {
	root  string    // where the root tmpfs is mounted (the host's /tmp)
	paths hostPaths // opens the host's paths under root, which it covers
	h     *hostView // the system folders, /etc entries and devices

	pidns        bool // /proc is the PID namespace's own
	allowNetwork bool // /etc holds etcNetwork

	fdLo, fdHi int // the range of paths.fd and the system view's descriptors (see raise)

	mounted bool  // the root tmpfs is mounted on root
	err     error // the build failed: the stage builds its root afresh
	inUse   bool  // the build became the run's root, without an error

	rules *llPrebuilt // nil when none could be made

	// filter is the seccomp filter of policy, assembled ahead: the
	// policy a run of the pool has when every namespace took effect.
	filter []unix.SockFilter
	policy seccomp.Policy
}

// prebuildRoot builds, in a pooled stage, what the layers set up the same
// way for every run of the pool (env is the value of
// stageconfig.PrebuildEnv). With a network namespace its loopback is
// brought up (setupNetNS finds it up). With a mount namespace, the root:
// "/" made private, the root tmpfs on /tmp with the system folders, /etc
// and /dev bound in read-only and nosuid, a fresh /proc and /dev/shm; the
// root tmpfs itself stays writable until the run's mount points are made
// in it (setupPrebuilt). Then the Landlock ruleset with the rules on all
// of these (prebuildRules), and the seccomp filter a run with every
// namespace will have (installSeccomp). It returns nil when there is no root to build
// ahead: a stage started for its run, a shape without a mount namespace,
// or no /tmp folder to build on.
func prebuildRoot(env string) *prebuilt {
	shape, ok := stageconfig.ParsePrebuild(env)
	if !ok {
		return nil
	}
	if shape.NetNS {
		loopbackUp()
	}
	const base = "/tmp" // rootBase's first choice
	if !shape.Root {
		return nil
	}
	if st, err := os.Lstat(base); err != nil || !st.IsDir() {
		return nil
	}
	pb := &prebuilt{root: base, paths: hostPaths{fd: -1}, pidns: reaper.IsNamespaceInit(), allowNetwork: shape.Network}
	pb.policy = seccomp.Policy{HostNet: !shape.NetNS && !shape.Network, SharedNet: !shape.NetNS, NoPID: !pb.pidns}
	if f, err := seccomp.Filter(pb.policy); err == nil {
		pb.filter = f
	}
	if pb.err = pb.build(); pb.err == nil && pb.pidns {
		// (Without a PID namespace the rules on /proc would be on
		// this process's own folder, which is not made ahead.)
		pb.rules = prebuildRules(pb.root, shape)
	}
	return pb
}

// build does prebuildRoot's work.
func (pb *prebuilt) build() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	fd, err := unix.Open(pb.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", pb.root, err)
	}
	pb.paths = hostPaths{base: pb.root, fd: fd}
	pb.h = openSystemView(pb.allowNetwork)
	if err := pb.raise(); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", pb.root, "tmpfs", maskFlags, rootOptions); err != nil {
		return fmt.Errorf("root tmpfs on %s: %w", pb.root, err)
	}
	pb.mounted = true
	b := &rootBuilder{root: pb.root}
	b.folders()
	b.system(pb.h)
	b.etcAndDev(pb.h, pb.allowNetwork)
	if len(b.errs) > 0 {
		return errors.Join(b.errs...)
	}
	// Everything read-only and nosuid, then the root tmpfs alone
	// writable again for the run's mount points. Without mount_setattr
	// (before Linux 5.12) the root is built afresh for the run instead.
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, pb.root, unix.AT_RECURSIVE, &attr); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", pb.root, err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, pb.root, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("mount_setattr %s: %w", pb.root, err)
	}
	if err := mountProc(pb.root, pb.pidns); err != nil {
		return err
	}
	return mountShm(pb.root)
}

// firstFreeFD is above the descriptors a run hands a pooled stage
// (receivePooled puts them from stageconfig.FirstTreeFD on): what the
// stage opens before is moved there.
const firstFreeFD = stageconfig.FirstTreeFD + stageconfig.MaxPassedFDs

// raiseFD moves fd to firstFreeFD or above and returns the new number;
// on an error fd stays where it is.
func raiseFD(fd int) (int, error) {
	hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, firstFreeFD)
	if err != nil {
		return fd, fmt.Errorf("moving descriptor %d: %w", fd, err)
	}
	unix.Close(fd)
	return hi, nil
}

// raise moves the descriptor of the host folder the root covers and
// those of the system view with raiseFD, one after the other: they then
// lie in one range, fdLo to fdHi, which close closes with one call.
func (pb *prebuilt) raise() error {
	var errs []error
	move := func(fd *int) {
		hi, err := raiseFD(*fd)
		*fd = hi
		errs = append(errs, err)
		if pb.fdLo == 0 {
			pb.fdLo = hi
		}
		pb.fdHi = hi
	}
	move(&pb.paths.fd)
	for _, es := range [][]hostEntry{pb.h.system, pb.h.etc} {
		for i := range es {
			if es[i].link == "" {
				move(&es[i].fd)
			}
		}
	}
	for dev, fd := range pb.h.devices {
		move(&fd)
		pb.h.devices[dev] = fd
	}
	return errors.Join(errs...)
}

// discard undoes the build: the root tmpfs (and everything mounted in it)
// is detached, which uncovers the host's /tmp, and the descriptors are
// closed. The mount namespace is then as the stage found it, but private.
func (pb *prebuilt) discard() {
	if pb.mounted {
		unix.Unmount(pb.root, unix.MNT_DETACH)
		pb.mounted = false
	}
	pb.close()
}

// close closes the descriptors of the build (not the mounts, nor the
// ruleset): the run's part of the view one by one, the rest in one range
// when raise moved it there.
func (pb *prebuilt) close() {
	if pb.h == nil {
		return
	}
	if pb.err == nil && pb.fdLo >= firstFreeFD && unix.CloseRange(uint(pb.fdLo), uint(pb.fdHi), 0) == nil {
		pb.h.closeRunView()
	} else {
		pb.h.close()
		unix.Close(pb.paths.fd)
	}
	pb.h, pb.paths.fd = nil, -1
}

// fits reports whether the build is the one setupMounts would make for
// cfg, so far as it goes.
func (pb *prebuilt) fits(cfg *config) bool {
	return pb.err == nil && stageconfig.Has(cfg.Namespaces, stageconfig.LayerMountNS) &&
		stageconfig.Has(cfg.Namespaces, stageconfig.LayerPIDNS) == pb.pidns &&
		cfg.AllowNetwork == pb.allowNetwork
}

// setupPrebuilt is setupMounts on a prebuilt root: it opens the run's
// host paths, makes the run's mount points in the root tmpfs and then
// makes it read-only, mounts the run's parts (mountRunParts) and enters
// the root. done is false when the build does not fit the run (or a
// mount point would lie in what the build put in /etc or /dev): the build
// is then discarded, and setupMounts builds the root afresh.
func setupPrebuilt(cfg *config, pb *prebuilt) (done bool, err error) {
	if !pb.fits(cfg) {
		pb.discard()
		return false, nil
	}
	h := pb.h
	if err := h.openRunView(cfg, pb.paths); err != nil {
		// As setupMounts leaves it: nothing mounted.
		pb.discard()
		return true, err
	}
	mps := outsideMountPoints(cfg, h)
	for _, mt := range mps {
		if Under(mt.path, []string{"/etc", "/dev"}) {
			// buildRoot makes these before the /etc entries; here
			// they would be made through them.
			pb.discard()
			return false, nil
		}
	}
	defer pb.close()
	var errs []error
	for _, mt := range mps {
		if err := mkMountPoint(pb.root+mt.path, mt.folder); err != nil {
			errs = append(errs, unroot(pb.root, err))
		}
	}
	// As buildRoot: those in /tmp come with its tmpfs (mountRunParts).
	if err := makeAliases(cfg, pb.root, "/", []string{"/tmp"}); err != nil {
		errs = append(errs, err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, pb.root, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		errs = append(errs, fmt.Errorf("mount_setattr %s: %w", pb.root, err))
	}
	if err := mountRunParts(cfg, h, pb.root); err != nil {
		errs = append(errs, err)
		if errors.Is(err, errNoTmp) {
			return true, errors.Join(errs...)
		}
	}
	err = errors.Join(append(errs, enterRoot(pb.root))...)
	pb.inUse = err == nil
	return true, err
}

// used reports whether the build became the run's root (false for a nil
// build: the stage was not pooled).
func (pb *prebuilt) used() bool { return pb != nil && pb.inUse }
