package gvisor

// The few types of the OCI runtime specification's config.json
// (https://github.com/opencontainers/runtime-spec, config.md and
// config-linux.md) that a run needs; their JSON names are the
// specification's.

// ociSpec is config.json.
type ociSpec struct {
	Version  string     `json:"ociVersion"`
	Process  ociProcess `json:"process"`
	Root     ociRoot    `json:"root"`
	Hostname string     `json:"hostname"`
	Mounts   []ociMount `json:"mounts"`
	Linux    ociLinux   `json:"linux"`
}

// ociProcess is the container's process: the script.
type ociProcess struct {
	User            ociUser     `json:"user"`
	Args            []string    `json:"args"`
	Env             []string    `json:"env"`
	Cwd             string      `json:"cwd"`
	Rlimits         []ociRlimit `json:"rlimits,omitempty"`
	NoNewPrivileges bool        `json:"noNewPrivileges"`
	// Capabilities is always present and empty: the script gets none.
	Capabilities ociCaps `json:"capabilities"`
}

// ociUser is the script's identity inside the sandbox.
type ociUser struct {
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
}

// ociCaps are the capability sets; all empty.
type ociCaps struct {
	Bounding    []string `json:"bounding"`
	Effective   []string `json:"effective"`
	Inheritable []string `json:"inheritable"`
	Permitted   []string `json:"permitted"`
	Ambient     []string `json:"ambient"`
}

// ociRlimit is one POSIX resource limit.
type ociRlimit struct {
	Type string `json:"type"`
	Hard uint64 `json:"hard"`
	Soft uint64 `json:"soft"`
}

// ociRoot is the container's root file system.
type ociRoot struct {
	Path     string `json:"path"`
	Readonly bool   `json:"readonly"`
}

// ociMount is one mount, made in order.
type ociMount struct {
	Destination string   `json:"destination"`
	Type        string   `json:"type"`
	Source      string   `json:"source"`
	Options     []string `json:"options,omitempty"`
}

// ociLinux is the Linux section: namespaces and resources.
type ociLinux struct {
	Namespaces []ociNamespace `json:"namespaces"`
	Resources  *ociResources  `json:"resources,omitempty"`
	Seccomp    *ociSeccomp    `json:"seccomp,omitempty"`
	// CgroupsPath is the sandbox's cgroup below each hierarchy's root;
	// runsc's default, "/" and the container's id, when empty.
	CgroupsPath string `json:"cgroupsPath,omitempty"`
}

// ociSeccomp is the seccomp filter the runtime loads for the process:
// DefaultAction for every call no rule of Syscalls matches.
type ociSeccomp struct {
	DefaultAction string       `json:"defaultAction"`
	Architectures []string     `json:"architectures"`
	Syscalls      []ociSyscall `json:"syscalls"`
}

// ociSyscall is one rule: Action for the calls Names when all of Args
// hold.
type ociSyscall struct {
	Names    []string        `json:"names"`
	Action   string          `json:"action"`
	ErrnoRet *uint           `json:"errnoRet,omitempty"`
	Args     []ociSeccompArg `json:"args,omitempty"`
}

// ociSeccompArg is one comparison of a rule's argument Index.
type ociSeccompArg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo"`
	Op       string `json:"op"`
}

// ociNamespace is one namespace the container gets.
type ociNamespace struct {
	Type string `json:"type"`
}

// ociResources are the container's cgroup limits.
type ociResources struct {
	Memory *ociMemory `json:"memory,omitempty"`
	Pids   *ociPids   `json:"pids,omitempty"`
	CPU    *ociCPU    `json:"cpu,omitempty"`
}

// ociMemory caps memory (bytes).
type ociMemory struct {
	Limit int64 `json:"limit"`
}

// ociPids caps the number of tasks.
type ociPids struct {
	Limit int64 `json:"limit"`
}

// ociCPU caps CPU time: Quota microseconds per Period.
type ociCPU struct {
	Quota  int64  `json:"quota"`
	Period uint64 `json:"period"`
}
