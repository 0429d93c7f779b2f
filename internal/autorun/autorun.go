// Package autorun names the files that the caller's own tools run, or
// load code or commands from, without being asked to (.git, .envrc,
// .vscode, *.pth, ...): the entries runs keep read-only in write grants
// and quarantine when a run creates them.
//
// It runs in the supervisor, which plans and sweeps a run's write grants
// with it, and in the MCP server, whose workspace writes refuse the same
// entries. It touches nothing and holds no state.
package autorun

import (
	"path"
	"strings"
)

// Files that the caller's own tools run, or load code or commands from,
// without being asked to, when the caller works in a folder a script
// could write (docs/grants.md, "Files the caller's tools run"): the
// version-control metadata (hooks, core.hooksPath, core.fsmonitor and
// filter drivers in .git/config, a .git file naming another git folder),
// shell start-up files, direnv and mise, editors' and agents' workspace
// settings and tasks, package managers' configuration that names commands
// or preloads code, and Python's start-up hooks. Project content that
// runs only when the caller runs it (a Makefile, package.json scripts,
// setup.py) is not on the list.

// autorunNames are matched against an entry's name, file or folder, at
// any depth of a write grant. A folder matches as a whole.
var autorunNames = map[string]bool{
	// Version control: hooks, configuration, a .git file pointing
	// elsewhere; .husky is the usual core.hooksPath.
	".git": true, ".hg": true, ".jj": true, ".sl": true, ".husky": true, ".pre-commit-config.yaml": true,
	// Shells and per-folder environments.
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true,
	".profile": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true,
	".zlogout": true, ".kshrc": true, ".mkshrc": true, ".envrc": true,
	"mise.toml": true, ".mise.toml": true, "mise.local.toml": true, ".mise.local.toml": true,
	// Editors, debuggers and coding agents: tasks that run on opening the
	// folder, settings naming programs, hooks and MCP servers.
	".vscode": true, ".idea": true, ".devcontainer": true, ".zed": true,
	".exrc": true, ".vimrc": true, ".nvimrc": true, ".nvim.lua": true, ".gvimrc": true,
	".gdbinit": true, ".lldbinit": true,
	".claude": true, ".cursor": true, ".gemini": true, ".mcp.json": true,
	// Package managers: node-options, script-shell, yarnPath, preloads,
	// pnpm's install hooks, cargo's runners and wrappers, pip's index.
	".npmrc": true, ".yarnrc": true, ".yarnrc.yml": true, ".pnpmfile.cjs": true,
	"bunfig.toml": true, ".bunfig.toml": true, ".cargo": true, "pip.conf": true,
	// Python runs these at every start when they lie in site-packages.
	"sitecustomize.py": true, "usercustomize.py": true,
}

// autorunSuffixes are matched against the end of an entry's name.
var autorunSuffixes = []string{
	".pth",            // Python: a line starting "import" runs at start-up
	".code-workspace", // VS Code: settings and tasks of a workspace
}

// QuarantineSuffix is added to the name of an auto-run file a run
// created; no tool looks for the name it makes.
const QuarantineSuffix = ".skill-sandbox-quarantine"

// Matches reports whether the entry with the slash-separated path rel
// (relative to a write grant) is a file the caller's tools run on their
// own. Only its last name counts: the folders above a match are matched
// themselves, and what lies inside a matching folder goes with it. A
// quarantined name never matches. Case is ignored: on a case-insensitive
// folder (ext4 or tmpfs casefold, or a host's share) ".GIT" is ".git".
func Matches(rel string) bool {
	name := strings.ToLower(path.Base(rel))
	if rel == "" || rel == "." || strings.HasSuffix(name, QuarantineSuffix) {
		return false
	}
	if autorunNames[name] || isLefthook(name) {
		return true
	}
	for _, s := range autorunSuffixes {
		if strings.HasSuffix(name, s) && len(name) > len(s) {
			return true
		}
	}
	// Python before 3.13 takes a name that is just ".pth" too.
	return name == ".pth"
}

// isLefthook matches lefthook's configuration and script folders, which
// the git hooks it installs read at every commit: lefthook.yml and
// lefthook-local.yml with an optional leading dot and any of its formats'
// extensions, and .lefthook, .lefthook-local. A bare "lefthook" (its npm
// package folder) does not match.
func isLefthook(name string) bool {
	if name == ".lefthook" || name == ".lefthook-local" {
		return true
	}
	base, ext, ok := strings.Cut(strings.TrimPrefix(name, "."), ".")
	if !ok || (base != "lefthook" && base != "lefthook-local") {
		return false
	}
	switch ext {
	case "yml", "yaml", "toml", "json", "jsonc":
		return true
	}
	return false
}

// Inside reports whether the slash-separated path rel, relative to
// a write grant, is or lies in an entry that the caller's own tools run
// on their own (.git, .envrc, .vscode, *.pth, ...: the names that runs
// keep read-only in write grants, docs/grants.md). A writer other than a
// run (the MCP server's write_workspace_file) refuses them by it unless
// the grant is exempted (run.Sandbox.AutorunWritable).
func Inside(rel string) bool {
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	for i := range parts {
		if Matches(strings.Join(parts[:i+1], "/")) {
			return true
		}
	}
	return false
}
