package gvisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// emptyFile is the bundle's empty file, bound read-only over each masked
// file; masked folders get an empty read-only tmpfs. etcEmptyFile is the
// one over /etc's masked files: readable, as the native backend's are
// (the C library reads an empty passwd and goes on to its other sources;
// one it may not read fails the lookup).
const (
	emptyFile    = "empty"
	etcEmptyFile = "empty-etc"
)

// The network of a run with the filtering proxy, inside the sandbox: the
// relay (this program, bound read-only) is the sandbox's first process,
// and the host folder where it makes its Unix socket is bound beside it.
const (
	relayArg0     = "/.skill-sandbox-gvisor-relay"
	limitArg0     = "skill-sandbox-gvisor-limit" // the relay's child, which limits and executes the script
	sandboxNetDir = "/.skill-sandbox-net"
	relaySocket   = "relay.sock" // the relay's; the supervisor connects to it
	// maxRelayPorts bounds the relay's listeners (the proxy's port and
	// the local ports): each is named by one byte on the control
	// connection.
	maxRelayPorts = 64
)

// Check refuses a run the gVisor backend cannot give the isolation it
// was planned with: one whose folders were handed over as detached trees
// (the run's identity cannot reach them by path), one whose script
// would be root inside the sandbox, or, rootless, one whose skill folder
// or grant reaches the sandboxes' folders (reachesSandboxDirs). The error wraps
// backend.ErrUnsupported and names the limitation.
func Check(p *backend.Spec) error {
	switch {
	case len(p.ExtraFiles) > 0 || p.Config.SkillTree != 0 || slices.ContainsFunc(p.Config.Grants, func(g stageconfig.GrantMount) bool { return g.Tree != 0 }):
		return fmt.Errorf("%w: the gvisor backend cannot yet hand over folders the run's identity (uid %d) cannot reach by path, or id-map a write grant of root's; grant folders that identity can use (for a root caller, chown 65534 a write folder), or use --backend native", backend.ErrUnsupported, p.UID)
	case p.UID <= 0 || p.GID < 0:
		return fmt.Errorf("%w: the gvisor backend runs scripts only as an unprivileged identity, and this run's is uid %d", backend.ErrUnsupported, p.UID)
	case seccompSection(p) == nil:
		return fmt.Errorf("%w: the gvisor backend has no seccomp filter for this architecture", backend.ErrUnsupported)
	case p.Proxy != nil && (p.Config.ProxyPort <= 0 || p.Config.ProxyPort > 65535):
		return fmt.Errorf("%w: the gvisor backend needs the proxy's port in the sandbox, and it is %d", backend.ErrUnsupported, p.Config.ProxyPort)
	case len(p.Config.LocalPorts) > 0 && p.Proxy == nil, len(p.Config.LocalPorts) >= maxRelayPorts:
		return fmt.Errorf("%w: the gvisor backend relays at most %d local ports, with the proxy", backend.ErrUnsupported, maxRelayPorts-1)
	}
	if os.Geteuid() != 0 {
		if d := reachesSandboxDirs(p); d != "" {
			return fmt.Errorf("%w: rootless, the gvisor backend keeps its sandboxes' folders in TMPDIR (%s), as the caller, whom the script is on the host: the run's folder %s would reach other runs' sandboxes; grant a folder outside TMPDIR, or set TMPDIR elsewhere", backend.ErrUnsupported, os.TempDir(), d)
		}
	}
	return nil
}

