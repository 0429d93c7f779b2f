package run

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// TestCheckGrantsCreatesNothing: CheckGrants lists a missing write folder
// as Run would create it, accepts a working directory in it, and leaves
// the host as it was; a grant Run refuses is refused with Run's error.
func TestCheckGrantsCreatesNothing(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "new", "out")
	g, err := (&Sandbox{WritePaths: []string{out}, Cwd: out}).CheckGrants()
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(base)
	want := filepath.Join(real, "new", "out")
	if len(g.Created) != 1 || g.Created[0] != out || len(g.Write) != 1 || g.Write[0] != want || g.Cwd != want {
		t.Errorf("grants %+v, want %s created and granted", g, out)
	}
	if _, err := os.Lstat(filepath.Join(base, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("CheckGrants made %s (%v)", filepath.Join(base, "new"), err)
	}
	for _, c := range []struct {
		name string
		sb   Sandbox
	}{
		{"the whole file system", Sandbox{ReadPaths: []string{"/"}}},
		{"a write folder below a file", Sandbox{WritePaths: []string{filepath.Join(base, "file", "out")}}},
		{"a working directory below a folder to make", Sandbox{WritePaths: []string{out}, Cwd: filepath.Join(out, "sub")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
			_, cerr := c.sb.CheckGrants()
			_, rerr := c.sb.planGrantsNominal("", false)
			if cerr == nil || rerr == nil || cerr.Error() != rerr.Error() {
				t.Errorf("CheckGrants: %v\nRun's check: %v", cerr, rerr)
			}
		})
	}
}

// planGrantsNominal is planGrants for a run as the sandbox identity.
func (s *Sandbox) planGrantsNominal(skill string, dry bool) (*grants.Plan, error) {
	uid, gid := sandboxIdentity()
	return s.planGrants(skill, dry, uid, gid)
}
