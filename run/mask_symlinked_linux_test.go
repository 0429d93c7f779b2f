package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaskUnderSymlinkedFolder: dotfile managers (GNU stow, chezmoi, yadm)
// make ~/.config a symlink into a dotfiles folder. The deny entry
// ~/.config/gh is then listed under both its names, which lead to one
// folder: a read grant of the home folder must run with that folder
// masked, not be refused as if the names were being swapped.
func TestMaskUnderSymlinkedFolder(t *testing.T) {
	needTool(t, "sh")
	home := t.TempDir()
	os.Chmod(home, 0o755)
	gh := filepath.Join(home, "dotfiles", "config", "gh")
	if err := os.MkdirAll(gh, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(gh, "hosts.yml"), []byte("oauth_token: SECRET\n"), 0o644)
	os.WriteFile(filepath.Join(home, "notes"), []byte("notes\n"), 0o644)
	if err := os.Symlink("dotfiles/config", filepath.Join(home, ".config")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	dir := newSkill(t, map[string]string{"cat.sh": "#!/bin/sh\ncat \"$@\"\nexit 0\n"})
	o := runIn(t, Sandbox{ReadPaths: []string{home}}, dir, "cat.sh",
		filepath.Join(home, "notes"), filepath.Join(home, ".config", "gh", "hosts.yml"), filepath.Join(gh, "hosts.yml"))
	if o.err != nil {
		t.Fatalf("refused: %v", o.err)
	}
	if strings.Contains(o.stdout, "SECRET") || !strings.Contains(o.stdout, "notes") {
		t.Errorf("stdout %q", o.stdout)
	}
}
