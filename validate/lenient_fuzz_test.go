package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLenient checks that lenient validation only moves problems: its
// errors are among validate's, each of validate's errors is one of its
// errors or demoted warnings (a frontmatter read line by line may add
// demoted ones), none of its errors is a Spec one, and a skill validate
// accepts is accepted.
func FuzzLenient(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("---\nname: fuzz-skill\ndescription: d\nversion: 1\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "fuzz-skill")
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		spec := Skill(dir, Options{})
		lenient := Skill(dir, Options{Lenient: true})
		if spec.Valid && !lenient.Valid {
			t.Fatalf("valid for validate, refused leniently: %v", lenient.Errors)
		}
		specErrs := map[string]bool{}
		for _, m := range messages(spec.Errors) {
			specErrs[m] = true
		}
		for _, m := range messages(lenient.Errors) {
			if !specErrs[m] {
				t.Fatalf("lenient error %q is not one of validate's: %q", m, messages(spec.Errors))
			}
		}
		moved := map[string]bool{}
		for _, m := range messages(append(append([]Problem{}, lenient.Errors...), lenient.SpecWarnings()...)) {
			moved[m] = true
		}
		for _, m := range messages(spec.Errors) {
			if !moved[m] && !strings.Contains(strings.Join(messages(lenient.SpecWarnings()), "\n"), m) {
				t.Fatalf("validate's error %q is neither a lenient error nor a demoted warning", m)
			}
		}
		for _, p := range lenient.Errors {
			if p.Spec {
				t.Fatalf("Spec problem left among the lenient errors: %v", p)
			}
		}
	})
}

// FuzzResolveScript checks that whatever name is asked for, ResolveScript
// returns only a regular file inside the skill folder, never the file out
// of it that symlinks in the skill point to.
func FuzzResolveScript(f *testing.F) {
	root := f.TempDir()
	skill := filepath.Join(root, "s")
	for _, file := range []string{"scripts/run.py", "scripts/sub/x.sh", "ooxml/scripts/unpack.py", "SKILL.md"} {
		p := filepath.Join(skill, filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			f.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "secret"), []byte("x"), 0o644); err != nil {
		f.Fatal(err)
	}
	for link, target := range map[string]string{"ooxml/out": "../../secret", "scripts/up": "..", "ooxml/root": "/", "ooxml/self": "."} {
		if err := os.Symlink(target, filepath.Join(skill, filepath.FromSlash(link))); err != nil {
			f.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(skill)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"run.py", "scripts/run.py", "sub/x.sh", "ooxml/scripts/unpack.py", "ooxml/out", "up/ooxml/out",
		"ooxml/root/etc/passwd", "ooxml/self/scripts/unpack.py", "scripts/up/SKILL.md", "../secret", "/etc/passwd", "ooxml//scripts/./unpack.py"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, script string) {
		got, err := ResolveScript(skill, script)
		if err != nil {
			return
		}
		if !within(real, got) || got == real {
			t.Fatalf("ResolveScript(%q) = %s, outside %s", script, got, real)
		}
		if st, err := os.Lstat(got); err != nil || !st.Mode().IsRegular() {
			t.Fatalf("ResolveScript(%q) = %s, not a regular file (%v)", script, got, err)
		}
	})
}

// FuzzRecoverFrontmatter checks that reading a broken frontmatter line by
// line never panics and yields only a non-empty name and control-free
// scalar values.
func FuzzRecoverFrontmatter(f *testing.F) {
	addSeeds(f)
	f.Add([]byte("---\nname: s\ndescription: Use when: asked\n---\nBody\n"))
	f.Add([]byte("---\nname: s\ndescription: |\n  a: b\nx: [\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fm := recoverFrontmatter(data)
		if fm == nil {
			return
		}
		name, ok := fm.Lookup("name")
		if !ok || strings.TrimSpace(name.Value.Value) == "" {
			t.Fatalf("recovered without a name: %+v", fm.Pairs)
		}
		for _, p := range fm.Pairs {
			if p.Value == nil || p.Value.Kind != ScalarNode {
				t.Fatalf("%s: not a scalar", p.Key)
			}
			if _, _, r, bad := ControlChar(p.Value.Value); bad && r != '\t' {
				t.Fatalf("%s: control character %U", p.Key, r)
			}
		}
	})
}
