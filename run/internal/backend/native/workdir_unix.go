//go:build linux || darwin

package native

import (
	"fmt"
	"os"
)

// makeDeferredWorkDir makes on the host the work folder the planning named
// without making it (see workdir.NewName), for a run whose init process has
// no mount namespace after all. Mkdir fails on anything already there.
func makeDeferredWorkDir(l *Launch) error {
	if l.workMade {
		return nil
	}
	p := l.plan
	dir := p.Config.WorkDir
	if err := os.Mkdir(dir, 0o700); err != nil {
		return fmt.Errorf("work folder: %w", err)
	}
	l.workMade = true
	if p.UID != os.Getuid() || p.GID != os.Getgid() {
		if err := os.Chown(dir, p.UID, p.GID); err != nil {
			return fmt.Errorf("work folder: %w", err)
		}
	}
	return nil
}
