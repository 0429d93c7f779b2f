//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestValidateCLIFIFO(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fifo-skill")
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: fifo-skill\ndescription: Has a FIFO.\n---\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "scripts", "pipe"), 0o644); err != nil {
		t.Skipf("cannot create a FIFO: %v", err)
	}
	res := runCLI(t, "", "validate", dir)
	if res.Code != 1 || !strings.Contains(res.Stdout, "scripts/pipe: named pipe (FIFO) is not allowed") {
		t.Errorf("exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
}
