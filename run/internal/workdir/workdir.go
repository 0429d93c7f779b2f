package workdir

import (
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/internal/random"
	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// Make creates the per-run work folder, private to the sandbox
// identity, in a HostTemp no other user can rename in (RenameSafe): the
// folder is named by its path for the run's life (the watch walks it,
// the artifacts are listed and swept in it, it is removed after).
func Make(uid, gid int) (string, error) {
	tmp := HostTemp()
	if err := RenameSafe(tmp, os.Geteuid()); err != nil {
		return "", fmt.Errorf("work folder: %w", err)
	}
	dir, err := os.MkdirTemp(tmp, "skill-sandbox-run-")
	if err != nil {
		return "", fmt.Errorf("work folder: %w", err)
	}
	if uid != os.Getuid() || gid != os.Getgid() {
		if err := os.Chown(dir, uid, gid); err != nil {
			os.Remove(dir)
			return "", fmt.Errorf("work folder: %w", err)
		}
	}
	return dir, nil
}

// NewName returns a fresh name for a work folder in the temporary
// folder, as Make's, without making it.
func NewName() (string, error) {
	tmp := HostTemp()
	var b [8]byte
	if err := random.Read(b[:]); err != nil {
		return "", fmt.Errorf("work folder: %w", err)
	}
	return filepath.Join(tmp, "skill-sandbox-run-"+hex.EncodeToString(b[:])), nil
}

// HostTemp is the folder Run makes its work folders in: $TMPDIR
// (os.TempDir) with symlinks resolved, since the init process mounts over
// and grants access to the exact path, or /tmp when $TMPDIR lies in a
// tree of which the sandbox has its own copy (TMPDIR=/dev/shm,
// /run/user/UID: see grants.NeverGranted), where the path would not exist for
// the script and every run would be refused.
func HostTemp() string {
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	for _, n := range grants.NeverGranted() {
		if (tmp == n || grants.PathUnder(tmp, n)) && TmpIsFolder() {
			return "/tmp"
		}
	}
	return tmp
}

// TmpIsFolder reports whether /tmp is a folder, where the init process
// builds the sandbox's root (initplan's rootBase); without it the root is
// built on the work folder, which must then exist on the host.
func TmpIsFolder() bool {
	st, err := os.Lstat("/tmp")
	return err == nil && st.IsDir()
}

// RemoveAll removes the work folder even when the script left folders
// without write or search permission behind. The script may still run
// things that change the tree (an orphan the kill missed), so the
// folders are made searchable through an os.Root: a folder swapped for a
// symlink meanwhile never has the chmod applied to what it points to
// outside the work folder.
func RemoveAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	root, err := os.OpenRoot(dir)
	if err == nil {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				if rel, rerr := filepath.Rel(dir, p); rerr == nil {
					root.Chmod(rel, 0o700)
				}
			}
			return nil
		})
		root.Close()
	}
	os.RemoveAll(dir)
}
