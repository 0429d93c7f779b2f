package prepare

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const testPkgJSON = `{"name": "s", "version": "1.0.0", "scripts": {"postinstall": "x"}, "dependencies": {"a": "^1.0.0"}}`

const testLock = `{
  "name": "s", "version": "1.0.0", "lockfileVersion": 3, "requires": true,
  "packages": {
    "": {"name": "s", "version": "1.0.0", "dependencies": {"a": "^1.0.0"}},
    "node_modules/a": {"version": "1.0.1", "resolved": "https://registry.npmjs.org/a/-/a-1.0.1.tgz",
      "integrity": "sha512-AAAA", "dependencies": {"b": "2"}},
    "node_modules/a/node_modules/b": {"version": "2.0.0", "resolved": "https://registry.npmjs.org/b/-/b-2.0.0.tgz", "integrity": "sha512-BBBB"},
    "node_modules/a/node_modules/c": {"version": "3.0.0", "inBundle": true}
  }
}`

func TestParseNodeLock(t *testing.T) {
	deps, err := ParseNodeLock("package.json", []byte(testPkgJSON), "package-lock.json", []byte(testLock))
	if err != nil {
		t.Fatal(err)
	}
	want := []LockPackage{{"node_modules/a", "a", "1.0.1", "sha512-AAAA"}, {"node_modules/a/node_modules/b", "b", "2.0.0", "sha512-BBBB"},
		{"node_modules/a/node_modules/c", "c", "3.0.0", ""}}
	if len(deps.Packages) != len(want) {
		t.Fatalf("packages %+v", deps.Packages)
	}
	for i := range want {
		if deps.Packages[i] != want[i] {
			t.Errorf("package %d: %+v, want %+v", i, deps.Packages[i], want[i])
		}
	}
	if strings.Contains(string(deps.Manifest), "postinstall") || !strings.Contains(string(deps.Manifest), envPackageName) {
		t.Errorf("manifest given to npm: %s", deps.Manifest)
	}
	// Another skill's name and spacing do not change what npm is given.
	other := strings.ReplaceAll(strings.ReplaceAll(testLock, `"s"`, `"t"`), "\n", "")
	deps2, err := ParseNodeLock("p", []byte(strings.ReplaceAll(testPkgJSON, `"s"`, `"t"`)), "l", []byte(other))
	if err != nil || string(deps2.Normalised) != string(deps.Normalised) || string(deps2.Manifest) != string(deps.Manifest) {
		t.Errorf("normal form differs: %v\n%s\n%s", err, deps.Normalised, deps2.Normalised)
	}
	// Only devDependencies: nothing to install.
	if d, err := ParseNodeLock("p", []byte(`{"devDependencies": {"a": "1"}}`), "l",
		[]byte(`{"lockfileVersion": 3, "packages": {"": {"devDependencies": {"a": "1"}}, "node_modules/a": {"version": "1.0.0", "integrity": "sha512-A", "dev": true}}}`)); d != nil || err != nil {
		t.Errorf("devDependencies only: %v %v", d, err)
	}
}

func TestParseNodeLockRefused(t *testing.T) {
	entry := func(e string) string {
		return `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "1"}}, ` + e + `}}`
	}
	pkg := `{"dependencies": {"a": "1"}}`
	for _, tt := range []struct {
		pkg, lock, want string
	}{
		{pkg, `{"lockfileVersion": 1, "dependencies": {}}`, "lockfileVersion 1: want 2 or 3"},
		{pkg, `[]`, "cannot unmarshal"},
		{`[1]`, entry(`"node_modules/a": {"version": "1"}`), "cannot unmarshal"},
		{`null`, entry(`"node_modules/a": {"version": "1"}`), "not a JSON object"},
		{pkg, `{"lockfileVersion": 3, "packages": {}}`, "no root package"},
		{`{"dependencies": {"a": "2"}}`, entry(`"node_modules/a": {"version": "1", "integrity": "x"}`), `dependencies.a is "2" in package.json, "1" in the lock file`},
		{`{"dependencies": {"a": "1", "b": "1"}}`, entry(`"node_modules/a": {"version": "1", "integrity": "x"}`), `dependencies.b is "1" in package.json, "" in the lock file`},
		{`{}`, entry(`"node_modules/a": {"version": "1", "integrity": "x"}`), "dependencies.a is in the lock file, not in package.json"},
		{`{"dependencies": {"a": "file:../a"}}`, entry(``), "a local folder"},
		{`{"workspaces": ["x"], "dependencies": {"a": "1"}}`, entry(``), "workspaces are not supported"},
		{pkg, entry(`"node_modules/a": {"version": "1"}`), `"node_modules/a": no integrity`},
		{pkg, entry(`"node_modules/a": {"integrity": "x"}`), `"node_modules/a": no version`},
		// Only a package inside another can come in that one's tarball:
		// the root npm is given bundles nothing.
		{pkg, entry(`"node_modules/a": {"version": "1", "inBundle": true}`), `"node_modules/a": no integrity`},
		{pkg, entry(`"node_modules/a": {"version": "1", "link": true}`), "a link to a local folder"},
		{pkg, entry(`"lib/a": {"version": "1", "integrity": "x"}`), "a local folder or workspace"},
		{pkg, entry(`"node_modules/../x": {"version": "1", "integrity": "x"}`), `"../x" is not a package name`},
		{pkg, entry(`"node_modules/a": {"version": "1", "integrity": "x", "resolved": "git+ssh://git@github.com/a/a.git"}`), "not git, file or other sources"},
		{pkg, entry(`"node_modules/a": {"version": 1, "integrity": "x"}`), "version: want a string"},
		{pkg, entry(`"node_modules/a": {"version": "1", "integrity": "x", "name": "../b"}`), `name "../b" is not a package name`},
	} {
		_, err := ParseNodeLock("package.json", []byte(tt.pkg), "package-lock.json", []byte(tt.lock))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s / %s: %v, want %q", tt.pkg, tt.lock, err, tt.want)
		}
	}
}

