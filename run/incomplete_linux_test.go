package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"

	"golang.org/x/sys/unix"
)

// faultChildEnv, in the environment of this test binary, makes
// TestLayerFaultChild the helper process of TestIncompleteLayers.
const faultChildEnv = "SKILL_SANDBOX_FAULT_CHILD"

// fault is a system call the kernel fails with errno in a helper's process
// tree (its own threads and the init process it starts), as a container's
// seccomp profile or an LSM would: all of them, or those whose argument
// arg has the low 32 bits val (or, with anyBit, a bit of val set).
type fault struct {
	nr     uint32
	arg    int // -1: every call
	val    uint32
	anyBit bool
	errno  unix.Errno
}

// faultCase is one failure injected into a run with AllowDegraded.
type faultCase struct {
	name   string
	faults []fault
	// grant: the run reads a granted folder holding a denied folder
	// "secret" (masked by the mount namespace) and the script prints
	// the file in it; Landlock's file rules are off (Disable), so that
	// only the mask stands between the script and the secret.
	grant bool
	// refuse: words the refusal must hold (step, path, errno); empty
	// when the run must go ahead without the layer missing.
	refuse  []string
	missing []Layer
	// root: the case needs a root caller (grants handed over as trees;
	// no_new_privs not set by the helper before its filter).
	root bool
}

// atFDCWD is AT_FDCWD's low 32 bits, as seccomp sees the argument.
const atFDCWD = uint32(0xffffff9c)

// faultCases classifies the failure points of the init process: a kernel or
// policy that refuses a layer outright (the run goes ahead with the layer
// reported missing), and a layer that exists but fails part-way (refused,
// AllowDegraded or not). The errno each case injects is one the kernel
// returns for that call.
func faultCases(grant string) []faultCase {
	secret := filepath.Join(grant, "secret")
	every := func(nr uint32, errno unix.Errno) fault { return fault{nr: nr, arg: -1, errno: errno} }
	return []faultCase{
		// The kernel does not offer the layer: degraded runs go ahead.
		{name: "mount refused outright", faults: []fault{{nr: unix.SYS_MOUNT, arg: 3, val: unix.MS_REC | unix.MS_PRIVATE, errno: unix.EPERM}}, missing: []Layer{LayerMountNS}},
		{name: "sethostname refused", faults: []fault{every(unix.SYS_SETHOSTNAME, unix.EPERM)}, missing: []Layer{LayerUTSNS}},
		{name: "loopback refused", faults: []fault{{nr: unix.SYS_IOCTL, arg: 1, val: unix.SIOCSIFFLAGS, errno: unix.EPERM}}, missing: []Layer{LayerNetNS}},
		{name: "no landlock", faults: []fault{{nr: unix.SYS_LANDLOCK_CREATE_RULESET, arg: 2, val: unix.LANDLOCK_CREATE_RULESET_VERSION, errno: unix.ENOSYS}}, missing: []Layer{LayerLandlockFS}},
		{name: "no no_new_privs", faults: []fault{{nr: unix.SYS_PRCTL, arg: 0, val: unix.PR_SET_NO_NEW_PRIVS, errno: unix.EINVAL}},
			missing: []Layer{LayerNoNewPrivs, LayerLandlockFS, LayerSeccomp}, root: true},
		{name: "no seccomp filters", faults: []fault{{nr: unix.SYS_SECCOMP, arg: 0, val: unix.SECCOMP_SET_MODE_FILTER, errno: unix.EINVAL}}, missing: []Layer{LayerSeccomp}},

		// The layer exists and fails part-way: refused.
		{name: "mask not mounted", grant: true,
			faults: []fault{{nr: unix.SYS_MOUNT, arg: 3, val: unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, errno: unix.EACCES}},
			refuse: []string{"mountns set up part-way", "mask " + secret, "EACCES"}},
		{name: "grant not attached", grant: true,
			faults: []fault{every(unix.SYS_MOVE_MOUNT, unix.EPERM)},
			refuse: []string{"mountns set up part-way", "grant " + grant, "move_mount", "EPERM"}, root: true},
		{name: "grant read-only lock refused", grant: true,
			faults: []fault{{nr: unix.SYS_MOUNT_SETATTR, arg: 0, val: atFDCWD, errno: unix.EPERM}},
			refuse: []string{"mountns set up part-way", "grant " + grant + ": mount_setattr", "EPERM"}},
		// The first read-only remount is /etc's (one bind of the host's).
		{name: "read-only remount refused",
			faults: []fault{{nr: unix.SYS_MOUNT, arg: 3, val: unix.MS_REMOUNT, anyBit: true, errno: unix.EPERM}},
			refuse: []string{"mountns set up part-way", "remount (flags 0x1) /etc:", "EPERM"}},
		{name: "pivot_root refused", faults: []fault{every(unix.SYS_PIVOT_ROOT, unix.EPERM)},
			refuse: []string{"mountns set up part-way", "pivot_root", "EPERM"}},
		{name: "sethostname failed", faults: []fault{every(unix.SYS_SETHOSTNAME, unix.EINVAL)},
			refuse: []string{"utsns set up part-way", "sethostname", "EINVAL"}},
		{name: "loopback failed", faults: []fault{{nr: unix.SYS_IOCTL, arg: 1, val: unix.SIOCSIFFLAGS, errno: unix.ENODEV}},
			refuse: []string{"netns set up part-way", "SIOCSIFFLAGS", "ENODEV"}},
		{name: "rlimits not set", faults: []fault{{nr: unix.SYS_PRLIMIT64, arg: 0, val: 0, errno: unix.EPERM}},
			refuse: []string{"rlimits set up part-way", "RLIMIT_", "EPERM"}},
		{name: "capabilities not dropped", faults: []fault{every(unix.SYS_CAPSET, unix.EPERM)},
			refuse: []string{"capabilities set up part-way", "capset", "EPERM"}},
		{name: "landlock ruleset not created", faults: []fault{{nr: unix.SYS_LANDLOCK_CREATE_RULESET, arg: 2, val: 0, errno: unix.ENOMEM}},
			refuse: []string{"landlock-fs", "set up part-way", "landlock_create_ruleset", "ENOMEM"}},
		{name: "landlock rule not added", faults: []fault{every(unix.SYS_LANDLOCK_ADD_RULE, unix.EACCES)},
			refuse: []string{"landlock-fs", "set up part-way", "landlock rule for /usr", "EACCES"}},
		{name: "landlock not enforced", faults: []fault{every(unix.SYS_LANDLOCK_RESTRICT_SELF, unix.E2BIG)},
			refuse: []string{"landlock-fs", "set up part-way", "landlock_restrict_self", "E2BIG"}},
		{name: "seccomp filter not loaded", faults: []fault{{nr: unix.SYS_SECCOMP, arg: 0, val: unix.SECCOMP_SET_MODE_FILTER, errno: unix.ENOMEM}},
			refuse: []string{"seccomp set up part-way", "SECCOMP_SET_MODE_FILTER", "ENOMEM"}},
	}
}