// writeBundle writes the OCI bundle of p in dir: config.json, an empty
// read-only root (with the mount points of the relay and the socket
// folder) and the empty file the masks bind. relay is the host path of
// the relay's program, or "" for a run without the proxy; net is the
// host folder of the relay's socket. cgroupsPath, when not "", is where
// runsc makes the sandbox's cgroup (see usage).
func writeBundle(p *backend.Spec, dir, relay, net, cgroupsPath string) error {
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, emptyFile), nil, 0); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, etcEmptyFile), nil, 0o444); err != nil {
		return err
	}
	if err := writeEtcFiles(p, dir); err != nil {
		return err
	}
	if err := makeWorkFolder(p, dir); err != nil {
		return err
	}
	if relay != "" {
		if err := os.WriteFile(filepath.Join(dir, "rootfs", relayArg0), nil, 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(filepath.Join(dir, "rootfs", sandboxNetDir), 0o755); err != nil {
			return err
		}
	}
	spec := bundleSpec(p, dir, relay, net)
	spec.Linux.CgroupsPath = cgroupsPath
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// makeWorkFolder makes p's work folder in the bundle in dir (see
// workSource), the script's: as root, the run's identity's; rootless,
// the caller's, who is the script's identity there.
func makeWorkFolder(p *backend.Spec, dir string) error {
	work := workSource(p, dir)
	if work == p.Config.WorkDir {
		return nil
	}
	if err := os.Mkdir(work, 0o700); err != nil {
		return err
	}
	if os.Geteuid() == 0 {
		return os.Chown(work, p.UID, p.GID)
	}
	return nil
}

// etcOwnDir is the bundle's folder of the sandbox's own /etc files
// (etcView), each bound read-only over the host's.
const etcOwnDir = "etc"

// writeEtcFiles writes the sandbox's own /etc files of p's run in the
// bundle in dir, readable by anyone (the host's are).
func writeEtcFiles(p *backend.Spec, dir string) error {
	_, files := etcView(p)
	if len(files) == 0 {
		return nil
	}
	if err := os.Mkdir(filepath.Join(dir, etcOwnDir), 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, etcOwnDir, filepath.Base(f.Path)), []byte(f.Data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// bundleSpec is the config.json of p's run, its bundle in dir; relay and
// net as for writeBundle.
func bundleSpec(p *backend.Spec, dir, relay, net string) *ociSpec {
	c := &p.Config
	user := ociUser{UID: uint32(p.UID), GID: uint32(p.GID)}
	if os.Geteuid() != 0 && p.UID == os.Geteuid() {
		// Rootless runsc maps the caller to root in its user namespace:
		// there the caller's files are uid 0's, so the script is uid 0
		// of the sandbox, which is the caller on the host.
		user = ociUser{}
	}
	s := &ociSpec{
		Version:  "1.0.2",
		Hostname: stageconfig.SandboxHostname,
		Root:     ociRoot{Path: "rootfs", Readonly: true},
		Process: ociProcess{
			User:            user,
			Args:            c.Argv,
			Env:             c.Env,
			Cwd:             c.Dir,
			Rlimits:         rlimits(c.Limits),
			NoNewPrivileges: true,
			Capabilities:    ociCaps{Bounding: []string{}, Effective: []string{}, Inheritable: []string{}, Permitted: []string{}, Ambient: []string{}},
		},
		Mounts: mounts(p, dir),
		Linux: ociLinux{
			Namespaces: []ociNamespace{{"pid"}, {"network"}, {"ipc"}, {"uts"}, {"mount"}},
			Resources:  resources(p),
			Seccomp:    seccompSection(p),
		},
	}
	if c.AllowNetwork {
		// runsc --network host: the host's own namespace, not a new one.
		s.Linux.Namespaces = slices.DeleteFunc(s.Linux.Namespaces, func(n ociNamespace) bool { return n.Type == "network" })
	}
	if relay != "" {
		as := strconv.FormatUint(c.Limits.AddressSpace, 10)
		nproc := strconv.FormatUint(c.Limits.Procs, 10)
		ports := []string{strconv.Itoa(c.ProxyPort)}
		for _, l := range c.LocalPorts {
			ports = append(ports, strconv.Itoa(l))
		}
		s.Process.Args = append([]string{relayArg0, strings.Join(ports, ","), as, nproc}, c.Argv...)
		s.Process.Rlimits = slices.DeleteFunc(s.Process.Rlimits, func(r ociRlimit) bool { return r.Type == "RLIMIT_AS" || r.Type == "RLIMIT_NPROC" })
		s.Mounts = append(s.Mounts, bind(relay, relayArg0, false, true), bind(net, sandboxNetDir, true, false))
	}
	return s
}

// rlimits are the script's resource limits, as the native backend sets
// them. gVisor's kernel keeps RLIMIT_NPROC itself: it counts the tasks
// of the script's uid in the sandbox (only the sandbox's: the kernel is
// its own) and a fork past the limit fails with EAGAIN, inside, as
// natively; runsc's cgroup, which also counts gVisor's own threads, is
// only the outer wall (hostTasks).
func rlimits(l stageconfig.Limits) []ociRlimit {
	var out []ociRlimit
	add := func(name string, v uint64) {
		if v > 0 {
			out = append(out, ociRlimit{Type: name, Hard: v, Soft: v})
		}
	}
	add("RLIMIT_AS", l.AddressSpace)
	add("RLIMIT_CPU", l.CPUSeconds)
	add("RLIMIT_NPROC", l.Procs)
	add("RLIMIT_FSIZE", l.FileSize)
	add("RLIMIT_NOFILE", l.OpenFiles)
	out = append(out, ociRlimit{Type: "RLIMIT_CORE"})
	return out
}

// resources are the sandbox's cgroup limits: memory, tasks and CPUs.
// The cgroup is the outer wall: the memory watch (watchMemory) holds the
// sandbox to memoryCap, memoryHeadroom below the cgroup's limit.
func resources(p *backend.Spec) *ociResources {
	r := &ociResources{}
	if p.Cgroup.MemoryBytes > 0 {
		r.Memory = &ociMemory{Limit: p.Cgroup.MemoryBytes + memoryHeadroom}
	}
	if p.Cgroup.Pids > 0 {
		r.Pids = &ociPids{Limit: hostTasks(p.Cgroup.Pids)}
	}
	if p.Cgroup.CPUs > 0 {
		const period = 100000
		r.CPU = &ociCPU{Quota: int64(p.Cgroup.CPUs * period), Period: period}
	}
	return r
}

// The host tasks of a sandbox under runsc's ptrace platform: the
// Sentry's and the gofer's threads (about 70 idle, measured with runsc
// 20221219), and a stub process with its threads for each of the
// script's processes (about 20 each).
const (
	hostTasksBase    = 128
	hostTasksPerTask = 24
)

// hostTasks is the sandbox cgroup's task limit for a script allowed n
// tasks: the host counts gVisor's own threads there too, and a limit of
// n would kill the Sentry (a fork it cannot make is fatal to it).
func hostTasks(n int64) int64 { return hostTasksBase + n*hostTasksPerTask }

// mounts are the run's mounts in the order they are made: /proc and
// /tmp, the system folders and /etc read-only, the skill folder
// read-only and executable, the grants, the masks (the native backend's of /etc, the
// deny list's entries there, the grants'), the sandbox's own /etc
// files, the grants' read-only parts, and the work folder (workSource).
func mounts(p *backend.Spec, dir string) []ociMount {
	c := &p.Config
	ms := []ociMount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		// Executable, as natively: the system folders, the skill folder
		// and an interpreter's grants; /tmp, the work folder and the
		// other grants are noexec (natively Landlock says the same), so
		// a program the script writes does not run.
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: tmpfsOptions(c.WorkDirMB, "1777")},
		// The native backend's private /dev/shm (POSIX shared memory:
		// Python's multiprocessing, LibreOffice); gVisor's own /dev has
		// one only root may write to.
		{Destination: "/dev/shm", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "noexec", "size=64m", "mode=1777"}},
	}
	for _, d := range append(stageconfig.SystemDirs(), "/etc") {
		if _, err := os.Stat(d); err == nil {
			ms = append(ms, rbind(d))
		}
	}
	etcMasks, etcFiles := etcView(p)
	ms = append(ms, bind(c.Skill, c.Skill, false, true))
	for _, g := range c.Grants {
		ms = append(ms, bind(g.Path, g.Path, g.Write, g.Exec))
	}
	masked := map[string]bool{}
	for _, m := range etcMasks {
		masked[m.Path] = true
		ms = append(ms, mask(m.Path, filepath.Join(dir, etcEmptyFile), "mode=555"))
	}
	// The deny list's /etc entries natively stay the host's, closed to
	// the script by their owners and modes: here closed by a mask it
	// may not read.
	for _, d := range etcDenied(p) {
		if !masked[d] {
			ms = append(ms, mask(d, filepath.Join(dir, emptyFile), "mode=000"))
		}
	}
	for _, m := range c.Masked {
		ms = append(ms, mask(m.Path, filepath.Join(dir, emptyFile), "mode=000"))
	}
	for _, f := range etcFiles {
		ms = append(ms, bind(filepath.Join(dir, etcOwnDir, filepath.Base(f.Path)), f.Path, false, false))
	}
	for _, g := range c.ReadOnly {
		ms = append(ms, bind(g.Path, g.Path, false, false))
	}
	// The work folder is the host's, always: runsc 20221219 ignores a
	// tmpfs's nr_inodes, so only the supervisor's watch of a host folder
	// keeps both of the native caps (bytes and entries; see
	// run.planGVisorWatch), and it costs no memory where no cgroup
	// holds the sandbox's.
	return append(ms, bind(workSource(p, dir), c.WorkDir, true, false))
}

