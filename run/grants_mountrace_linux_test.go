//go:build amd64 || arm64

package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initplan"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// TestGrantMountedAfterPlanning mounts a tmpfs inside a read grant after
// the grant was planned (CheckSubmounts saw no mount there), as the host
// or a racing process of the caller could before the sandbox binds it:
// the supervisor's clone of the grant must not hold it. It also checks the
// kernel rule the init process's bind relies on where there is no clone
// (an unprivileged caller): in a user namespace a bind without MS_REC of a
// folder holding such a mount fails (EINVAL), while a recursive one
// brings it in.
func TestGrantMountedAfterPlanning(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the mount made in the window is the host's (or a privileged process's): needs root")
	}
	base := grantTree(t)
	grant := filepath.Join(base, "data")
	sub := filepath.Join(grant, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	gp, err := (&Sandbox{ReadPaths: []string{grant}}).planGrantsNominal("", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Mounts) != 1 || gp.Mounts[0].Held != 0 {
		t.Fatalf("planned mounts %+v, want one grant without submounts", gp.Mounts)
	}
	// The window: a mount inside the grant after its check.
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(sub, unix.MNT_DETACH) })

	cfg := &stageconfig.Config{Grants: gp.Mounts}
	files, err := handOverTrees(t, cfg)
	switch {
	case err != nil:
		t.Errorf("handOver: %v", err)
	case len(files) == 0:
		t.Log("no clone of the grant here (no open_tree): the init process binds it")
	case fsType(t, int(files[0].Fd()), "sub") == unix.TMPFS_MAGIC:
		t.Error("the supervisor's clone of the grant holds the tmpfs mounted inside it after planning")
	}

	// The init process's bind, by util-linux in a user and mount
	// namespace of its own.
	for _, tool := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (util-linux)", tool)
		}
	}
	dst := filepath.Join(base, "dst")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	bind := func(flag string) (string, error) {
		out, err := exec.Command("unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
			`mount `+flag+` "$1" "$2" && stat -f -c %T "$2/sub"`, "sh", grant, dst).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	// mount(8) words EINVAL "wrong fs type, bad option, ...".
	if out, err := bind("--bind"); err == nil || !strings.Contains(out, "nvalid argument") && !strings.Contains(out, "wrong fs type") {
		t.Errorf("a bind without MS_REC of the grant holding a locked mount: %v %q, want EINVAL", err, out)
	}
	if out, err := bind("--rbind"); err != nil || out != "tmpfs" {
		t.Errorf("the recursive bind (what the init process did before): %v %q, want the tmpfs to come along", err, out)
	}
}

// belowChildEnv, in the environment of this test binary, makes
// TestGrantBindChild the helper process of bindInUserNS.
const belowChildEnv = "SKILL_SANDBOX_BELOW_CHILD"

