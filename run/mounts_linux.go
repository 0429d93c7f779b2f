package run

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// keptTopDirs are the top-level folders maskTopDirs leaves alone: programs
// and libraries as on the host, /etc (rebuilt from a short list, see
// setupEtc), the private /proc, /dev (rebuilt, see setupDev) and /tmp (a
// private tmpfs, see setupMounts). Every other folder
// of "/" (/home, /root, /tmp, /run, /var, /srv, /mnt, /opt, /sys, ...) is
// masked: besides files, it could hold unix sockets, and connect(2) to a
// pathname socket is not something Landlock (ABI <= 7) can deny.
func keptTopDirs() []string {
	return []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "proc", "dev", "tmp"}
}

// maskOptions are those of the empty tmpfs put over masked folders.
const (
	maskFlags   = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	maskOptions = "size=64k,nr_inodes=1024,mode=0755"
	shmOptions  = "size=64m,nr_inodes=1024,mode=1777"
)

// setupMounts builds the mount namespace's view of the file system:
//
//   - "/" becomes recursively private, so nothing mounted here propagates
//     to the host (and nothing from the host appears later);
//   - with a PID namespace, a fresh proc is mounted on /proc (nosuid,
//     nodev, noexec) that shows only the run's processes;
//   - every top-level folder but those of keptTopDirs is masked by an
//     empty tmpfs, files in "/" by /dev/null, /etc is rebuilt from
//     etcReadable, and /dev with a few harmless devices;
//   - /tmp becomes a private, writable tmpfs;
//   - the skill and work folders are bind-mounted back into the masks from
//     descriptors opened before masking;
//   - unless it is kept, the work folder is a folder of the /tmp tmpfs
//     (when it lies in /tmp, the default) or a tmpfs of its own, capped at
//     WorkDirMB (disk fill is then impossible);
//   - the skill folder and the masks are made read-only.
//
// Landlock enforces the read/write split too; this layer is what still
// holds where Landlock is missing, and it hides host paths entirely.
func setupMounts(cfg *initConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %v", err)
	}
	// Handles on what the script needs, taken before masking.
	keep := map[string]int{}
	for _, dir := range []string{cfg.Skill, cfg.WorkDir} {
		if dir == cfg.Skill && cfg.SkillTree != 0 {
			continue // handed over by the supervisor, see attachSkill
		}
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open %s: %v", dir, err)
		}
		defer unix.Close(fd)
		keep[dir] = fd
	}
	devices := map[string]int{}
	for _, dev := range llDevices() {
		if fd, err := unix.Open(dev, unix.O_PATH|unix.O_CLOEXEC, 0); err == nil {
			defer unix.Close(fd)
			devices[dev] = fd
		}
	}
	var errs []error
	if has(cfg.Namespaces, LayerPIDNS) {
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			errs = append(errs, fmt.Errorf("mount /proc: %v", err))
		}
	}
	// Masks stay writable only where a folder must be re-created in them.
	grantFDs, err := openGrants(cfg)
	if err != nil {
		return err
	}
	defer closeGrants(grantFDs)
	needed := append([]string{cfg.Skill, cfg.WorkDir}, grantPaths(cfg)...)
	masked, writable, err := maskTopDirs(needed)
	if err != nil {
		errs = append(errs, err)
	}
	if err := setupEtc(cfg.AllowNetwork); err != nil {
		errs = append(errs, err)
	}
	masked, writable = append(masked, "/etc"), append(writable, "/etc")
	// A private /tmp: programs that write /tmp by name, ignoring TMPDIR
	// (LibreOffice, many scripts), work. When the work folder lies in
	// /tmp (the default) it is a folder of this same tmpfs, so both count
	// against one cap of WorkDirMB.
	shared := cfg.WorkDirMB > 0 && under(cfg.WorkDir, []string{"/tmp"})
	tmpMB := cfg.WorkDirMB
	if tmpMB == 0 {
		tmpMB = DefaultWorkDirMB
	}
	if err := unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(tmpMB, "1777")); err != nil {
		errs = append(errs, fmt.Errorf("/tmp tmpfs: %v", err))
	}
	masked = append(masked, "/tmp")
	if err := maskTopFiles(devices["/dev/null"]); err != nil {
		errs = append(errs, err)
	}
	if err := setupDev(devices); err != nil {
		errs = append(errs, err)
	}
	if err := bindGrants(cfg, grantFDs); err != nil {
		errs = append(errs, err)
	}
	for _, dir := range []string{cfg.Skill, cfg.WorkDir} {
		switch {
		case dir == cfg.Skill && cfg.SkillTree != 0:
			if err := attachSkill(cfg); err != nil {
				errs = append(errs, err)
			}
		case dir == cfg.WorkDir && shared:
			if err := os.MkdirAll(dir, 0o700); err != nil {
				errs = append(errs, fmt.Errorf("work folder: %v", err))
			}
		case under(dir, masked):
			if err := rebind(keep[dir], dir); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if cfg.WorkDirMB > 0 && !shared {
		// A size-capped work folder: a full disk is not the script's to cause.
		if err := unix.Mount("tmpfs", cfg.WorkDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, tmpfsOptions(cfg.WorkDirMB, "0700")); err != nil {
			errs = append(errs, fmt.Errorf("work folder tmpfs: %v", err))
		}
	}
	if !under(cfg.Skill, masked) && cfg.SkillTree == 0 {
		if err := rebind(keep[cfg.Skill], cfg.Skill); err != nil {
			errs = append(errs, err)
		}
	}
	if err := maskDenied(cfg, devices["/dev/null"]); err != nil {
		errs = append(errs, err)
	}
	if err := remountReadOnly(cfg.Skill); err != nil {
		errs = append(errs, err)
	}
	for _, dir := range append(writable, "/dev") {
		if err := remountReadOnly(dir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tmpfsOptions are those of a size-capped tmpfs of sizeMB MiB (with 64
// inodes per MiB, at least 1024) and the given octal mode.
func tmpfsOptions(sizeMB int, mode string) string {
	return fmt.Sprintf("size=%dm,nr_inodes=%d,mode=%s", sizeMB, max(sizeMB*64, 1024), mode)
}

// maskTopDirs masks every top-level folder not kept. Folders that will
// hold one of the needed paths get their own writable tmpfs (returned as
// writable, made read-only after the bind mounts); all others share one
// read-only empty tmpfs, mounted once and bind-mounted onto the rest,
// which is cheaper to set up and to tear down than one tmpfs each.
func maskTopDirs(needed []string) (masked, writable []string, err error) {
	ents, err := os.ReadDir("/")
	if err != nil {
		return nil, nil, fmt.Errorf("read /: %v", err)
	}
	var errs []error
	shared := "" // the first read-only mask, source of the bind mounts
	for _, e := range ents {
		if !e.IsDir() || slices.Contains(keptTopDirs(), e.Name()) {
			continue // symlinks such as /bin -> usr/bin are not followed
		}
		dir := "/" + e.Name()
		rw := false
		for _, p := range needed {
			rw = rw || under(p, []string{dir})
		}
		switch {
		case rw:
			err = unix.Mount("tmpfs", dir, "tmpfs", maskFlags, maskOptions)
		case shared == "":
			err = unix.Mount("tmpfs", dir, "tmpfs", maskFlags|unix.MS_RDONLY, maskOptions)
		default:
			err = unix.Mount(shared, dir, "", unix.MS_BIND, "")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("mask %s: %v", dir, err))
			continue
		}
		if !rw && shared == "" {
			shared = dir
		}
		masked = append(masked, dir)
		if rw {
			writable = append(writable, dir)
		}
	}
	return masked, writable, errors.Join(errs...)
}

// maskTopFiles hides regular files lying in "/" itself (container
// descriptions, installer scripts) behind /dev/null.
func maskTopFiles(null int) error {
	if null == 0 {
		return fmt.Errorf("mask files in /: /dev/null unavailable")
	}
	ents, err := os.ReadDir("/")
	if err != nil {
		return fmt.Errorf("read /: %v", err)
	}
	var errs []error
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(null), "/"+e.Name(), "", unix.MS_BIND, ""); err != nil {
			errs = append(errs, fmt.Errorf("mask /%s: %v", e.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// setupDev replaces /dev with a tmpfs holding only the devices Landlock
// allows (bind-mounted from the host's, opened before as devices), the
// usual /dev/fd and /dev/std* links, an empty pts folder and a private
// /dev/shm. The host's /dev/log (syslog), /dev/shm, terminals and disks
// are gone.
func setupDev(devices map[string]int) error {
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, maskOptions); err != nil {
		return fmt.Errorf("mask /dev: %v", err)
	}
	var errs []error
	for path, fd := range devices {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f.Close()
		if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), path, "", unix.MS_BIND, ""); err != nil {
			errs = append(errs, fmt.Errorf("bind %s: %v", path, err))
		}
	}
	for link, target := range map[string]string{
		"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0",
		"/dev/stdout": "/proc/self/fd/1", "/dev/stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, link); err != nil {
			errs = append(errs, err)
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		errs = append(errs, err)
	}
	// A private, small /dev/shm: POSIX semaphores and shared memory
	// (Python's multiprocessing locks and pools) need it. Its pages are
	// memory outside RLIMIT_AS, hence the size cap.
	if err := os.Mkdir("/dev/shm", 0o755); err != nil {
		errs = append(errs, err)
	} else if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, shmOptions); err != nil {
		errs = append(errs, fmt.Errorf("/dev/shm: %v", err))
	}
	return errors.Join(errs...)
}

// under reports whether path is one of dirs or below one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}

// rebind bind-mounts the folder open on fd onto path, creating path (in a
// masking tmpfs) first.
func rebind(fd int, path string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("rebind %s: %v", path, err)
	}
	src := "/proc/self/fd/" + strconv.Itoa(fd)
	if err := unix.Mount(src, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("rebind %s: %v", path, err)
	}
	return nil
}

// remountReadOnly makes the mount at path read-only. Inside a user
// namespace the flags inherited from the host's mount are locked, so they
// are carried over.
func remountReadOnly(path string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fmt.Errorf("statfs %s: %v", path, err)
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY)
	for _, f := range []struct{ st, ms int64 }{
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
		return fmt.Errorf("remount %s read-only: %v", path, err)
	}
	return nil
}
