package tempmode

import (
	"os"
	"testing"
)

func TestGuard(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	if code := Guard(func() int { return 0 }); code != 0 {
		t.Errorf("unchanged: exit %d, want 0", code)
	}
	if code := Guard(func() int { return 3 }); code != 3 {
		t.Errorf("unchanged, failing: exit %d, want 3", code)
	}
	if code := Guard(func() int { os.Chmod(dir, 0o755); return 0 }); code != 1 {
		t.Errorf("changed: exit %d, want 1", code)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("the mode was not put back: %v %v", st.Mode(), err)
	}
}
