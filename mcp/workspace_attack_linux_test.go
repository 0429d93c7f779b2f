package mcp

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
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

// TestWorkspaceGitDirPlanted: a folder holding HEAD, objects and refs is
// a git directory to git, whatever its name (a bare repository, found by
// git's discovery in it and below it), and its config runs programs
// (core.fsmonitor with core.worktree set) when the caller, or a shell
// prompt, runs git status there. Writing it file by file must be refused
// as writing .git/config is; the caller's real git then runs nothing.
func TestWorkspaceGitDirPlanted(t *testing.T) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("git is not installed: %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
	ws, outside := newWorkspace(t)
	marker := filepath.Join(outside, "ran")
	config := fmt.Sprintf("[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch %s; false\"\n", marker)
	for i, c := range []struct {
		files []string // written in this order
		gitIn string   // where the caller runs git
	}{
		{[]string{"HEAD", "objects/info/x", "refs/heads/x", "config"}, "."},
		{[]string{"config", "refs/heads/x", "objects/info/x", "HEAD"}, "."},
		// A worktree's git folder: HEAD, its own config.worktree and
		// commondir naming a folder with objects and refs, which is no
		// repository alone.
		{[]string{"c/objects/info/x", "c/refs/heads/x", "c/config", "w/config.worktree", "w/HEAD", "w/commondir"}, "w"},
	} {
		t.Run(strings.Join(c.files, ","), func(t *testing.T) {
			sub := "r" + strconv.Itoa(i)
			content := map[string]string{"HEAD": "ref: refs/heads/main\n", "config": config, "commondir": "../c\n", "config.worktree": config,
				"c/config": "[extensions]\n\tworktreeConfig = true\n[core]\n\trepositoryformatversion = 1\n"}
			cl := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws})
			cl.initialize()
			refused := 0
			for _, name := range c.files {
				r := dig(cl.call(ToolWriteWorkspaceFile, map[string]any{"path": sub + "/" + name, "content": cmp.Or(content[name], content[path.Base(name)])}), "structuredContent")
				if dig(r, "outcome") == "refused" {
					refused++
					if dig(r, "error_kind") != "policy" {
						t.Errorf("%s/%s: %v, want error_kind policy", sub, name, r)
					}
				}
			}
			cmd := exec.Command(gitPath, "-c", "safe.directory=*", "status")
			cmd.Dir = filepath.Join(ws, sub, c.gitIn)
			cmd.Env = append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(ws))
			out, _ := cmd.CombinedOutput()
			if _, err := os.Stat(marker); err == nil {
				os.Remove(marker)
				t.Errorf("git status in %s ran the planted core.fsmonitor (%d of %d writes refused); git said: %s", sub, refused, len(c.files), out)
			}
			if refused == 0 {
				t.Errorf("no write of %v was refused", c.files)
			}
		})
	}
}

// TestWorkspaceReadPageProgresses: a text page smaller than the character
// at its offset made no progress (bytes 0, next_offset the same offset,
// eof false), so a client paging on next_offset until eof looped for
// ever. It is refused with the reason instead.
func TestWorkspaceReadPageProgresses(t *testing.T) {
	ws, _ := newWorkspace(t)
	if err := os.WriteFile(filepath.Join(ws, "u.txt"), []byte("éé"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Config{SkillDirs: []string{skillsDir(t)}, Workspace: ws})
	c.initialize()
	r := dig(c.call(ToolReadWorkspaceFile, map[string]any{"path": "u.txt", "max_bytes": 1}), "structuredContent")
	if dig(r, "outcome") == "completed" && dig(r, "next_offset") == float64(0) && dig(r, "eof") == false {
		t.Errorf("a page of max_bytes 1 on a 2-byte character: %v, which makes no progress", r)
	}
	if dig(r, "outcome") == "refused" && dig(r, "error_kind") != "usage" {
		t.Errorf("refused with kind %v, want usage", dig(r, "error_kind"))
	}
}
