//go:build linux || darwin

package grants

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMkdirsFollowsNoSymlink checks that creating a write folder never
// goes through a symlink that takes the place of a folder on the way (a
// script with a write grant above it swapping it between the look and the
// mkdir): the folders are not made in the link's target, and only a folder
// made here is given to the sandbox identity.
func TestMkdirsFollowsNoSymlink(t *testing.T) {
	for _, tc := range []struct {
		name    string
		link    bool // "a" is a symlink to a folder elsewhere
		wantErr bool
	}{
		{"plain", false, false},
		{"a swapped for a symlink", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, elsewhere := t.TempDir(), t.TempDir()
			if tc.link {
				if err := os.Symlink(elsewhere, filepath.Join(base, "a")); err != nil {
					t.Fatal(err)
				}
			}
			a, b := filepath.Join(base, "a"), filepath.Join(base, "a", "b")
			uid, gid := -1, -1
			if os.Geteuid() == 0 {
				uid, gid = 65534, 65534
			}
			made, err := Mkdirs([]string{a, b}, uid, gid)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want an error: %v", err, tc.wantErr)
			}
			if _, serr := os.Lstat(filepath.Join(elsewhere, "b")); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("b was made in the symlink's target (lstat: %v)", serr)
			}
			if tc.wantErr {
				if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
					t.Errorf("err %v, want ELOOP", err)
				}
				if len(made) != 0 {
					t.Errorf("made %v, want nothing", made)
				}
				return
			}
			if len(made) != 2 || made[0] != a || made[1] != b {
				t.Fatalf("made %v, want %v", made, []string{a, b})
			}
			if uid < 0 {
				return
			}
			for p, want := range map[string]int{a: 0, b: uid} {
				st, err := os.Lstat(p)
				if err != nil {
					t.Fatal(err)
				}
				if got := int(st.Sys().(*syscall.Stat_t).Uid); got != want {
					t.Errorf("%s belongs to uid %d, want %d", p, got, want)
				}
			}
		})
	}
}
