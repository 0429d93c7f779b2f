//go:build linux || darwin

package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// TestOpen: the caller's own symlinks on the way to an output file
// (a folder link, a link to the file, a dangling link to the file to
// create) are followed to the real file, and the kernel's names of this
// process's descriptors open as named; a symlink that belongs to the
// sandbox identity is refused, for a root caller, with the file it points
// at untouched.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"dirlink":  real,
		"filelink": filepath.Join(real, "existing"),
		"dangling": filepath.Join(real, "new-through-link"),
		"planted":  filepath.Join(real, "victim"),
		"run-link": filepath.Join(real, "victim"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"existing", "victim"} {
		if err := os.WriteFile(filepath.Join(real, name), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := os.Geteuid() == 0
	if root {
		if err := os.Lchown(filepath.Join(dir, "planted"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	// A link of a run's own host id (Linux): planted as well.
	runIDs := root && runtime.GOOS == "linux"
	if runIDs {
		if err := os.Lchown(filepath.Join(dir, "run-link"), identity.RunIDFirst+3, identity.RunIDFirst+3); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, path, lands string // lands: the file written, "" for none
		planted           bool   // refused as a planted link (root only)
	}{
		{"new file", filepath.Join(dir, "new"), filepath.Join(dir, "new"), false},
		{"through a folder link", filepath.Join(dir, "dirlink", "a"), filepath.Join(real, "a"), false},
		{"a link to the file", filepath.Join(dir, "filelink"), filepath.Join(real, "existing"), false},
		{"a dangling link", filepath.Join(dir, "dangling"), filepath.Join(real, "new-through-link"), false},
		{"relative with dot-dot", filepath.Join(dir, "dirlink", "..", "rel"), filepath.Join(dir, "rel"), false},
		{"planted link", filepath.Join(dir, "planted"), filepath.Join(real, "victim"), root},
		{"link of a run's id", filepath.Join(dir, "run-link"), filepath.Join(real, "victim"), runIDs},
		{"/dev/null", "/dev/null", "", false},
		{"/dev/stderr", "/dev/stderr", "", false},
	}
	for _, tt := range tests {
		f, err := Open(tt.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		var planted *PlantedSymlinkError
		if tt.planted {
			if !errors.As(err, &planted) || planted.Link != tt.path {
				t.Errorf("%s: %v, want a refusal naming the link", tt.name, err)
			}
			if b, _ := os.ReadFile(tt.lands); string(b) != "old\n" {
				t.Errorf("%s: the link's target holds %q", tt.name, b)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if f.Name() != tt.path {
			t.Errorf("%s: file named %q, want %q", tt.name, f.Name(), tt.path)
		}
		if tt.lands != "" {
			f.WriteString("new\n")
		}
		f.Close()
		if tt.lands == "" {
			continue
		}
		if b, err := os.ReadFile(tt.lands); err != nil || !strings.HasSuffix(string(b), "new\n") {
			t.Errorf("%s: %s holds %q (%v)", tt.name, tt.lands, b, err)
		}
	}
	for _, p := range []string{filepath.Join(dir, "missing", "x"), filepath.Join(dir, "dirlink", "missing", "x")} {
		if _, err := Open(p, os.O_WRONLY|os.O_CREATE, 0o640); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s, in a missing folder: %v, want ErrNotExist", p, err)
		}
	}
}

// TestOpenAtEach: the walk macOS uses (and Linux without openat2) opens a
// path without symlinks, and fails on one with a symlink on the way
// (ELOOP, or ENOTDIR where the kernel checks O_DIRECTORY first) or as the
// last name (ELOOP), rather than following it.
func TestOpenAtEach(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path     string
		wantLoop bool
	}{
		{filepath.Join(dir, "plain"), false},
		{filepath.Join(dir, "link", "through"), true},
		{filepath.Join(dir, "link"), true},
	}
	for _, tt := range tests {
		f, err := openAtEach(tt.path, tt.path, os.O_WRONLY|os.O_CREATE, 0o600)
		if tt.wantLoop {
			if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("%s: %v, want ELOOP", tt.path, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.path, err)
			continue
		}
		f.Close()
	}
	if _, err := os.Lstat(filepath.Join(dir, "through")); err == nil {
		t.Errorf("a file was created through the link")
	}
}
