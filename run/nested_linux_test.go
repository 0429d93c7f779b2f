package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// nestedEnv tells a re-run of TestNestedUserNamespace that it runs inside
// the namespaces the test made, and what it must see there: "refused",
// or "runs:" and the id of the test's namespace that the script's uid 0
// must map to.
const nestedEnv = "SKILL_SANDBOX_TEST_NESTED"

// procSuffix ends nestedEnv's value when the re-run is PID 1 of a new PID
// namespace under the old /proc: it mounts its own after the first run.
const procSuffix = "+proc"

// maskSuffix ends nestedEnv's value when the re-run masks part of /proc
// first, as a container does.
const maskSuffix = "+mask"

// noatimeSuffix ends nestedEnv's value when the re-run remounts /proc
// noatime first.
const noatimeSuffix = "+noatime"

// TestNestedUserNamespace runs the sandbox from inside a user and mount
// namespace that the test makes, as a rootless container, a pod with
// hostUsers: false, a sandboxed CI runner or unshare -rm would. Where
// the namespace maps only the caller's own id (unshare -r) an
// unprivileged caller's run must work with every layer, as the same
// caller's outside; a host root caller's is refused, naming userns and
// why (its uid 0 would stay host root), unless AllowDegraded. Where it
// also maps nobody (root only: a range, as a container's subuids) the
// run works as nobody with every layer; in the initial user namespace a
// root caller's run has an id of its own.
func TestNestedUserNamespace(t *testing.T) {
	if want := os.Getenv(nestedEnv); want != "" {
		checkNestedRun(t, want)
		return
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	if degradedRerun() {
		t.Skip("this re-run forbids user namespaces")
	}
	uid, gid := os.Geteuid(), os.Getegid()
	own := func(id int) []syscall.SysProcIDMap {
		return []syscall.SysProcIDMap{{ContainerID: 0, HostID: id, Size: 1}}
	}
	ownWant := "runs:0"
	if uid == 0 {
		ownWant = "refused"
	}
	cases := []struct {
		name       string
		flags      uintptr
		uids, gids []syscall.SysProcIDMap
		setgroups  bool
		want       string
		rootOnly   bool
	}{
		{"unshare -rm", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, own(uid), own(gid), false, ownWant, false},
		{"unshare -rmp", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID, own(uid), own(gid), false, ownWant + procSuffix, false},
		{"unshare -rm, masked /proc", syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS, own(uid), own(gid), false, ownWant + maskSuffix, false},
		{"root and nobody mapped",
			syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
			[]syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: nobodyUID, HostID: nobodyUID, Size: 1}},
			[]syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}, {ContainerID: nobodyUID, HostID: nobodyUID, Size: 1}},
			true, "runs:" + strconv.Itoa(nobodyUID), true},
		// In the initial user namespace a root caller's run has a
		// host id of its own ("own").
		{"host /proc noatime", syscall.CLONE_NEWNS, nil, nil, false, "runs:own" + noatimeSuffix, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.rootOnly && uid != 0 {
				t.Skip("mapping ids other than one's own needs root")
			}
			out, err := rerunSuite("^TestNestedUserNamespace$", []string{nestedEnv + "=" + c.want}, &syscall.SysProcAttr{
				Cloneflags:                 c.flags,
				UidMappings:                c.uids,
				GidMappings:                c.gids,
				GidMappingsEnableSetgroups: c.setgroups,
				Pdeathsig:                  syscall.SIGKILL,
			})
			t.Logf("re-run in the namespaces (want %s):\n%s", c.want, out)
			if err != nil && strings.Contains(err.Error(), "fork/exec") {
				t.Skipf("this host refuses the namespaces: %v", err)
			}
			if err != nil {
				t.Fatalf("the re-run failed: %v", err)
			}
			if !strings.Contains(out, "PASS") {
				t.Fatal("the re-run passed no test")
			}
		})
	}
}