// workFolder is the work folder's host folder in the bundle, for a run
// whose work folder is not kept.
const workFolder = "work"

// workSource is the host folder of p's work folder, its bundle in dir:
// the kept folder itself, else the bundle's own, made by writeBundle in
// the supervisor's private temporary folder, which no one else on the
// host can reach (runsc's gofer serves it to the sandbox; a folder of
// uid 65534's in the host's /tmp would be open to every process of that
// uid).
func workSource(p *backend.Spec, dir string) string {
	if p.Config.WorkDirMB == 0 {
		return p.Config.WorkDir
	}
	return filepath.Join(dir, workFolder)
}

// tmpfsOptions are the options of a tmpfs of mb MiB (the default work
// folder size for 0), nosuid, nodev and noexec: gVisor's kernel keeps the size,
// answering ENOSPC past it, as the native backend's tmpfs does, so /tmp
// is capped also where no cgroup holds the sandbox's memory (rootless).
// runsc 20221219 ignores nr_inodes: /tmp's entries are not counted
// (each costs gVisor's kernel memory, not a host inode).
func tmpfsOptions(mb int, mode string) []string {
	if mb <= 0 {
		mb = stageconfig.DefaultWorkDirMB
	}
	return []string{"nosuid", "nodev", "noexec", "mode=" + mode, fmt.Sprintf("size=%dm", mb)}
}

