package gvisor

import (
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run/internal/workdir"
)

// privateTempDir makes a folder of the supervisor's (0700) in TMPDIR for
// a sandbox's bundle and runsc's state, once TMPDIR and each folder
// above it is one no other user can rename in (renameSafe). The bundle
// is named by its path all along (runsc's --root, the /etc files a
// pooled run writes, the folder the watch walks): another user who
// could rename it away and put a folder of theirs in its place would
// have the watch measure theirs, or root write through their symbolic
// links.
func privateTempDir(prefix string) (string, error) {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", err
	}
	if err := renameSafe(tmp, os.Geteuid()); err != nil {
		return "", err
	}
	return os.MkdirTemp(tmp, prefix)
}

// renameSafe is workdir.RenameSafe.
func renameSafe(dir string, uid int) error { return workdir.RenameSafe(dir, uid) }