// checkNestedRun is the part of TestNestedUserNamespace that runs in the
// namespaces it made.
func checkNestedRun(t *testing.T, want string) {
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"who.py": "print(open('/proc/self/uid_map').read().split()[1])\n"})
	var out bytes.Buffer
	sb := Sandbox{SkillDir: dir, Stdout: &out}
	if want, ok := strings.CutSuffix(want, noatimeSuffix); ok {
		// A /proc mounted noatime (not the usual relatime), in a
		// mount namespace of the host's user namespace: the run's
		// namespace copies it with its atime locked, and the fresh
		// proc must be mounted noatime too.
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			t.Fatal(err)
		}
		var st unix.Statfs_t
		if err := unix.Statfs("/proc", &st); err != nil {
			t.Fatal(err)
		}
		keep := uintptr(st.Flags) & (unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC)
		if err := unix.Mount("", "/proc", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_NOATIME|keep, ""); err != nil {
			t.Fatalf("remounting /proc noatime: %v", err)
		}
		if err := unix.Statfs("/proc", &st); err != nil || st.Flags&unix.ST_NOATIME == 0 {
			t.Fatalf("/proc is not noatime: %v, flags %#x", err, st.Flags)
		}
		checkNestedRun(t, want)
		return
	}
	if want, ok := strings.CutSuffix(want, maskSuffix); ok {
		// A container's /proc, with mounts over parts of it: the
		// sandbox's PID namespace cannot have a proc of its own, and
		// the refusal must say why and how to unmask it.
		masked := ""
		for _, p := range []string{"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sysrq-trigger"} {
			if unix.Mount("/dev/null", p, "", unix.MS_BIND, "") == nil {
				masked = p
				break
			}
		}
		if masked == "" {
			t.Skip("no file of /proc to mask here")
		}
		res, err := sb.Run(context.Background(), "who.py", nil)
		if !errors.Is(err, ErrIsolation) || res.Started || out.Len() > 0 {
			t.Fatalf("ran under a masked /proc: err %v started %v", err, res.Started)
		}
		for _, w := range []string{"mountns", posix.ProcMountDesc, "mounts over " + masked, "unmask"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("refusal %q does not say %q", err, w)
			}
		}
		if err := unix.Unmount(masked, 0); err != nil {
			t.Fatalf("unmasking %s: %v", masked, err)
		}
		checkNestedRun(t, want)
		return
	}
	if want, ok := strings.CutSuffix(want, procSuffix); ok {
		// A new PID namespace under the old /proc: the start must say
		// so, and work once a proc of its own is mounted (unshare
		// --mount-proc).
		res, err := sb.Run(context.Background(), "who.py", nil)
		if res.Started || err == nil || !strings.Contains(err.Error(), "mount a proc for this PID namespace") {
			t.Fatalf("a start under a foreign /proc: err %v started %v, want the cause named", err, res.Started)
		}
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			t.Fatalf("mounting a proc for the PID namespace: %v", err)
		}
		checkNestedRun(t, want)
		return
	}
	res, err := sb.Run(context.Background(), "who.py", nil)
	if outside, ok := strings.CutPrefix(want, "runs:"); ok {
		if err != nil {
			t.Fatalf("the run failed in the namespace: %v (missing %+v)", err, res.Missing)
		}
		got := strings.TrimSpace(out.String())
		if id, err := strconv.ParseUint(got, 10, 32); outside == "own" && (err != nil || !identity.IsRunID(uint32(id))) {
			t.Errorf("the script's uid 0 maps to %q here, want an id of %d-%d", got, RunIDFirst, RunIDFirst+RunIDCount-1)
		} else if outside != "own" && got != outside {
			t.Errorf("the script's uid 0 maps to %q here, want %s", got, outside)
		}
		for _, l := range append(backend.NamespaceLayers(false), LayerLandlockFS, LayerSeccomp, LayerCaps, LayerNoNewPrivs) {
			if !stageconfig.Has(res.Applied, l) {
				t.Errorf("%s not applied (missing %+v)", l, res.Missing)
			}
		}
		return
	}
	if !errors.Is(err, ErrIsolation) || res.Started || out.Len() > 0 {
		t.Fatalf("a host root caller ran as host root: err %v started %v stdout %q", err, res.Started, out.String())
	}
	for _, w := range []string{"userns", "uid 65534 is not mapped", "host root", "--allow-degraded"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
	out.Reset()
	sb.AllowDegraded = true
	sb.Warnings = new(bytes.Buffer)
	res, err = sb.Run(context.Background(), "who.py", nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("AllowDegraded: err %v exit %d", err, res.ExitCode)
	}
	if !hasMissing(res.Missing, LayerUserNS) || stageconfig.Has(res.Applied, LayerUserNS) {
		t.Errorf("AllowDegraded: userns not reported missing: applied %v missing %+v", res.Applied, res.Missing)
	}
	for _, l := range []Layer{LayerMountNS, LayerPIDNS, LayerLandlockFS, LayerSeccomp} {
		if !stageconfig.Has(res.Applied, l) {
			t.Errorf("AllowDegraded: %s not applied (missing %+v)", l, res.Missing)
		}
	}
}
