package main

import (
	"fmt"
	"os"
	"path/filepath"
)

// stateDir is skill-sandbox's folder for state such as the audit log, as
// the XDG base directory spec places it: $XDG_STATE_HOME/skill-sandbox
// (an absolute path; the spec says to ignore a relative one), else
// $HOME/.local/state/skill-sandbox; "" when neither is known.
func stateDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(filepath.Clean(x), "skill-sandbox")
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state", "skill-sandbox")
}

// prepareStateDir creates the state folder (stateDir), and the folders
// above it that are missing, with mode 0700 when file lies directly in it:
// the documented client configs name the audit log there, and they must
// work on a machine that has never run skill-sandbox. The folder of any
// other file is never created: a mistyped path stays an error.
func prepareStateDir(file string) error {
	dir := stateDir()
	abs, err := filepath.Abs(file)
	if dir == "" || err != nil || filepath.Dir(abs) != dir {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the state folder: %w", err)
	}
	return nil
}
