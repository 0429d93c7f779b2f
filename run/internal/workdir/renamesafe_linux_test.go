package workdir

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// TestMakeSharedTMPDIR: a host work folder (KeepWorkDir, or a run
// without a mount namespace) is not made in a TMPDIR another user may
// rename in, and is in one they may not (sticky, or private).
func TestMakeSharedTMPDIR(t *testing.T) {
	base := t.TempDir()
	for _, c := range []struct {
		name string
		mode os.FileMode
		ok   bool
	}{
		{"0777 without sticky", 0o777, false},
		{"group-writable without sticky", 0o770, false},
		{"sticky 1777", 0o777 | os.ModeSticky, true},
		{"private 0700", 0o700, true},
	} {
		dir := filepath.Join(base, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		// os.Chmod drops the sticky bit unless it is given as
		// ModeSticky, which it is here.
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TMPDIR", dir)
		work, err := Make(os.Getuid(), os.Getgid())
		if (err == nil) != c.ok {
			t.Errorf("%s: Make = %q, %v; want ok %v", c.name, work, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "another user may rename") {
			t.Errorf("%s: %v, want the reason", c.name, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != map[bool]int{true: 1, false: 0}[c.ok] {
			t.Errorf("%s: %d entries in TMPDIR after Make", c.name, len(ents))
		}
		if work != "" {
			os.Remove(work)
		}
	}
}

// TestRenameSafeUnmappedOwner: in a user namespace that does not map
// the host's root (a container's), "/" and /tmp show as owned by the
// overflow uid; RenameSafe takes that owner for the host, not for
// another user of the namespace, so a host work folder can still be
// made there, while a folder of the namespace's own users that others
// may write stays refused. The child is this test binary, copied where
// uid 65534 may run it, in a user namespace mapping only its uid 0 (to
// host uid 65534).
func TestRenameSafeUnmappedOwner(t *testing.T) {
	if os.Getenv("WORKDIR_UNMAPPED_CHILD") == "1" {
		unmappedChild()
		return
	}
	if identity.UnmappedOwner() != -1 {
		t.Skip("already in a user namespace that leaves the overflow uid unmapped")
	}
	if os.Geteuid() != 0 && os.Geteuid() != 65534 {
		t.Skipf("needs root or uid 65534 (the child's host uid), not %d", os.Geteuid())
	}
	bin := copyTestBinary(t)
	cmd := exec.Command(bin, "-test.run=^TestRenameSafeUnmappedOwner$")
	cmd.Env = append(os.Environ(), "WORKDIR_UNMAPPED_CHILD=1")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0},
	}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "unmapped=") {
		t.Skipf("cannot start a child in a new user namespace here: %v: %s", err, out)
	}
	got := string(out)
	for _, want := range []string{"unmapped=65534", "tmp=ok", "open=refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("child says %q, want %q", got, want)
		}
	}
}

// unmappedChild reports, inside the namespace, the unmapped owner and
// whether /tmp and a 0777 folder of its own pass RenameSafe.
func unmappedChild() {
	fmt.Printf("unmapped=%d\n", identity.UnmappedOwner())
	if err := RenameSafe("/tmp", 0); err != nil {
		fmt.Printf("tmp=refused: %v\n", err)
	} else {
		fmt.Println("tmp=ok")
	}
	open := filepath.Join(os.Getenv("WORKDIR_OPEN"), "open")
	if err := RenameSafe(open, 0); err != nil {
		fmt.Println("open=refused")
	} else {
		fmt.Println("open=ok")
	}
}

// copyTestBinary copies this test binary into a folder uid 65534 may
// enter, and makes there a folder "open" of uid 65534's, mode 0777
// without the sticky bit (WORKDIR_OPEN).
func copyTestBinary(t *testing.T) string {
	dir, err := os.MkdirTemp("", "workdir-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	bin := filepath.Join(dir, "workdir.test")
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(open, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("WORKDIR_OPEN", dir)
	return bin
}
