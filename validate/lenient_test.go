package validate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLenient: under Options.Lenient a departure from the letter of the
// specification is a warning (marked Spec) and the skill is valid, while
// validate's verdict (no Lenient) stays an error; what makes a run unsafe
// or impossible stays an error either way.
func TestLenient(t *testing.T) {
	long := strings.Repeat("d", 1068)
	tests := []struct {
		name   string
		folder string
		files  map[string]string
		want   string // a message part of the problem
		refuse bool   // an error under Lenient too
	}{
		{"unknown keys", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\nversion: 1.0\nrequires: [x]\nauthor: me\n---\n"}, "Unexpected field in frontmatter: version", false},
		{"long description", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: " + long + "\n---\n"}, "Description exceeds 1024 character limit (1068 chars)", false},
		{"missing description", "s", map[string]string{"SKILL.md": "---\nname: s\n---\n"}, "Missing required field in frontmatter: description", false},
		{"empty description", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: ''\n---\n"}, "Field 'description' must be a non-empty string", false},
		{"folder mismatch", "other", map[string]string{"SKILL.md": validMD("s")}, "Directory name 'other' must match skill name 's'", false},
		{"uppercase name", "My-Skill", map[string]string{"SKILL.md": validMD("My-Skill")}, "must be lowercase", false},
		{"name characters", "a_b", map[string]string{"SKILL.md": validMD("a_b")}, "contains invalid characters", false},
		{"long name", strings.Repeat("n", 65), map[string]string{"SKILL.md": validMD(strings.Repeat("n", 65))}, "exceeds 64 character limit", false},
		{"hyphens", "a--b-", map[string]string{"SKILL.md": validMD("a--b-")}, "consecutive hyphens", false},
		{"compatibility type", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\ncompatibility:\n  - x\n---\n"}, "Field 'compatibility' must be a string", false},
		{"compatibility length", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n---\n"}, "Compatibility exceeds 500", false},
		{"allowed-tools type", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\nallowed-tools:\n  a: b\n---\n"}, "must be either a string or a list", false},
		{"allowed-tools items", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\nallowed-tools:\n  - a: b\n---\n"}, "list items must all be strings", false},
		{"no SKILL.md", "s", map[string]string{"README.md": "x"}, "Missing required file: SKILL.md", true},
		{"no name", "s", map[string]string{"SKILL.md": "---\ndescription: d\n---\n"}, "Missing required field in frontmatter: name", true},
		{"empty name", "s", map[string]string{"SKILL.md": "---\nname:\ndescription: d\n---\n"}, "Field 'name' must be a non-empty string", true},
		{"colon in the description", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: Use when: the user asks\n---\n"}, "a plain value cannot contain \": \"", false},
		{"syntax error, name read", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\ntags: [a\n---\n"}, "unclosed flow collection", false},
		{"syntax error in the name", "s", map[string]string{"SKILL.md": "---\nname: [s\ndescription: d\n---\n"}, "", true},
		{"syntax error, no name", "s", map[string]string{"SKILL.md": "---\ndescription: [a\n---\n"}, "", true},
		{"unclosed frontmatter", "s", map[string]string{"SKILL.md": "---\nname: s\ndescription: d\n"}, "not properly closed", true},
		{"no frontmatter", "s", map[string]string{"SKILL.md": "# just text\n"}, "", true},
		{"oversized SKILL.md", "s", map[string]string{"SKILL.md": validMD("s") + strings.Repeat("x", MaxSkillMDSize)}, "limit is", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSkill(t, tt.folder, tt.files)
			spec := Skill(dir, Options{})
			if spec.Valid {
				t.Fatalf("validate's verdict: valid; want invalid")
			}
			if tt.want != "" && !hasMessage(spec.Errors, tt.want) {
				t.Fatalf("validate's errors %q lack %q", messages(spec.Errors), tt.want)
			}
			got := Skill(dir, Options{Lenient: true})
			if tt.refuse {
				if got.Valid || (tt.want != "" && !hasMessage(got.Errors, tt.want)) {
					t.Errorf("lenient: valid %v, errors %q; want refused with %q", got.Valid, messages(got.Errors), tt.want)
				}
				for _, p := range got.Errors {
					if p.Spec {
						t.Errorf("lenient: Spec error %q left among the errors", p)
					}
				}
				return
			}
			if !got.Valid || len(got.Errors) != 0 {
				t.Fatalf("lenient: valid %v, errors %q; want valid", got.Valid, messages(got.Errors))
			}
			found := false
			for _, p := range got.SpecWarnings() {
				found = found || strings.Contains(p.Message, tt.want)
			}
			if !found {
				t.Errorf("lenient: spec warnings %q lack %q", messages(got.SpecWarnings()), tt.want)
			}
			if strict := Skill(dir, Options{Lenient: true, Strict: true}); strict.Valid {
				t.Errorf("lenient and strict: valid; want invalid (a warning under strict)")
			}
		})
	}
}

// TestRecoverFrontmatter: what lenient validation reads from a
// frontmatter that does not parse.
func TestRecoverFrontmatter(t *testing.T) {
	tests := []struct {
		md, name, desc, body string // name "" means nothing is recovered
	}{
		{"---\nname: s\ndescription: Use when: asked\n---\nBody\n", "s", "Use when: asked", "Body\n"},
		{"---\nname: 's'\ndescription: \"Use: x\" y\nbad: [\n---\n", "s", "\"Use: x\" y", ""},
		{"---\nname: s\ndescription: |\n  line one\n  line: two\nx: [\n---\n", "s", "line one\nline: two\n", ""},
		{"---\nname: s\nname: t\ndescription: 'q'\n: [\n---\n", "s", "q", ""},
		{"\ufeff---\r\nname: s\r\n: [\r\n---\r\nB", "s", "", "B"},
		{"---\nname: [s\n---\n", "", "", ""},
		{"---\nname:\ndescription: d\n---\n", "", "", ""},
		{"---\n  name: s\n---\n", "", "", ""},
		{"---\nname: s\n", "", "", ""},
		{"name: s\n---\n", "", "", ""},
		{"---\nname: s\xff\n---\n", "", "", ""},
	}
	for _, tt := range tests {
		fm := recoverFrontmatter([]byte(tt.md))
		if tt.name == "" {
			if fm != nil {
				t.Errorf("%q: recovered %+v, want nothing", tt.md, fm.Pairs)
			}
			continue
		}
		if fm == nil {
			t.Errorf("%q: nothing recovered, want name %q", tt.md, tt.name)
			continue
		}
		name, _ := fm.Lookup("name")
		desc, hasDesc := fm.Lookup("description")
		got := ""
		if hasDesc {
			got = desc.Value.Value
		}
		if name.Value.Value != tt.name || got != tt.desc || fm.Body != tt.body {
			t.Errorf("%q: name %q description %q body %q; want %q %q %q", tt.md, name.Value.Value, got, fm.Body, tt.name, tt.desc, tt.body)
		}
	}
}

// TestLenientUnsafe: a symlink out of the folder and a broken one are
// errors under Lenient too.
func TestLenientUnsafe(t *testing.T) {
	for _, target := range []string{"/etc/passwd", "missing.md"} {
		dir := writeSkill(t, "s", map[string]string{"SKILL.md": validMD("s"), "scripts/run.py": "print(1)\n"})
		if err := os.Symlink(target, filepath.Join(dir, "scripts", "link")); err != nil {
			t.Fatal(err)
		}
		if r := Skill(dir, Options{Lenient: true}); r.Valid || !hasMessage(r.Errors, "symlink") {
			t.Errorf("symlink to %s: valid %v, errors %q; want a symlink error", target, r.Valid, messages(r.Errors))
		}
	}
}

// TestResolveScriptNested: a path with a slash is relative to the skill
// folder (a script outside scripts/, as an older layout keeps them), a
// bare name is a file of scripts/, and escapes are refused.
func TestResolveScriptNested(t *testing.T) {
	root := t.TempDir()
	skill := filepath.Join(root, "docx")
	for f, content := range map[string]string{
		"SKILL.md":                 validMD("docx"),
		"ooxml/scripts/unpack.py":  "print(1)\n",
		"scripts/sub/x.sh":         "echo\n",
		"scripts/run.py":           "print(1)\n",
		"run.py":                   "print(2)\n",
		"tools/both/x.sh":          "echo\n",
		"scripts/tools/both/x.sh":  "echo\n",
		"references/notes/doc.md":  "x\n",
		"ooxml/scripts/ok-link.py": "",
	} {
		p := filepath.Join(skill, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "outside.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"ooxml/out.py":   filepath.Join(root, "outside.py"),
		"ooxml/up":       "../..",
		"ooxml/in.py":    "scripts/unpack.py",
		"ooxml/fifo-dir": "/dev",
	} {
		if err := os.Symlink(target, filepath.Join(skill, filepath.FromSlash(link))); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(skill)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		script string
		want   string // relative to the real skill folder; "" means refused
		reason string // part of the refusal
	}{
		{"ooxml/scripts/unpack.py", "ooxml/scripts/unpack.py", ""},
		{"./ooxml/scripts/unpack.py", "ooxml/scripts/unpack.py", ""},
		{"ooxml/in.py", "ooxml/scripts/unpack.py", ""},
		{"run.py", "scripts/run.py", ""},                 // a bare name is scripts/NAME
		{"scripts/run.py", "scripts/run.py", ""},         // as before
		{"sub/x.sh", "scripts/sub/x.sh", ""},             // none in the skill folder: scripts/, as before
		{"tools/both/x.sh", "tools/both/x.sh", ""},       // the skill folder's wins
		{"ooxml/out.py", "", "outside the skill folder"}, // a symlink out
		{"ooxml/up/outside.py", "", "outside the skill folder"},
		{"ooxml/fifo-dir/null", "", "outside the skill folder"},
		{"ooxml/../../outside.py", "", "'..' is not allowed"},
		{"ooxml/scripts/../../run.py", "", "'..' is not allowed"},
		{"/etc/passwd", "", "absolute"},
		{"ooxml/scripts", "", "not a regular file"},
		{"ooxml/missing.py", "", "no such file in the skill folder"},
		{"ooxml/scripts/unpack.py\x00", "", "NUL"},
	}
	for _, tt := range tests {
		got, err := ResolveScript(skill, tt.script)
		if tt.want == "" {
			if !errors.Is(err, ErrScriptRefused) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("ResolveScript(%q) = %q, %v; want refused: %s", tt.script, got, err, tt.reason)
			}
			continue
		}
		if err != nil || got != filepath.Join(real, filepath.FromSlash(tt.want)) {
			t.Errorf("ResolveScript(%q) = %q, %v; want %s", tt.script, got, err, tt.want)
		}
	}
	// A skill without scripts/ runs a nested script all the same.
	bare := filepath.Join(root, "bare")
	if err := os.MkdirAll(filepath.Join(bare, "ooxml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bare, "ooxml", "a.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveScript(bare, "ooxml/a.py"); err != nil {
		t.Errorf("no scripts/: ResolveScript(ooxml/a.py) = %v", err)
	}
	if _, err := ResolveScript(bare, "a.py"); !errors.Is(err, ErrScriptRefused) {
		t.Errorf("no scripts/: ResolveScript(a.py) = %v, want refused", err)
	}
}

// TestFindHiddenFolders: skills in hidden folders are found, as a
// collection may keep them there; version-control folders are not searched.
func TestFindHiddenFolders(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{"skills/.system/a", "skills/.curated/b", "plain/c", ".git/d", "x/.hg/e", "x/.svn/f", "x/.bzr/g", "x/node_modules/h"} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "SKILL.md"), []byte(validMD(filepath.Base(p))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, g := range got {
		r, _ := filepath.Rel(root, g)
		rel = append(rel, filepath.ToSlash(r))
	}
	if want := "plain/c skills/.curated/b skills/.system/a"; strings.Join(rel, " ") != want {
		t.Errorf("Find = %q, want %s", rel, want)
	}
}
