package run

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Where a run's v1 cgroups go is found without reading mountinfo when the
// hierarchies are mounted the usual way (systemd, most distributions): one
// folder per controller under /sys/fs/cgroup, each the hierarchy's root.
// Reading and parsing /proc/self/mountinfo, and the cgroup v2 attempt
// that cannot succeed while memory is a v1 controller, took about 0.15 ms
// of every start on the 2-core machine of docs/bench.md; the checks
// below take five system calls, and a start came out 0.07 ms faster.
// Anything unusual (another mount point, a mounted subtree, a cgroup
// namespace, a controller elsewhere) fails a check, and openCgroup reads
// mountinfo as before.

// Paths of the usual layout, and the file naming the caller's cgroup
// namespace.
const (
	v1MountRoot  = "/sys/fs/cgroup"
	procCgroupNS = "/proc/self/ns/cgroup"
)

// initialCgroupNS is what procCgroupNS reads in the initial cgroup
// namespace, whose inode number the kernel fixes (PROC_CGROUP_INIT_INO):
// there, /proc/self/cgroup names cgroups from their hierarchy's root.
const initialCgroupNS = "cgroup:[4026531835]"

// v1Controllers are the v1 controllers a run's cgroup with lim needs.
func v1Controllers(lim cgroupLimits) []string {
	if lim.CPUs > 0 {
		return []string{"memory", "pids", "cpu"}
	}
	return []string{"memory", "pids"}
}

// usualV1Mounts returns the mounts of ctrls when each is mounted the usual
// way: root/<controller> is a cgroup v1 file system whose root is its
// hierarchy's (only a hierarchy's root cgroup has release_agent), the
// caller is in the initial cgroup namespace (nsLink, so own's paths start
// at that root), and the caller's own cgroup (own) exists there. ok is
// false when any check fails. That the folder belongs to the controller's
// hierarchy is checked by openCgroupV1, whose limit files (such as
// pids.max) only that hierarchy's cgroups have: a write that fails sends
// openCgroup to mountinfo. root and nsLink are parameters for the tests;
// openCgroup passes v1MountRoot and procCgroupNS.
func usualV1Mounts(root, nsLink string, own map[string]string, ctrls []string) (map[string]cgroupMount, bool) {
	var buf [64]byte
	n, err := unix.Readlink(nsLink, buf[:])
	if err != nil || string(buf[:n]) != initialCgroupNS {
		return nil, false
	}
	mounts := make(map[string]cgroupMount, len(ctrls))
	for _, c := range ctrls {
		path := own[c]
		if path == "" || path[0] != '/' {
			return nil, false
		}
		dir := filepath.Join(root, c)
		var fs unix.Statfs_t
		if unix.Statfs(filepath.Join(dir, filepath.FromSlash(path)), &fs) != nil || fs.Type != unix.CGROUP_SUPER_MAGIC ||
			unix.Access(filepath.Join(dir, "release_agent"), unix.F_OK) != nil {
			return nil, false
		}
		mounts[c] = cgroupMount{dir: dir, root: "/"}
	}
	return mounts, true
}
