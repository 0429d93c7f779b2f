package autorun

import "testing"

// TestMatches checks the names matched, at any depth, and the names
// that must not match (quarantined ones, look-alikes, project content).
func TestMatches(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{".git", true},
		{"sub/.git", true},
		{".envrc", true},
		{"a/b/.vscode", true},
		{".bashrc", true},
		{"venv/lib/python3.11/site-packages/evil.pth", true},
		{"proj.code-workspace", true},
		{".npmrc", true},
		{".claude", true},
		{"", false},
		{".", false},
		// Python before 3.13 (Debian 12's 3.11) runs a file named just
		// .pth in site-packages too (red team).
		{".pth", true},
		{"venv/lib/python3.11/site-packages/.pth", true},
		{".code-workspace", false},
		// lefthook's hooks read these at every commit (red team), as
		// pre-commit's hooks read .pre-commit-config.yaml.
		{"lefthook.yml", true},
		{".config/lefthook.yaml", true},
		{".lefthook-local.toml", true},
		{"lefthook-local.jsonc", true},
		{".lefthook", true},
		{"node_modules/lefthook", false},
		// Jujutsu's and Sapling's repository folders: their config names
		// a pager and hooks, as .git's and .hg's do (red team).
		{".jj", true},
		{"sub/.sl", true},
		{"lefthook.txt", false},
		// On a case-insensitive folder these are the names git, direnv
		// and Python open (red team).
		{".GIT", true},
		{"sub/.Git", true},
		{".EnvRC", true},
		{"x.PTH", true},
		{"Lefthook.YML", true},
		// Issue 30, round three: what editors and dev tools run on
		// opening a folder or file, or at every commit.
		{".venv/bin/activate", true},
		{"venv/Scripts/Activate.ps1", true},
		{".venv/bin/activate.fish", true},
		{".venv/bin/activate_this.py", true},
		{".venv/pyvenv.cfg", true},
		{"eslint.config.js", true},
		{"web/eslint.config.mjs", true},
		{"eslint.config.cjs", true},
		{"eslint.config.ts", true},
		{".eslintrc.js", true},
		{".eslintrc.cjs", true},
		{".eslintrc.json", true},
		{".eslintrc", true},
		{"prettier.config.mjs", true},
		{".prettierrc.js", true},
		{".prettierrc.cjs", true},
		{".prettierrc", true},
		{".lintstagedrc", true},
		{".lintstagedrc.mjs", true},
		{"lint-staged.config.js", true},
		{"commitlint.config.ts", true},
		{".stylelintrc.cjs", true},
		{"mise.toml", true},
		{".mise.toml", true},
		{".config/mise.toml", true},
		{"mise.dev.toml", true},
		{".mise", true},
		{".config/mise", true},
		{".irbrc", true},
		{".pylintrc", true},
		{"mypy.ini", true},
		{"gradle.properties", true},
		{"gradle/wrapper/gradle-wrapper.properties", true},
		{".mvn", true},
		{"Directory.Build.props", true},
		{"Directory.Build.targets", true},
		{".husky", true},
		{".pre-commit-config.yaml", true},
		{".devcontainer", true},
		{".idea", true},
		{".vscode", true},
		// Data that tools read but do not run, and project content run
		// by hand (docs/grants.md says why each is left).
		{".nvmrc", false},
		{".tool-versions", false},
		{".python-version", false},
		{"Taskfile.yml", false},
		{"justfile", false},
		{"tsconfig.json", false},
		{"jsconfig.json", false},
		{"eslint.config", false},
		{"prettier.config.", false},
		{"eslintrc", false},
		{"activated", false},
		{"mise.toml.bak", false},
		{"build.gradle", false},
		{".git" + QuarantineSuffix, false},
		{".envrc" + QuarantineSuffix, false},
		{"x.pth" + QuarantineSuffix, false},
		{".github", false},
		{".gitignore", false},
		{"Makefile", false},
		{"package.json", false},
		{".env", false},
		{"git", false},
		{"envrc", false},
	}
	for _, tc := range tests {
		if got := Matches(tc.rel); got != tc.want {
			t.Errorf("Matches(%q) = %v, want %v", tc.rel, got, tc.want)
		}
	}
}