// bind is a bind mount of src at dst: read-only unless write, nosuid
// and nodev, and noexec unless exec.
func bind(src, dst string, write, exec bool) ociMount {
	// A plain bind: a mount below src (one made after the run was
	// planned, say) is not carried into the sandbox, as natively.
	opts := []string{"bind", "ro", "nosuid", "nodev"}
	if write {
		opts[1] = "rw"
	}
	if !exec {
		opts = append(opts, "noexec")
	}
	return ociMount{Destination: dst, Type: "bind", Source: src, Options: opts}
}

// rbind is a recursive read-only bind of the system folder d, as the
// native backend binds the system folders and /etc: their mounts below
// (a separate /usr/local, say) are part of what the sandbox shows.
func rbind(d string) ociMount {
	m := bind(d, d, false, true)
	m.Options[0] = "rbind"
	return m
}

// mask hides path: an empty read-only tmpfs of dirMode ("mode=555", as
// natively over /etc's folders; "mode=000") over a folder, the empty
// file empty (one of the bundle's) over anything else.
func mask(path, empty, dirMode string) ociMount {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return ociMount{Destination: path, Type: "tmpfs", Source: "tmpfs", Options: []string{"ro", "nosuid", "nodev", "noexec", dirMode}}
	}
	return bind(empty, path, false, false)
}

// etcDenied are the deny list's entries in /etc that exist, the
// supervisor can open, and are not allowed: the native backend masks them in its own /etc; here they are
// masked over the host's.
func etcDenied(p *backend.Spec) []string {
	deny := p.DenyPaths
	if deny == nil {
		deny = stageconfig.DefaultDenyPaths()
	}
	var out []string
	for _, d := range deny {
		if !strings.HasPrefix(d, "/etc/") || strings.ContainsAny(d, "*?[") || slices.Contains(p.AllowDenied, d) {
			continue
		}
		// What the supervisor cannot open, runsc's gofer (the supervisor's
		// identity) cannot serve either: rootless, /etc/shadow needs no mask.
		if f, err := os.Open(d); err == nil {
			f.Close()
			out = append(out, d)
		}
	}
	return out
}
