package gvisor

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// TestRunGrantBindsAlone: a mount made below a grant after the run was
// planned (planning refuses a grant that holds one) is not carried into
// the sandbox: the bundle binds a grant alone, not with "rbind". Root
// only: the test mounts a tmpfs.
func TestRunGrantBindsAlone(t *testing.T) {
	path, err := exec.LookPath("runsc")
	if err != nil {
		t.Skip("runsc (gVisor) is not installed: apt-get install runsc")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs below the grant needs root")
	}
	// A folder of the test's own that uid 65534 can enter.
	base, err := os.MkdirTemp("", "gvisor-bind-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p := testSpec(t)
	c := &p.Config
	p.UID, p.GID = 65534, 65534
	p.Timeout = 30 * time.Second
	c.Skill, c.Dir = base, base
	c.Masked, c.ReadOnly = nil, nil
	read := filepath.Join(base, "read")
	inner := filepath.Join(read, "inner")
	for _, d := range []string{read, inner} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(base, 0o755)
	if err := os.WriteFile(filepath.Join(read, "pub.txt"), []byte("pub\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Grants = c.Grants[:1]
	c.Grants[0].Path = read
	if err := syscall.Mount("tmpfs", inner, "tmpfs", 0, "mode=0755"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(inner, syscall.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(inner, "carried.txt"), []byte("carried\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Argv = []string{"/bin/sh", "-c", "cat " + read + "/pub.txt; cat " + inner + "/carried.txt 2>/dev/null; ls " + inner}
	var out, errb bytes.Buffer
	r := &Runtime{Path: path}
	o, err := r.Run(context.Background(), p, &out, &errb, backend.NewWatchdog(), nil, nil)
	if err != nil {
		t.Fatalf("%v (stderr %q)", err, errb.String())
	}
	if !strings.Contains(out.String(), "pub") || strings.Contains(out.String(), "carried") {
		t.Errorf("the grant is not bound alone: stdout %q, stderr %q, outcome %+v", out.String(), errb.String(), o)
	}
}