// TestGrantWithSubmountMountedAfterPlanning is TestGrantMountedAfterPlanning
// for a grant that held a mount at planning (a deny entry, masked): a
// grant bound recursively for that carried in, unchecked, a mount made
// below it after planning. The supervisor's clone now holds the grant
// alone and the planned mount, checked to be the same mount, beside it;
// the init process's recursive bind in a user namespace (where a bind
// alone is refused) is refused unless it holds exactly the mounts planning
// counted; and a planned mount replaced since is refused by both.
func TestGrantWithSubmountMountedAfterPlanning(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the mounts in the caller's namespace are the host's (or a privileged process's): needs root; an unprivileged caller can mount only in a user namespace of its own, which the sandbox never sees")
	}
	base := grantTree(t)
	grant := filepath.Join(base, "data")
	keys := filepath.Join(grant, "keys")
	mountIn(t, keys, "") // planned: a mount at a deny entry
	if err := os.WriteFile(filepath.Join(keys, "key.pem"), []byte("KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(grant, "late")
	gp, err := (&Sandbox{ReadPaths: []string{grant}, DenyPaths: []string{keys}}).planGrantsNominal("", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Mounts) != 1 || gp.Mounts[0].Held != 1 || len(gp.Mounts[0].Below) != 1 || gp.Mounts[0].Below[0].Path != keys {
		t.Fatalf("planned mounts %+v, want one grant holding %s", gp.Mounts, keys)
	}
	masks, err := grants.MaskMounts(gp.Grants.Masked)
	if err != nil {
		t.Fatal(err)
	}
	// The window: a mount inside the grant after its check.
	mountIn(t, late, "")
	if err := os.WriteFile(filepath.Join(late, "planted"), []byte("PLANTED"), 0o644); err != nil {
		t.Fatal(err)
	}
	config := func() *stageconfig.Config {
		g := gp.Mounts[0]
		g.Below = slices.Clone(g.Below)
		return &stageconfig.Config{Grants: []stageconfig.GrantMount{g}, Masked: masks}
	}

	t.Run("supervisor's clone", func(t *testing.T) {
		cfg := config()
		files, err := handOverTrees(t, cfg)
		switch {
		case err != nil:
			t.Fatalf("handOver: %v", err)
		case len(files) == 0:
			t.Skip("no clone of the grant here (no open_tree): the init process binds it")
		case len(files) != 2 || cfg.Grants[0].Below[0].Tree == 0:
			t.Fatalf("%d trees handed over (%+v), want the grant's and the planned mount's", len(files), cfg.Grants[0])
		}
		if fsType(t, int(files[0].Fd()), "late") == unix.TMPFS_MAGIC {
			t.Error("the supervisor's clone of the grant holds the tmpfs mounted inside it after planning")
		}
		if fsType(t, int(files[1].Fd()), ".") != unix.TMPFS_MAGIC {
			t.Error("the clone of the planned mount is not the tmpfs planned")
		}
	})
	t.Run("init process's bind", func(t *testing.T) {
		if out := bindInUserNS(t, config()); !strings.Contains(out, "holds other mounts than the 1 planning saw") {
			t.Errorf("the recursive bind holding a mount made after planning: %q, want it refused", out)
		}
	})
	// Without the late mount the same plan runs: the check counts, it does
	// not refuse every grant holding mounts.
	if err := unix.Unmount(late, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	t.Run("nothing mounted since", func(t *testing.T) {
		if out := bindInUserNS(t, config()); out != "ok" {
			t.Errorf("the grant with only its planned mount: %q, want ok", out)
		}
	})
	// The planned mount replaced by another: a fresh tmpfs in its place
	// (which gets the device number, root inode and mountinfo id of the
	// one unmounted), then a bind of another folder.
	if err := unix.Unmount(keys, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	mountIn(t, keys, "")
	t.Run("planned mount replaced by a tmpfs", func(t *testing.T) {
		if !gp.Mounts[0].Below[0].Unique {
			t.Skip("no unique mount ids (statx STATX_MNT_ID_UNIQUE, Linux 6.8): a fresh tmpfs looks like the one it replaced")
		}
		_, err := handOverTrees(t, config())
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "changed since the run was planned") {
			t.Errorf("handOver of a replaced planned mount: %v, want it refused", err)
		}
	})
	if err := unix.Unmount(keys, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	mountIn(t, keys, filepath.Join(base, "home", "alice", "docs"))
	t.Run("planned mount replaced by a bind", func(t *testing.T) {
		_, err := handOverTrees(t, config())
		if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), "changed since the run was planned") {
			t.Errorf("handOver of a replaced planned mount: %v, want it refused", err)
		}
		// The init process's bind: the count holds, the mask's check of
		// the entry refuses it.
		if out := bindInUserNS(t, config()); !strings.Contains(out, "changed between its check and its mount") {
			t.Errorf("the init process's bind of a replaced planned mount: %q, want it refused", out)
		}
	})
}

// handOverTrees hands cfg's grants (and, with skillToo, the skill folder)
// over to uid 65534 (grants.HandOver), closing the trees at the end of the test.
func handOverTrees(t *testing.T, cfg *stageconfig.Config, skillToo ...bool) ([]*os.File, error) {
	files, err := grants.HandOver(65534, 65534, cfg, len(skillToo) > 0 && skillToo[0])
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	return files, err
}

// fsType returns the file system type of name below the folder open on dir.
func fsType(t *testing.T, dir int, name string) int64 {
	t.Helper()
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("%s in the clone: %v", name, err)
	}
	defer unix.Close(fd)
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		t.Fatal(err)
	}
	return fs.Type
}

// bindInUserNS runs the init process's mount steps for cfg's grants and
// the skill folder (skill, or a new one) with no trees, as for an
// unprivileged caller, in a helper process in a user and mount namespace
// of its own, where the host's mounts are locked, and returns "ok" or the
// refusal.
func bindInUserNS(t *testing.T, cfg *stageconfig.Config, skill ...string) string {
	t.Helper()
	cfg.Argv = []string{"/bin/true"}
	if len(skill) > 0 {
		cfg.Skill = skill[0]
	} else {
		cfg.Skill = newSkill(t, map[string]string{"true.sh": "#!/bin/true\n"})
	}
	cfg.WorkDir = t.TempDir()
	cfg.WorkDirMB = DefaultWorkDirMB
	cfg.Namespaces = []Layer{LayerUserNS, LayerPIDNS, LayerMountNS}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ := runNSHelper(t, "TestGrantBindChild", belowChildEnv+"="+path)
	return strings.TrimSpace(out.String())
}