func TestValidPackageName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"left-pad", true}, {"@types/node", true}, {"JSONStream", true}, {"a.b_c~d", true},
		{"", false}, {".", false}, {"..", false}, {"_a", false}, {"@/a", false}, {"@s/", false}, {"a/b", false},
		{"@s/a/b", false}, {"a b", false}, {strings.Repeat("a", 215), false},
	} {
		if got := validPackageName(tt.name); got != tt.ok {
			t.Errorf("validPackageName(%q) = %v", tt.name, got)
		}
	}
}

func TestLoadNode(t *testing.T) {
	write := func(dir string, files map[string]string) {
		for f, body := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
		want  string // error; "nil" no deps; "" deps
	}{
		{"none", map[string]string{"SKILL.md": "x"}, "nil"},
		{"module type only", map[string]string{"package.json": `{"type": "module"}`}, "nil"},
		{"top", map[string]string{"package.json": testPkgJSON, "package-lock.json": testLock}, ""},
		{"scripts", map[string]string{"scripts/package.json": testPkgJSON, "scripts/package-lock.json": testLock}, ""},
		{"both", map[string]string{"package.json": testPkgJSON, "scripts/package.json": testPkgJSON}, "in one package.json"},
		{"no lock", map[string]string{"package.json": testPkgJSON}, "no package-lock.json beside package.json"},
		{"lock elsewhere", map[string]string{"package.json": testPkgJSON, "scripts/package-lock.json": testLock}, "npm install --package-lock-only"},
		{"shrinkwrap", map[string]string{"package.json": testPkgJSON, "npm-shrinkwrap.json": testLock}, ""},
		{"shrinkwrap first", map[string]string{"package.json": testPkgJSON, "npm-shrinkwrap.json": testLock, "package-lock.json": "{"}, ""},
		{"bad shrinkwrap first", map[string]string{"package.json": testPkgJSON, "npm-shrinkwrap.json": "{", "package-lock.json": testLock}, "npm-shrinkwrap.json"},
		{"yarn", map[string]string{"package.json": testPkgJSON, "yarn.lock": "# yarn lockfile v1\n"}, "yarn.lock is yarn's lock file, which npm ci does not read"},
		{"pnpm", map[string]string{"scripts/package.json": testPkgJSON, "scripts/pnpm-lock.yaml": "lockfileVersion: '9.0'\n"}, "scripts/pnpm-lock.yaml is pnpm's lock file"},
		{"bun", map[string]string{"package.json": testPkgJSON, "bun.lock": "{}"}, "bun.lock is Bun's lock file"},
		{"yarn and npm", map[string]string{"package.json": testPkgJSON, "yarn.lock": "x", "package-lock.json": testLock}, ""},
		{"yarn without deps", map[string]string{"package.json": `{"type": "module"}`, "yarn.lock": "x"}, "nil"},
		{"yarn lock elsewhere", map[string]string{"package.json": testPkgJSON, "scripts/yarn.lock": "x"}, "declares dependencies"},
	} {
		dir := t.TempDir()
		write(dir, tt.files)
		deps, err := LoadNode(dir)
		switch {
		case tt.want == "nil" && (deps != nil || err != nil), tt.want == "" && (deps == nil || err != nil):
			t.Errorf("%s: %v %v", tt.name, deps, err)
		case tt.want != "" && tt.want != "nil" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		case err != nil && !errors.Is(err, ErrNoLockFile) && strings.Contains(tt.name, "yarn"):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
	dir := t.TempDir()
	write(dir, map[string]string{"real.json": testPkgJSON, "package-lock.json": testLock})
	if err := os.Symlink("real.json", filepath.Join(dir, "package.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadNode(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("package.json a link: %v", err)
	}
}

// FuzzParseNodeLock: no panic, and what is accepted normalises to files
// that parse to the same normal form.
func FuzzParseNodeLock(f *testing.F) {
	f.Add([]byte(testPkgJSON), []byte(testLock))
	f.Add([]byte(`{"dependencies": {"a": "1"}}`), []byte(`{"lockfileVersion": 2, "packages": {"": {"dependencies": {"a": "1"}}, "node_modules/a": {"version": "1", "integrity": "x", "name": "@s/b"}}}`))
	f.Add([]byte(`{}`), []byte(`{"lockfileVersion": 3, "packages": {"": {}}}`))
	f.Fuzz(func(t *testing.T, pkg, lock []byte) {
		deps, err := ParseNodeLock("p", pkg, "l", lock)
		if err != nil || deps == nil {
			return
		}
		again, err := ParseNodeLock("p", deps.Manifest, "l", deps.Normalised)
		if err != nil || again == nil {
			t.Fatalf("normal form refused: %v\n%s\n%s", err, deps.Manifest, deps.Normalised)
		}
		if string(again.Normalised) != string(deps.Normalised) || string(again.Manifest) != string(deps.Manifest) {
			t.Fatalf("normal form not stable:\n%s\n%s", deps.Normalised, again.Normalised)
		}
	})
}
