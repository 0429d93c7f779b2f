package validate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds every SKILL.md under testdata as a seed input.
func addSeeds(f *testing.F) {
	for _, pattern := range []string{"../testdata/skills/*/SKILL.md", "../testdata/skills/*/skill.md", "../testdata/example/*/SKILL.md"} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("---\nd: |2+\n\n   x\n\t\n---\n"))
	f.Add([]byte("---\nt: [a, 'b', \"c\\u00e9\"]\nm: {k: v}\n---\n"))
	f.Add([]byte("\ufeff---\r\nname: x\r\n---\r\n"))
}

// FuzzParseFrontmatter checks that the parser never panics, that every error
// is a *SyntaxError inside the input, and that every parsed value lies
// between the delimiters.
func FuzzParseFrontmatter(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, err := ParseFrontmatter(data)
		// CRLF, LF and a lone CR each end a line.
		lines := bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n")) +
			bytes.Count(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r")) + 1
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Line < 1 || se.Line > lines || se.Column < 0 {
				t.Fatalf("error position %d:%d outside the %d-line input", se.Line, se.Column, lines)
			}
			return
		}
		if fm.EndLine < 2 || fm.EndLine > lines {
			t.Fatalf("EndLine %d outside 2..%d", fm.EndLine, lines)
		}
		var check func(n *Node)
		check = func(n *Node) {
			if n.Line < 2 || n.Line >= fm.EndLine || n.Column < 1 {
				t.Fatalf("node at %d:%d outside the frontmatter (lines 2..%d)", n.Line, n.Column, fm.EndLine-1)
			}
			for _, it := range n.Items {
				check(it)
			}
			for _, p := range n.Pairs {
				if p.Line < 2 || p.Line >= fm.EndLine || p.Column < 1 {
					t.Fatalf("key %q at %d:%d outside the frontmatter", p.Key, p.Line, p.Column)
				}
				check(p.Value)
			}
		}
		for _, p := range fm.Pairs {
			check(p.Value)
		}
	})
}

// FuzzSkill validates a skill folder whose SKILL.md is the fuzz input and
// checks that Skill never panics and that Valid agrees with the problems.
func FuzzSkill(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "fuzz-skill")
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := Skill(dir, Options{})
		if r.Valid != (len(r.Errors) == 0) {
			t.Fatalf("Valid=%v with errors %v", r.Valid, r.Errors)
		}
		if s := Skill(dir, Options{Strict: true}); s.Valid != (len(s.Errors) == 0 && len(s.Warnings) == 0) {
			t.Fatalf("strict Valid=%v with %v / %v", s.Valid, s.Errors, s.Warnings)
		}
	})
}