// TestGrantBindChild is not a test: it is the helper process of
// bindInUserNS, and skips unless started as one.
func TestGrantBindChild(t *testing.T) {
	path := os.Getenv(belowChildEnv)
	if path == "" {
		t.Skip("helper process of bindInUserNS, run by it only")
	}
	var cfg stageconfig.Config
	js, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(js, &cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.LockOSThread()
	if err := initplan.SetupMounts(&cfg); err != nil {
		fmt.Println("refused:", err)
	} else {
		fmt.Println("ok")
	}
	os.Exit(0)
}

// TestSkillFolderMounts: the skill folder is bound into the sandbox as a
// grant is. One holding another mount is refused when the run is planned,
// naming it: bound recursively it came along (id-mapped for a root
// caller, and writable, since the skill folder is made read-only by one
// remount of its own mount). A mount made below it after planning stays
// out of the supervisor's clone, and fails the init process's bind.
func TestSkillFolderMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the mounts in the caller's namespace are the host's (or a privileged process's): needs root; an unprivileged caller can mount only in a user namespace of its own, which the sandbox never sees")
	}
	needTool(t, "python3")
	dir := newSkill(t, map[string]string{"read.py": readProbe})
	sub := filepath.Join(dir, "data")
	mountIn(t, sub, "")
	if err := os.WriteFile(filepath.Join(sub, "in.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := runIn(t, Sandbox{}, dir, "read.py", filepath.Join(sub, "in.txt"))
	if !errors.Is(o.err, ErrBadConfig) || !strings.Contains(o.err.Error(), "the skill folder") || !strings.Contains(o.err.Error(), sub) {
		t.Errorf("a skill folder holding a mount: err %v stdout %q, want it refused naming %s", o.err, o.stdout, sub)
	}
	// Without grants and with one (each reads the mount table its way).
	for _, read := range [][]string{nil, {"/usr/share"}} {
		if _, err := (&Sandbox{SkillDir: dir, ReadPaths: read}).CheckGrants(); !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), sub) {
			t.Errorf("CheckGrants with --read %q: %v, want the same refusal", read, err)
		}
	}

	// The same mount made after planning (planning is done: the
	// supervisor's clone and the init process's bind are what is left).
	t.Run("mounted after planning", func(t *testing.T) {
		files, err := handOverTrees(t, &stageconfig.Config{Skill: dir}, true)
		switch {
		case err != nil:
			t.Errorf("handOver: %v", err)
		case len(files) == 0:
			t.Log("no clone of the skill folder here (no open_tree): the init process binds it")
		case fsType(t, int(files[0].Fd()), "data") == unix.TMPFS_MAGIC:
			t.Error("the supervisor's clone of the skill folder holds the tmpfs mounted inside it")
		}
		out := bindInUserNS(t, &stageconfig.Config{}, dir)
		if !strings.Contains(out, "skill folder") || !strings.Contains(out, "invalid argument") {
			t.Errorf("the init process's bind of a skill folder holding a mount: %q, want it refused (EINVAL)", out)
		}
	})
}

// TestPlannedSubmountPropagatesNothing: a mount below a grant that
// planning saw is cloned and attached on its own (attachBelow), then
// masked. On a shared host mount (systemd makes "/" shared) the clone is
// a peer of the host's mount until made private, and the mask on it
// would appear on the host and outlive the run. A full run as root: the
// host's mount table below the grant is the same afterwards.
func TestPlannedSubmountPropagatesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root caller hands grants over, and the test mounts a shared tmpfs on the host")
	}
	needTool(t, "sh")
	base := sharedTmpfs(t)
	data := filepath.Join(base, "data")
	keys := filepath.Join(data, "keys")
	mountIn(t, keys, "") // shared, as a mount below a shared one is
	os.WriteFile(filepath.Join(keys, "key"), []byte("k"), 0o644)
	os.WriteFile(filepath.Join(data, "file"), []byte("visible\n"), 0o644)
	below := func() []string {
		info, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, line := range strings.Split(string(info), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], base+"/") {
				out = append(out, f[4])
			}
		}
		return out
	}
	before := below()
	dir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\ncat \"$1\"; cat \"$2\" 2>/dev/null || echo hidden\n"})
	o := runIn(t, Sandbox{ReadPaths: []string{data}, DenyPaths: []string{keys}}, dir, "cat.sh", filepath.Join(data, "file"), filepath.Join(keys, "key"))
	if o.err != nil || o.res.ExitCode != 0 || o.stdout != "visible\nhidden\n" {
		t.Fatalf("err %v exit %d stdout %q stderr %s", o.err, o.res.ExitCode, o.stdout, o.stderr)
	}
	if after := below(); !slices.Equal(before, after) {
		t.Errorf("mounts below the grant on the host: %q before the run, %q after", before, after)
	}
	if b, err := os.ReadFile(filepath.Join(keys, "key")); err != nil || string(b) != "k" {
		t.Errorf("the host lost its own file: %q %v", b, err)
	}
}
