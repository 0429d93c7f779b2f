package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// profile is the seccomp profile format the kubelet hands the container
// runtime for a Localhost profile (the OCI runtime's, as containerd and
// CRI-O read it), as far as the shipped profile uses it.
type profile struct {
	DefaultAction   string   `json:"defaultAction"`
	DefaultErrnoRet int      `json:"defaultErrnoRet"`
	Architectures   []string `json:"architectures"`
	Syscalls        []struct {
		Names    []string `json:"names"`
		Action   string   `json:"action"`
		ErrnoRet int      `json:"errnoRet"`
		Args     []arg    `json:"args"`
	} `json:"syscalls"`
}

// arg is a condition on a call's argument; for SCMP_CMP_MASKED_EQ,
// Value is the mask and ValueTwo the value wanted.
type arg struct {
	Index    uint   `json:"index"`
	Value    uint64 `json:"value"`
	ValueTwo uint64 `json:"valueTwo,omitempty"`
	Op       string `json:"op"`
}

// readProfile decodes the shipped profile, refusing fields it does not know.
func readProfile(t *testing.T) profile {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(readFile(t, "helm", "skill-sandbox", "files", "seccomp-profile.json")))
	dec.DisallowUnknownFields()
	var p profile
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("seccomp-profile.json: %v", err)
	}
	return p
}

// sandboxCalls are the calls the profile allows beyond what a container
// runtime's default gives a pod without CAP_SYS_ADMIN, and why the
// sandbox needs each (each measured: without it the run is refused,
// docs/kubernetes.md "The seccomp profile").
var sandboxCalls = map[string]string{
	"clone":         "the run's namespaces (CLONE_NEWUSER and the others), threads and forks",
	"unshare":       "the init process's namespaces after the user namespace",
	"mount":         "the run's root, /proc, /tmp and work folder",
	"umount2":       "detaching the host's root after pivot_root",
	"pivot_root":    "entering the run's root",
	"mount_setattr": "read-only and id-mapped mounts: write grants, the pool's prefix",
	"open_tree":     "the bind mounts of grants (detached trees)",
	"move_mount":    "attaching those trees",
	"sethostname":   "the UTS namespace's host name (layer utsns)",
	"setdomainname": "the UTS namespace's domain name, else the pod's shows through",
}

// deniedCalls are calls that only attack the kernel or reach past the
// pod, as the sandbox's own filter denies them to scripts: the pod's
// profile must not allow them to serve either.
var deniedCalls = strings.Fields(`acct add_key bpf chroot clock_settime delete_module finit_module
fsconfig fsmount fsopen fspick init_module io_uring_enter io_uring_register io_uring_setup ioperm
iopl kcmp kexec_file_load kexec_load keyctl lookup_dcookie mbind migrate_pages move_pages
open_by_handle_at perf_event_open pidfd_getfd process_madvise process_vm_readv process_vm_writev
ptrace quotactl quotactl_fd reboot request_key set_mempolicy setns settimeofday swapoff swapon
syslog userfaultfd vhangup`)

