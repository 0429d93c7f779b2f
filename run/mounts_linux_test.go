//go:build amd64 || arm64

package run

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// mountChildEnv, in the environment of this test binary, makes
// TestMountSetupChild the helper process of mountSetupOnce.
const mountChildEnv = "SKILL_SANDBOX_MOUNT_CHILD"

// mountSetup is what one helper process measured.
type mountSetup struct {
	took   time.Duration // setupMounts alone
	mounts int           // lines of /proc/self/mountinfo afterwards
	extra  []string      // extra top-level folders still visible afterwards
	root   string        // what creating a file in "/" did ("ok" or the error)
}

// mountSetupOnce runs setupMounts in a helper process (this test binary,
// TestMountSetupChild) cloned into a user, mount and PID namespace, on a
// fake host root: a tmpfs holding bind mounts of every entry of the real
// "/" plus extra empty folders, so that the number of top-level folders
// can grow without touching the host's own "/". With noSetattr,
// mount_setattr(2) fails with ENOSYS in the helper, as before Linux 5.12.
// It skips the test when user namespaces are unavailable.
func mountSetupOnce(tb testing.TB, base string, extra int, noSetattr bool) mountSetup {
	tb.Helper()
	skill := newSkill(tb, map[string]string{"true.sh": "#!/bin/true\n"})
	work, err := os.MkdirTemp("", "skill-sandbox-work-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(work) })
	out, errb := runNSHelper(tb, "TestMountSetupChild", fmt.Sprintf("%s=%s:%d:%t:%s:%s", mountChildEnv, base, extra, noSetattr, skill, work))
	var m mountSetup
	var ns int64
	var extraSeen string
	if _, err := fmt.Sscanf(out.String(), "took=%d mounts=%d root=%q extra=%q", &ns, &m.mounts, &m.root, &extraSeen); err != nil {
		tb.Fatalf("mount helper output %q: %v (stderr %s)", out.String(), err, errb.String())
	}
	m.took = time.Duration(ns)
	if extraSeen != "" {
		m.extra = strings.Split(extraSeen, ",")
	}
	return m
}

// runNSHelper runs the test named child of this binary as a helper
// process, with env added to its environment, cloned into a user, mount
// and PID namespace, and returns its output. It skips the test when user
// namespaces are unavailable and fails it when the helper fails.
func runNSHelper(tb testing.TB, child, env string) (stdout, stderr *bytes.Buffer) {
	tb.Helper()
	cmd := exec.Command("/proc/self/exe", "-test.run", "^"+child+"$", "-test.count", "1")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		Pdeathsig:   syscall.SIGKILL,
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if cmd.ProcessState == nil {
			tb.Skipf("cannot start a helper in a user namespace here: %v", err)
		}
		tb.Fatalf("%s: %v\nstdout: %s\nstderr: %s", child, err, out.String(), errb.String())
	}
	return &out, &errb
}

// extraTopName is the name of the i-th extra top-level folder of the fake
// host root.
func extraTopName(i int) string { return "skill-sandbox-extra-" + strconv.Itoa(i) }

// TestMountSetupChild is not a test: it is the helper process of
// mountSetupOnce, and skips unless started as one.
func TestMountSetupChild(t *testing.T) {
	spec := os.Getenv(mountChildEnv)
	if spec == "" {
		t.Skip("helper process of mountSetupOnce, run by it only")
	}
	parts := strings.SplitN(spec, ":", 5)
	extra, _ := strconv.Atoi(parts[1])
	runtime.LockOSThread() // setupMounts runs on this thread, which noSetattr filters
	if err := fakeHostRoot(parts[0], extra); err != nil {
		fmt.Fprintln(os.Stderr, "fake host root:", err)
		os.Exit(1)
	}
	// The host's root file system outlives a real sandbox's detach of it;
	// without this reference the fake root's tmpfs, and its extra
	// folders, would be freed inside the timed setupMounts.
	keep, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open /:", err)
		os.Exit(1)
	}
	defer unix.Close(keep)
	cfg := &stageconfig.Config{
		Argv: []string{"/bin/true"}, Skill: parts[3], WorkDir: parts[4], WorkDirMB: DefaultWorkDirMB,
		Namespaces: []Layer{LayerUserNS, LayerPIDNS, LayerMountNS, LayerIPCNS, LayerUTSNS, LayerNetNS},
	}
	if parts[2] == "true" {
		if err := denyMountSetattr(); err != nil {
			fmt.Fprintln(os.Stderr, "seccomp:", err)
			os.Exit(1)
		}
	}
	t0 := time.Now()
	err = initplan.SetupMounts(cfg)
	took := time.Since(t0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "setupMounts:", err)
		os.Exit(1)
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	root := "ok"
	if err := os.WriteFile("/planted", nil, 0o644); err != nil {
		root = err.Error()
	}
	var seen []string
	for i := 0; i < extra; i++ {
		if _, err := os.Lstat("/" + extraTopName(i)); err == nil {
			seen = append(seen, extraTopName(i))
		}
	}
	fmt.Printf("took=%d mounts=%d root=%q extra=%q\n", took.Nanoseconds(), bytes.Count(mi, []byte("\n")), root, strings.Join(seen, ","))
	os.Exit(0)
}

