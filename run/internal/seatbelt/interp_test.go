package seatbelt

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInterpreterTree(t *testing.T) {
	dir := t.TempDir()
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	py := filepath.Join(bin, "python3")
	if err := os.WriteFile(py, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "py")
	if err := os.Symlink(py, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		argv0  string
		system []string
		want   string
	}{
		{link, []string{dir}, ""},                 // held by a system tree
		{link, []string{"/usr"}, py},              // outside the software prefixes: the binary only
		{filepath.Join(dir, "missing"), nil, ""},  // nothing to grant
		{"/bin/sh", []string{"/usr", "/bin"}, ""}, // the system's own
	} {
		if got := InterpreterTree(tc.argv0, tc.system); got != tc.want {
			t.Errorf("InterpreterTree(%s, %v) = %q, want %q", tc.argv0, tc.system, got, tc.want)
		}
	}
}
