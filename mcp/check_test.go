package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a server whose runs can work passes the start check; one
// whose workspace the sandbox cannot write fails it with the run
// package's reason and fix.
func TestCheck(t *testing.T) {
	skills := skillsDir(t)
	unwritable := filepath.Join(t.TempDir(), "ws")
	// As root the sandbox runs as uid 65534: root's own folders are
	// id-mapped for it, another user's 0755 folder is not writable;
	// otherwise the caller itself cannot write a 0555 folder.
	if err := os.Mkdir(unwritable, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(unwritable, 4242, 4242); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := os.Chmod(unwritable, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(unwritable, 0o755) })
	}
	for _, tc := range []struct {
		name      string
		workspace string
		want      string
	}{
		{"no workspace", "", ""},
		{"workspace made by the server", filepath.Join(t.TempDir(), "new", "ws"), ""},
		{"workspace the sandbox cannot write", unwritable, "not writable by uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := NewServer(Config{SkillDirs: []string{skills}, Workspace: tc.workspace})
			if err != nil {
				t.Fatal(err)
			}
			err = srv.Check(context.Background())
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "fix: ")):
				t.Errorf("error %v, want %q and a fix", err, tc.want)
			}
		})
	}
}