// denyMountSetattr makes mount_setattr(2) fail with ENOSYS on this
// thread, as on kernels before 5.12, so that readOnlyTree falls back to
// remounting. The calling thread has CAP_SYS_ADMIN in its user namespace,
// which seccomp accepts instead of no_new_privs.
func denyMountSetattr() error {
	prog := []unix.SockFilter{
		seccomp.Stmt(seccomp.BpfLoadWord, 0), // seccomp_data.nr
		seccomp.Jump(seccomp.BpfJumpEq, unix.SYS_MOUNT_SETATTR, 0, 1),
		seccomp.Stmt(seccomp.BpfReturn, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS)),
		seccomp.Stmt(seccomp.BpfReturn, unix.SECCOMP_RET_ALLOW),
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	return unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)), 0, 0)
}

// fakeHostRoot makes a tmpfs mounted on base the root of this mount
// namespace, holding a bind mount (or a copy of the symlink) of every
// entry of the real "/" and extra empty folders.
func fakeHostRoot(base string, extra int) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", base, "tmpfs", 0, "mode=0755"); err != nil {
		return err
	}
	ents, err := os.ReadDir("/")
	if err != nil {
		return err
	}
	for _, e := range ents {
		src, dst := "/"+e.Name(), filepath.Join(base, e.Name())
		switch {
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
		case e.IsDir():
			if err := os.Mkdir(dst, 0o755); err != nil {
				return err
			}
			if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("bind %s: %v", src, err)
			}
		case e.Type().IsRegular():
			if err := os.WriteFile(dst, nil, 0o644); err != nil {
				return err
			}
			if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("bind %s: %v", src, err)
			}
		}
	}
	for i := 0; i < extra; i++ {
		if err := os.Mkdir(filepath.Join(base, extraTopName(i)), 0o755); err != nil {
			return err
		}
	}
	old := filepath.Join(base, ".old")
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(base, old); err != nil {
		return fmt.Errorf("pivot_root: %v", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount("/.old", unix.MNT_DETACH); err != nil {
		return err
	}
	return os.Remove("/.old")
}

// TestRootIndependentOfHostFolders checks that the sandbox's root does not
// grow with the host's: 40 more top-level folders on the (fake) host root
// add no mount and none of them is visible, and the root is read-only,
// also where mount_setattr(2) is missing.
func TestRootIndependentOfHostFolders(t *testing.T) {
	if degradedRerun() {
		t.Skip("needs user namespaces")
	}
	few := mountSetupOnce(t, t.TempDir(), 0, false)
	many := mountSetupOnce(t, t.TempDir(), 40, false)
	old := mountSetupOnce(t, t.TempDir(), 0, true)
	if few.mounts != many.mounts {
		t.Errorf("mounts: %d with the host's top-level folders, %d with 40 more; want equal", few.mounts, many.mounts)
	}
	if len(many.extra) > 0 {
		t.Errorf("extra host folders visible in the sandbox: %v", many.extra)
	}
	for _, m := range []mountSetup{few, many, old} {
		if m.root == "ok" {
			t.Errorf("creating /planted in the sandbox's root worked; want a read-only root")
		}
	}
}

// BenchmarkMountSetup times setupMounts alone (median, in µs) with the
// host's own top-level folders and with 100 and 400 more on a fake host
// root, and reports the number of mounts it leaves.
func BenchmarkMountSetup(b *testing.B) {
	for _, extra := range []int{0, 100, 400} {
		b.Run("extra="+strconv.Itoa(extra), func(b *testing.B) {
			var took []time.Duration
			var mounts int
			for i := 0; i < b.N; i++ {
				m := mountSetupOnce(b, b.TempDir(), extra, false)
				took, mounts = append(took, m.took), m.mounts
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/float64(time.Microsecond), "setup-µs")
			b.ReportMetric(float64(mounts), "mounts")
		})
	}
}

// rootScript reports, inside the sandbox, which of the host's top-level
// names (arguments after the first three) exist, what a read grant holds
// (argv[1]), whether a write grant takes a file (argv[2]) and whether
// argv[3], a sibling of the grants, exists; then whether "/" takes a new
// file or folder, and the mount points of /proc/self/mountinfo.
const rootScript = `import errno, os, sys
def err(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
for name in sys.argv[4:]:
    if os.path.lexists("/" + name):
        print("EXISTS " + name)
print("READ " + open(sys.argv[1]).read().strip())
print("WRITE " + err(lambda: open(os.path.join(sys.argv[2], "out.txt"), "w").write("written")))
print("SIBLING " + str(os.path.lexists(sys.argv[3])))
print("CREATE " + err(lambda: open("/planted", "w")))
print("MKDIR " + err(lambda: os.mkdir("/planted-dir")))
for line in open("/proc/self/mountinfo"):
    print("MOUNT " + line.split()[4])
`

// TestSandboxRoot checks the root the mount namespace builds: none of the
// host's top-level folders or files but the system folders, /etc, /dev,
// /proc, /tmp and the parents of the skill, work and grant paths; grants
// under a folder that is not bound in (here /var/tmp/...) at their own
// paths, their siblings absent; "/" read-only; and a mount table that
// lists only the sandbox's mounts. With Landlock disabled the root must
// still refuse new files (EROFS): that is the mount layer's doing.
func TestSandboxRoot(t *testing.T) {
	needTool(t, "python3")
	if degradedRerun() {
		t.Skip("needs the mount namespace")
	}
	if st, err := os.Stat("/var/tmp"); err != nil || !st.IsDir() {
		t.Skip("needs /var/tmp for grants outside the folders bound in")
	}
	base, err := os.MkdirTemp("/var/tmp", "skill-sandbox-root-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	data, out, other := filepath.Join(base, "data"), worldDir(t, filepath.Join(base, "out")), filepath.Join(base, "other")
	for _, d := range []string{data, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "in.txt"), []byte("granted data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "tmp", "var"}
	args := []string{filepath.Join(data, "in.txt"), out, other}
	hidden := 0
	for _, e := range ents {
		args = append(args, e.Name())
		if !slices.Contains(allowed, e.Name()) {
			hidden++
		}
	}
	if hidden == 0 {
		t.Skip("the host's / holds nothing the sandbox should hide")
	}
	dir := newSkill(t, map[string]string{"root.py": rootScript})
	for _, tc := range []struct {
		name    string
		disable []Layer
		create  string // want, for a new file and folder in "/"
	}{
		{"full sandbox", nil, ""},
		{"mount namespace alone", []Layer{LayerLandlockFS}, "EROFS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(filepath.Join(out, "out.txt"))
			sb := Sandbox{ReadPaths: []string{data}, WritePaths: []string{out}, Disable: tc.disable}
			o := runIn(t, sb, dir, "root.py", args...)
			if o.err != nil || o.res.ExitCode != 0 {
				t.Fatalf("err %v exit %d stderr %s", o.err, o.res.ExitCode, o.stderr)
			}
			lines := strings.Split(o.stdout, "\n")
			for _, l := range lines {
				if name, ok := strings.CutPrefix(l, "EXISTS "); ok && !slices.Contains(allowed, name) {
					t.Errorf("the host's /%s is visible in the sandbox", name)
				}
				if mp, ok := strings.CutPrefix(l, "MOUNT "); ok && mp != "/" && !initplan.Under(mp, []string{"/usr", "/etc", "/var/cache/fontconfig", "/dev", "/proc", "/tmp", data, out}) {
					t.Errorf("mount table lists %s, not a mount of the sandbox", mp)
				}
			}
			for _, want := range []string{"READ granted data", "WRITE ok", "SIBLING False"} {
				if !slices.Contains(lines, want) {
					t.Errorf("missing %q in:\n%s", want, o.stdout)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(out, "out.txt")); string(b) != "written" {
				t.Errorf("write grant: host file holds %q", b)
			}
			for _, op := range []string{"CREATE", "MKDIR"} {
				got := ""
				for _, l := range lines {
					if v, ok := strings.CutPrefix(l, op+" "); ok {
						got = v
					}
				}
				if got == "ok" || got == "" || (tc.create != "" && got != tc.create) {
					t.Errorf("%s in /: %q, want it refused (%s)", op, got, tc.create)
				}
			}
		})
	}
}
