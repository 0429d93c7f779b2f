package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLenient checks that lenient validation only moves problems: its
// errors plus the warnings it demoted are exactly validate's errors, none
// of its errors is a Spec one, and a skill validate accepts is accepted.
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
		moved := append(append([]Problem{}, lenient.Errors...), lenient.SpecWarnings()...)
		sortProblems(moved)
		if got, want := strings.Join(messages(moved), "\n"), strings.Join(messages(spec.Errors), "\n"); got != want {
			t.Fatalf("lenient errors and demoted warnings:\n%s\nvalidate's errors:\n%s", got, want)
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
