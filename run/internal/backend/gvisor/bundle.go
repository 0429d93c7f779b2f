package gvisor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// emptyFile is the bundle's empty file, bound read-only over each masked
// file; masked folders get an empty read-only tmpfs.
const emptyFile = "empty"

// Check refuses a run the first cut of the gVisor backend cannot give the
// isolation it was planned with: one that needs the network or the
// filtering proxy, one whose folders were handed over as detached trees
// (the run's identity cannot reach them by path), or one whose script
// would be root inside the sandbox. The error wraps
// backend.ErrUnsupported and names the limitation.
func Check(p *backend.Spec) error {
	switch {
	case p.Proxy != nil || p.Config.AllowNetwork:
		return fmt.Errorf("%w: the gvisor backend does not yet give a run the network or the filtering proxy (--allow-network, --allow-host, --secret); run it with --backend native, or without network access", backend.ErrUnsupported)
	case len(p.ExtraFiles) > 0 || p.Config.SkillTree != 0 || slices.ContainsFunc(p.Config.Grants, func(g stageconfig.GrantMount) bool { return g.Tree != 0 }):
		return fmt.Errorf("%w: the gvisor backend cannot yet hand over folders the run's identity (uid %d) cannot reach by path, or id-map a write grant of root's; grant folders that identity can use (for a root caller, chown 65534 a write folder), or use --backend native", backend.ErrUnsupported, p.UID)
	case p.UID <= 0 || p.GID < 0:
		return fmt.Errorf("%w: the gvisor backend runs scripts only as an unprivileged identity, and this run's is uid %d", backend.ErrUnsupported, p.UID)
	}
	return nil
}

// writeBundle writes the OCI bundle of p in dir: config.json, an empty
// read-only root and the empty file the masks bind.
func writeBundle(p *backend.Spec, dir string) error {
	if err := os.Mkdir(filepath.Join(dir, "rootfs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, emptyFile), nil, 0); err != nil {
		return err
	}
	b, err := json.Marshal(bundleSpec(p, dir))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.json"), b, 0o644)
}

// bundleSpec is the config.json of p's run, its bundle in dir.
func bundleSpec(p *backend.Spec, dir string) *ociSpec {
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
		},
	}
	return s
}

// rlimits are the script's resource limits, as the native backend sets
// them.
func rlimits(l stageconfig.Limits) []ociRlimit {
	var out []ociRlimit
	add := func(name string, v uint64) {
		if v > 0 {
			out = append(out, ociRlimit{Type: name, Hard: v, Soft: v})
		}
	}
	add("RLIMIT_AS", l.AddressSpace)
	add("RLIMIT_CPU", l.CPUSeconds)
	add("RLIMIT_FSIZE", l.FileSize)
	add("RLIMIT_NOFILE", l.OpenFiles)
	out = append(out, ociRlimit{Type: "RLIMIT_CORE"})
	return out
}

// resources are the sandbox's cgroup limits: memory, tasks and CPUs.
func resources(p *backend.Spec) *ociResources {
	r := &ociResources{}
	if p.Cgroup.MemoryBytes > 0 {
		r.Memory = &ociMemory{Limit: p.Cgroup.MemoryBytes}
	}
	if p.Cgroup.Pids > 0 {
		r.Pids = &ociPids{Limit: p.Cgroup.Pids}
	}
	if p.Cgroup.CPUs > 0 {
		const period = 100000
		r.CPU = &ociCPU{Quota: int64(p.Cgroup.CPUs * period), Period: period}
	}
	return r
}

// mounts are the run's mounts in the order they are made: /proc and
// /tmp, the system folders and /etc read-only with the deny list's
// entries there masked, the skill folder read-only, the grants, their
// masks and read-only parts, and the work folder.
func mounts(p *backend.Spec, dir string) []ociMount {
	c := &p.Config
	ms := []ociMount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}},
	}
	for _, d := range append(stageconfig.SystemDirs(), "/etc") {
		if _, err := os.Stat(d); err == nil {
			ms = append(ms, bind(d, d, false, true))
		}
	}
	var masks []stageconfig.GrantMount
	for _, d := range etcDenied(p) {
		masks = append(masks, stageconfig.GrantMount{Path: d})
	}
	ms = append(ms, bind(c.Skill, c.Skill, false, false))
	for _, g := range c.Grants {
		ms = append(ms, bind(g.Path, g.Path, g.Write, g.Exec))
	}
	for _, m := range append(masks, c.Masked...) {
		ms = append(ms, mask(m.Path, dir))
	}
	for _, g := range c.ReadOnly {
		ms = append(ms, bind(g.Path, g.Path, false, false))
	}
	if c.WorkDirMB > 0 {
		ms = append(ms, ociMount{Destination: c.WorkDir, Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "mode=1777"}})
	} else {
		ms = append(ms, bind(c.WorkDir, c.WorkDir, true, true))
	}
	return ms
}

// bind is a bind mount of src at dst: read-only unless write, nosuid
// and nodev, and noexec unless exec.
func bind(src, dst string, write, exec bool) ociMount {
	opts := []string{"rbind", "ro", "nosuid", "nodev"}
	if write {
		opts[1] = "rw"
	}
	if !exec {
		opts = append(opts, "noexec")
	}
	return ociMount{Destination: dst, Type: "bind", Source: src, Options: opts}
}

// mask hides path: an empty read-only tmpfs over a folder, the bundle's
// empty file (mode 0) over anything else.
func mask(path, dir string) ociMount {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return ociMount{Destination: path, Type: "tmpfs", Source: "tmpfs", Options: []string{"ro", "nosuid", "nodev", "noexec", "mode=000"}}
	}
	return bind(filepath.Join(dir, emptyFile), path, false, false)
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
