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
// or preloads code, Python's start-up hooks and virtual environments'
// activate scripts, linters' configuration that editors and git hooks
// load as code, and the build settings IDEs run on opening a project
// (Gradle, Maven, MSBuild). Project content that
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
	// mise's folders (.mise/config.toml, .config/mise/config.toml and
	// conf.d); its mise[.ENV].toml files are matched by isMise.
	".mise": true, "mise": true,
	// Interactive interpreters that load a start-up file from the
	// current folder: irb and pry (.irbrc may also lie in home).
	".irbrc": true, ".pryrc": true,
	// Python virtual environments: the activate scripts that editors
	// source in every new terminal (VS Code's python.terminal.
	// activateEnvironment), and pyvenv.cfg, which makes a folder an
	// environment whose bin/python editors find and run.
	"activate": true, "activate.csh": true, "activate.fish": true, "activate.nu": true,
	"activate.ps1": true, "activate.bat": true, "activate_this.py": true, "pyvenv.cfg": true,
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
	// Linters that editors run on opening a file and whose configuration
	// runs code: pylint's init-hook, mypy's plugins named by path.
	".pylintrc": true, "pylintrc": true, "mypy.ini": true, ".mypy.ini": true,
	// Build tools that IDEs run on opening a project (Gradle and Maven
	// import, MSBuild design-time builds), configured here with JVM
	// options (-javaagent), a distribution to download and run, extensions
	// or targets injected into every project.
	"gradle.properties": true, "gradle-wrapper.properties": true, ".mvn": true,
	"directory.build.props": true, "directory.build.targets": true, "directory.build.rsp": true,
}

// jsConfigTools are the JavaScript tools whose configuration is a module
// they load (tool.config.js and its .mjs, .cjs, .ts... variants) or a
// .toolrc file that names plugins and parsers by path: editors' ESLint,
// Prettier and Stylelint extensions load it on opening a file, and
// lint-staged and commitlint run it from the git hooks at every commit.
var jsConfigTools = []string{"eslint", "prettier", "stylelint", "lint-staged", "commitlint"}

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
	if autorunNames[name] || isLefthook(name) || isMise(name) || isJSConfig(name) {
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

// isMise matches mise's configuration files, which mise's shell hook
// reads on entering the folder and whose [env] and [hooks] run commands:
// mise.toml and mise.ENV.toml (mise.local.toml, mise.dev.toml), with or
// without a leading dot.
func isMise(name string) bool {
	base := strings.TrimPrefix(name, ".")
	return strings.HasPrefix(base, "mise.") && strings.HasSuffix(base, ".toml")
}

// isJSConfig matches the configuration of jsConfigTools: ".toolrc" alone
// or with any extension (.eslintrc.json, .prettierrc.yaml: their plugins
// may be paths), and "tool.config.EXT" (eslint.config.mjs). The
// lint-staged rc is named .lintstagedrc.
func isJSConfig(name string) bool {
	for _, tool := range jsConfigTools {
		rc := "." + strings.ReplaceAll(tool, "-", "") + "rc"
		if name == rc || strings.HasPrefix(name, rc+".") {
			return true
		}
		if ext, ok := strings.CutPrefix(name, tool+".config."); ok && ext != "" {
			return true
		}
	}
	return false
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