// TestSeccompProfile checks the shipped profile's shape: deny by default,
// the native architectures only, each call named once, the sandbox's
// calls beyond the runtime default exactly those of sandboxCalls, none of
// deniedCalls, clone3 as ENOSYS (so a C library falls back to clone,
// which the sandbox's own filter can inspect), and sockets of the
// families below AF_VSOCK only.
func TestSeccompProfile(t *testing.T) {
	p := readProfile(t)
	if p.DefaultAction != "SCMP_ACT_ERRNO" || p.DefaultErrnoRet != 1 {
		t.Errorf("default action %s (errno %d), want SCMP_ACT_ERRNO (EPERM)", p.DefaultAction, p.DefaultErrnoRet)
	}
	if want := []string{"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}; !slices.Equal(p.Architectures, want) {
		t.Errorf("architectures %v, want %v: 32-bit calls get the default action", p.Architectures, want)
	}
	allowed := map[string]int{}
	for i, r := range p.Syscalls {
		for _, n := range r.Names {
			if prev, ok := allowed[n]; ok && prev != i && n != "personality" {
				t.Errorf("%s in two rules", n)
			}
			allowed[n] = i
		}
		switch {
		case r.Action == "SCMP_ACT_ALLOW":
		case r.Action == "SCMP_ACT_ERRNO" && slices.Equal(r.Names, []string{"clone3"}) && r.ErrnoRet == 38:
		default:
			t.Errorf("rule %d (%v): action %s errno %d", i, r.Names, r.Action, r.ErrnoRet)
		}
	}
	sandboxRule := p.Syscalls[allowed["pivot_root"]]
	got := slices.Sorted(slices.Values(sandboxRule.Names))
	want := slices.Sorted(func(yield func(string) bool) {
		for n := range sandboxCalls {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(got, want) || len(sandboxRule.Args) != 0 {
		t.Errorf("the sandbox's rule allows %v (args %v), want exactly %v", got, sandboxRule.Args, want)
	}
	for _, n := range deniedCalls {
		if _, ok := allowed[n]; ok {
			t.Errorf("%s is allowed", n)
		}
	}
	sock := p.Syscalls[allowed["socket"]]
	if len(sock.Args) != 1 || sock.Args[0].Index != 0 || sock.Args[0].Op != "SCMP_CMP_LT" || sock.Args[0].Value != 40 {
		t.Errorf("socket: %+v, want families below AF_VSOCK (40) only", sock.Args)
	}
}

// observedCalls are the system calls strace -f saw in one run of the
// example skill (supervisor, init process and a Python script) as root on
// Linux 6.18: the profile must allow them all.
var observedCalls = strings.Fields(`access arch_prctl brk capset chdir clone close close_range dup3
epoll_create1 epoll_ctl epoll_pwait eventfd2 execve exit_group faccessat fchown fcntl flock fstat
fstatfs futex getdents64 getegid geteuid getgid getpid getrandom getrlimit getrusage gettid getuid
ioctl landlock_add_rule landlock_create_ruleset landlock_restrict_self lgetxattr lseek madvise
mkdirat mknodat mmap mount mount_setattr mprotect munmap nanosleep newfstatat openat pidfd_open
pipe2 pivot_root ppoll prctl pread64 prlimit64 pwrite64 read readlink readlinkat recvmsg
rt_sigaction rt_sigprocmask rt_sigreturn rseq sched_getaffinity sched_yield seccomp sendmsg
set_robust_list set_tid_address setdomainname setgroups sethostname setresgid setresuid setsid
sigaltstack signalfd4 socket socketpair statfs symlinkat sysinfo tgkill umount2 uname unlinkat
unshare wait4 waitid write`)

// sysCall matches a system call the init process's code names.
var sysCall = regexp.MustCompile(`unix\.SYS_([A-Z0-9_]+)`)

// TestSeccompProfileAllowsInitProcess reads the system calls the init
// process's program is compiled from (run/internal/initplan) and makes
// (run/internal/initproc), and the calls observed in a run, and wants the
// profile to allow each: a new call there fails here until the profile
// and docs/kubernetes.md say why it is needed.
func TestSeccompProfileAllowsInitProcess(t *testing.T) {
	p := readProfile(t)
	allowed := map[string]bool{}
	for _, r := range p.Syscalls {
		for _, n := range r.Names {
			allowed[n] = r.Action == "SCMP_ACT_ALLOW"
		}
	}
	// The init process detaches a child that made it its tracer with
	// PTRACE_TRACEME where seccomp is missing; the pod's profile denies
	// ptrace to every process, so that never happens there.
	except := map[string]bool{"ptrace": true}
	calls := map[string]string{}
	for _, dir := range []string{"initplan", "initproc"} {
		files, err := filepath.Glob(filepath.Join("..", "run", "internal", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in run/internal/%s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range sysCall.FindAllSubmatch(b, -1) {
				calls[strings.ToLower(string(m[1]))] = filepath.Base(f)
			}
		}
	}
	if len(calls) < 30 {
		t.Fatalf("read only %d calls from run/internal: has the code moved?", len(calls))
	}
	for _, n := range observedCalls {
		calls[n] = "a run under strace"
	}
	for n, where := range calls {
		if !allowed[n] && !except[n] {
			t.Errorf("%s (%s) is not allowed by the pod's seccomp profile", n, where)
		}
	}
}