// faultOutcome is what the helper reports of its run.
type faultOutcome struct {
	Err       string
	Isolation bool
	Started   bool
	Stdout    string
	Missing   []Missing
}

// TestIncompleteLayers injects each class of failure into the init
// process of a run with AllowDegraded, through a seccomp filter on the
// helper process that runs it (the kernel then fails the call as a
// container's profile or an LSM would), and checks the verdict: a layer
// the kernel refuses outright is reported missing and the run goes ahead;
// a layer that exists but fails part-way refuses the run, naming the
// step, the path and the errno. Before that check, every failure of the
// second class was reported as a missing layer and the run went ahead in
// a half-built sandbox: with Landlock's file rules off, "mask not
// mounted" printed the denied secret.
func TestIncompleteLayers(t *testing.T) {
	fullIsolation(t)
	needTool(t, "sh")
	dir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\ncat \"$1/secret/key\" 2>&1\necho \"tmpdir $TMPDIR\"\necho ran\n"})
	grant := filepath.Join(filepath.Dir(dir), "data")
	for _, p := range []string{grant, filepath.Join(grant, "secret")} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	const secretText = "SECRET-KEY-MATERIAL"
	if err := os.WriteFile(filepath.Join(grant, "secret", "key"), []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range faultCases(grant) {
		t.Run(c.name, func(t *testing.T) {
			if c.root && os.Geteuid() != 0 {
				t.Skip("needs a root caller: grants handed over as trees, no_new_privs left unset")
			}
			cmd := exec.Command("/proc/self/exe", "-test.run", "^TestLayerFaultChild$", "-test.count", "1")
			cmd.Env = append(os.Environ(), faultChildEnv+"="+strings.Join([]string{c.name, dir, grant}, "|"))
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("helper: %v\nstderr: %s", err, errb.String())
			}
			line := out.Bytes()
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			var o faultOutcome
			if err := json.Unmarshal(line, &o); err != nil {
				t.Fatalf("helper output %q: %v\nstderr: %s", out.String(), err, errb.String())
			}
			if strings.Contains(o.Stdout, secretText) {
				t.Errorf("the script read the masked secret: %q", o.Stdout)
			}
			if len(c.refuse) == 0 {
				if o.Err != "" || !o.Started || !strings.Contains(o.Stdout, "ran") {
					t.Fatalf("the degraded run did not go ahead: err %q, started %t, stdout %q", o.Err, o.Started, o.Stdout)
				}
				for _, l := range c.missing {
					if !hasMissing(o.Missing, l) {
						t.Errorf("%s not reported missing: %+v", l, o.Missing)
					}
				}
				// The work folder the run used (on the host when the
				// mount layer failed: made by the init process) is gone.
				if _, rest, ok := strings.Cut(o.Stdout, "tmpdir "); ok {
					work, _, _ := strings.Cut(rest, "\n")
					if _, err := os.Lstat(work); err == nil {
						t.Errorf("the work folder %s is left on the host", work)
					}
				}
				return
			}
			if !o.Isolation || o.Started {
				t.Fatalf("not refused: err %q (ErrIsolation %t), started %t, stdout %q, missing %+v", o.Err, o.Isolation, o.Started, o.Stdout, o.Missing)
			}
			t.Logf("refused: %s", o.Err)
			for _, w := range c.refuse {
				if !strings.Contains(o.Err, w) {
					t.Errorf("the refusal does not say %q: %s", w, o.Err)
				}
			}
			if !strings.Contains(o.Err, "--allow-degraded") {
				t.Errorf("the refusal does not say why --allow-degraded does not apply: %s", o.Err)
			}
			// Paths as the script sees them, not under the host folder
			// the new root is built on (rootBase: /tmp).
			if base := filepath.Dir(grant); strings.Contains(o.Err, "/tmp"+base) {
				t.Errorf("the refusal names a path under the init process's temporary root (/tmp%s): %s", base, o.Err)
			}
		})
	}
}

