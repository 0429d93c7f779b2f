//go:build linux || darwin

package mcp

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWorkspaceMadeFirst: a workspace the caller made before starting
// the server (mode 0755), holding the caller's own file, works for a root
// caller as for any other: the file is edited in place, and what the run
// creates belongs to the caller on the host (a root caller's workspace
// is id-mapped, see docs/grants.md).
func TestWorkspaceMadeFirst(t *testing.T) {
	base, err := os.MkdirTemp("", "skill-sandbox-mcp-ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ws, 0o755)
	if err := os.WriteFile(filepath.Join(ws, "mine.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws})
	c.initialize()
	res := c.call(ToolRunCommand, map[string]any{"command": "echo ' edited' >> mine.txt && mkdir out && echo new > out/new.txt && echo done"})
	if res["isError"] != false || dig(res, "structuredContent", "stdout", "text") != "done\n" {
		t.Fatalf("command in a workspace made first: %v", dig(res, "structuredContent"))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "mine.txt")); string(b) != "mine edited\n" {
		t.Errorf("mine.txt %q", b)
	}
	for _, p := range []string{"mine.txt", "out", "out/new.txt"} {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(ws, p), &st); err != nil || int(st.Uid) != os.Geteuid() {
			t.Errorf("%s belongs to uid %d (%v), want the caller's %d", p, st.Uid, err, os.Geteuid())
		}
	}
}
