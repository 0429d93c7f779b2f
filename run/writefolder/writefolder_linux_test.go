package writefolder

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/gvisor"
)

// TestMakeGVisor: for the gvisor backend, which hands nothing over
// id-mapped, a root caller's new folder belongs to the sandbox identity,
// which could not write in a folder of root's.
func TestMakeGVisor(t *testing.T) {
	uid, _ := identity.Sandbox()
	if os.Geteuid() != 0 || uid == 0 {
		t.Skip("the folder is the caller's own unless the caller is root and the sandbox runs as another uid")
	}
	dir := filepath.Join(t.TempDir(), "out")
	if made, err := Make(dir, gvisor.Name); !made || err != nil {
		t.Fatalf("Make: %v, %v", made, err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if owner := st.Sys().(*syscall.Stat_t).Uid; int(owner) != uid {
		t.Errorf("the folder belongs to uid %d, want the sandbox identity %d", owner, uid)
	}
}
