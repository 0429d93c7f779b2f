package mcp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/policy"
)

// TestWorkspacePolicyThroughLink: a policy naming a denied path through a
// symbolic link to the workspace (the operator's usual name for it) is
// enforced by the workspace tools as runs enforce it, which resolve it:
// neither the deny_read file nor the deny_write folder is reached.
func TestWorkspacePolicyThroughLink(t *testing.T) {
	ws, _ := newWorkspace(t)
	link := filepath.Join(filepath.Dir(ws), "ws-link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "private.txt"), []byte("p"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "frozen"), 0o755); err != nil {
		t.Fatal(err)
	}
	op := &policy.Policy{Filesystem: policy.Filesystem{
		Write:     []string{ws},
		DenyRead:  []string{filepath.Join(link, "private.txt")},
		DenyWrite: []string{filepath.Join(link, "frozen")},
	}}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws, Policy: op})
	c.initialize()
	readAndWrite(t, c, "private.txt", "policy", "deny_read")
	r := dig(c.call(ToolWriteWorkspaceFile, map[string]any{"path": "frozen/x", "content": "x"}), "structuredContent")
	if dig(r, "error_kind") != "policy" {
		t.Errorf("write under deny_write named through a link: %v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "frozen", "x")); err == nil {
		t.Error("frozen/x was written")
	}
}