// TestLayerFaultChild is the helper process of TestIncompleteLayers: it
// installs the case's faults on all its threads and runs the script with
// AllowDegraded, then prints the outcome as JSON.
func TestLayerFaultChild(t *testing.T) {
	spec := os.Getenv(faultChildEnv)
	if spec == "" {
		t.Skip("helper process of TestIncompleteLayers, run by it only")
	}
	parts := strings.SplitN(spec, "|", 3)
	var c *faultCase
	for _, fc := range faultCases(parts[2]) {
		if fc.name == parts[0] {
			c = &fc
		}
	}
	if c == nil {
		fmt.Fprintln(os.Stderr, "unknown case", parts[0])
		os.Exit(1)
	}
	if err := installFaults(c.faults); err != nil {
		fmt.Fprintln(os.Stderr, "seccomp:", err)
		os.Exit(1)
	}
	sb := Sandbox{SkillDir: parts[1], AllowDegraded: true, Timeout: 20 * time.Second}
	if c.grant {
		sb.ReadPaths = []string{parts[2]}
		sb.DenyPaths = []string{filepath.Join(parts[2], "secret")}
		sb.Disable = []Layer{LayerLandlockFS}
	}
	var stdout, stderr bytes.Buffer
	sb.Stdout, sb.Stderr = &stdout, &stderr
	res, err := sb.Run(context.Background(), "cat.sh", []string{parts[2]})
	o := faultOutcome{Isolation: errors.Is(err, ErrIsolation), Stdout: stdout.String() + stderr.String()}
	if err != nil {
		o.Err = err.Error()
	}
	if res != nil {
		res.WaitCleanup()
		o.Started, o.Missing = res.Started, res.Missing
	}
	b, _ := json.Marshal(o)
	fmt.Printf("%s\n", b)
	os.Exit(0)
}

// installFaults loads a seccomp filter failing the faults' calls on every
// thread of this process (TSYNC); the processes it starts inherit it. As
// root CAP_SYS_ADMIN stands in for no_new_privs; any other caller sets it.
func installFaults(faults []fault) error {
	if os.Geteuid() != 0 {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return err
		}
	}
	var prog []unix.SockFilter
	for _, f := range faults {
		ret := seccomp.Stmt(seccomp.BpfReturn, unix.SECCOMP_RET_ERRNO|uint32(f.errno))
		prog = append(prog, seccomp.Stmt(seccomp.BpfLoadWord, 0)) // seccomp_data.nr
		if f.arg < 0 {
			prog = append(prog, seccomp.Jump(seccomp.BpfJumpEq, f.nr, 0, 1), ret)
			continue
		}
		test := uint16(seccomp.BpfJumpEq)
		if f.anyBit {
			test = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		}
		prog = append(prog,
			seccomp.Jump(seccomp.BpfJumpEq, f.nr, 0, 3),
			seccomp.Stmt(seccomp.BpfLoadWord, uint32(16+8*f.arg)), // the argument's low word (little-endian)
			seccomp.Jump(test, f.val, 0, 1),
			ret)
	}
	prog = append(prog, seccomp.Stmt(seccomp.BpfReturn, unix.SECCOMP_RET_ALLOW))
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return errno
	}
	return nil
}
