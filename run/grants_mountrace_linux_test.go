//go:build amd64 || arm64

package run

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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
	if len(gp.Mounts) != 1 || gp.Mounts[0].Submounts {
		t.Fatalf("planned mounts %+v, want one grant without submounts", gp.Mounts)
	}
	// The window: a mount inside the grant after its check.
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=64k"); err != nil {
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(sub, unix.MNT_DETACH) })

	cfg := &stageconfig.Config{Grants: gp.Mounts}
	files, err := handOver(65534, 65534, cfg, false)
	for _, f := range files {
		defer f.Close()
	}
	switch {
	case err != nil:
		t.Errorf("handOver: %v", err)
	case len(files) == 0:
		t.Log("no clone of the grant here (no open_tree): the init process binds it")
	default:
		fd, err := unix.Openat(int(files[0].Fd()), "sub", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("sub in the clone: %v", err)
		}
		defer unix.Close(fd)
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil {
			t.Fatal(err)
		}
		if fs.Type == unix.TMPFS_MAGIC {
			t.Error("the supervisor's clone of the grant holds the tmpfs mounted inside it after planning")
		}
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
