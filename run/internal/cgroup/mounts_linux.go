package cgroup

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// The file that says which cgroups this process is in.
const procCgroup = "/proc/self/cgroup"

// Bounds of the files read here: a cgroup's process list (pids.max bounds
// it), a number or a short list.
const (
	maxProcsList  = 16 << 20
	maxCgroupFile = 64 << 10
)

// mount is one mounted cgroup hierarchy.
type mount struct {
	dir  string // mount point
	root string // the hierarchy's folder mounted there
}

// readMounts reads the mounted hierarchies from mountinfo: key "2" for
// cgroup2, and each v1 controller's name (memory, pids, cpu, ...).
func readMounts(path string) (map[string]mount, error) {
	data, err := proc.ReadFile(path, proc.MaxMountinfo)
	if err != nil {
		return nil, err
	}
	out := map[string]mount{}
	for line := range strings.Lines(string(data)) {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := mount{dir: proc.UnescapeMount(f[4]), root: proc.UnescapeMount(f[3])}
		switch g[0] {
		case "cgroup2":
			if _, seen := out["2"]; !seen {
				out["2"] = m
			}
		case "cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				if _, seen := out[opt]; !seen && opt != "rw" && opt != "ro" {
					out[opt] = m
				}
			}
		}
	}
	return out, nil
}

// readOwn reads a process's cgroup per hierarchy from path (its
// /proc/PID/cgroup): key "" for v2, each controller's name for v1.
func readOwn(path string) (map[string]string, error) {
	data, err := proc.ReadFile(path, maxCgroupFile)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			out[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

// Own reads this process's cgroup per hierarchy, as /proc/self/cgroup
// names them: key "" for v2, each controller's name for v1.
func Own() (map[string]string, error) { return readOwn(procCgroup) }

// Homes lists the folders of this process's own cgroups, one per mounted
// hierarchy it is in: where a run's cgroup is made, or next to which
// (cgroup v2, see Open).
func Homes() ([]string, error) {
	mounts, err := readMounts(proc.SelfMountinfo)
	if err != nil {
		return nil, err
	}
	own, err := Own()
	if err != nil {
		return nil, err
	}
	var homes []string
	for key, m := range mounts {
		p, ok := own[key]
		if key == "2" {
			p, ok = own[""]
		}
		if !ok {
			continue
		}
		if d, err := m.hostDir(p); err == nil {
			homes = append(homes, d)
		}
	}
	return homes, nil
}

// hostDir maps a cgroup path of /proc/self/cgroup into the mount.
func (m mount) hostDir(cgPath string) (string, error) {
	rel := cgPath
	if m.root != "/" {
		var ok bool
		if rel, ok = strings.CutPrefix(cgPath, m.root); !ok || (rel != "" && rel[0] != '/') {
			return "", fmt.Errorf("own cgroup %s is outside the mounted %s", cgPath, m.root)
		}
	}
	return filepath.Join(m.dir, filepath.FromSlash(rel)), nil
}

// Where a run's v1 cgroups go is found without reading mountinfo when the
// hierarchies are mounted the usual way (systemd, most distributions): one
// folder per controller under /sys/fs/cgroup, each the hierarchy's root.
// Reading and parsing /proc/self/mountinfo, and the cgroup v2 attempt
// that cannot succeed while memory is a v1 controller, took about 0.15 ms
// of every start on the 2-core machine of docs/bench.md; the checks
// below take five system calls, and a start came out 0.07 ms faster.
// Anything unusual (another mount point, a mounted subtree, a cgroup
// namespace, a controller elsewhere) fails a check, and Open reads
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
func v1Controllers(lim Limits) []string {
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
// hierarchy is checked by openV1, whose limit files (such as pids.max)
// only that hierarchy's cgroups have: a write that fails sends Open to
// mountinfo. root and nsLink are parameters for the tests; Open passes
// v1MountRoot and procCgroupNS.
func usualV1Mounts(root, nsLink string, own map[string]string, ctrls []string) (map[string]mount, bool) {
	var buf [64]byte
	n, err := unix.Readlink(nsLink, buf[:])
	if err != nil || string(buf[:n]) != initialCgroupNS {
		return nil, false
	}
	mounts := make(map[string]mount, len(ctrls))
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
		mounts[c] = mount{dir: dir, root: "/"}
	}
	return mounts, true
}
