package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeSkill creates a skill folder under a temporary directory with the
// given files (relative path -> content) and returns its path.
func writeSkill(t *testing.T, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func validMD(name string) string {
	return "---\nname: " + name + "\ndescription: A test skill.\n---\n# Body\n"
}

// messages returns the messages of ps.
func messages(ps []Problem) []string {
	var m []string
	for _, p := range ps {
		m = append(m, p.String())
	}
	return m
}

func hasMessage(ps []Problem, sub string) bool {
	for _, p := range ps {
		if strings.Contains(p.Message, sub) {
			return true
		}
	}
	return false
}

func TestSkillTooBig(t *testing.T) {
	md := validMD("big") + strings.Repeat("filler line\n", MaxSkillMDSize/12+1)
	dir := writeSkill(t, "big", map[string]string{"SKILL.md": md, "scripts/a.py": ""})
	r := Skill(dir, Options{})
	if r.Valid || !hasMessage(r.Errors, fmt.Sprintf("file is %d bytes; the limit is 1048576 bytes", len(md))) {
		t.Fatalf("errors %v, want the size limit", messages(r.Errors))
	}
}

func TestSkillMDSymlinkOutside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.md")
	if err := os.WriteFile(outside, []byte(validMD("linked")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := writeSkill(t, "linked", map[string]string{"scripts/a.py": ""})
	if err := os.Symlink(outside, filepath.Join(dir, "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	r := Skill(dir, Options{})
	if r.Valid || r.Name != "" || !hasMessage(r.Errors, "symlink points outside the skill folder") {
		t.Errorf("name %q errors %v: the escaping SKILL.md must be refused, not read", r.Name, messages(r.Errors))
	}
}

func TestSkillSymlinkChain(t *testing.T) {
	// inner -> ../link-out (inside), link-out -> /etc (outside): the chain escapes.
	dir := writeSkill(t, "chain", map[string]string{"SKILL.md": validMD("chain"), "scripts/a.py": ""})
	if err := os.Symlink(string(filepath.Separator), filepath.Join(dir, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../link-out", filepath.Join(dir, "scripts", "inner")); err != nil {
		t.Fatal(err)
	}
	r := Skill(dir, Options{})
	for _, f := range []string{"link-out", "scripts/inner"} {
		found := false
		for _, p := range r.Errors {
			found = found || p.File == f && strings.Contains(p.Message, "outside the skill folder")
		}
		if !found {
			t.Errorf("no escape error for %s in %v", f, messages(r.Errors))
		}
	}
}

func TestSkillFolderErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		want string
	}{
		{filepath.Join(t.TempDir(), "nope"), "Path does not exist"},
		{file, "Not a directory"},
		{writeSkill(t, "empty", nil), "Missing required file: SKILL.md"},
	}
	for _, tt := range tests {
		r := Skill(tt.dir, Options{})
		if r.Valid || !hasMessage(r.Errors, tt.want) {
			t.Errorf("%s: errors %v, want %q", tt.dir, messages(r.Errors), tt.want)
		}
	}
}

func TestSkillTooManyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("creates 10,001 files")
	}
	dir := writeSkill(t, "many", map[string]string{"SKILL.md": validMD("many")})
	assets := filepath.Join(dir, "assets")
	if err := os.Mkdir(assets, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= maxFiles; i++ {
		f, err := os.Create(filepath.Join(assets, fmt.Sprintf("f%05d", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	r := Skill(dir, Options{})
	if r.Valid || !hasMessage(r.Errors, "more than 10000 files") {
		t.Errorf("errors %v, want the file cap", messages(r.Errors))
	}
}

func TestSkillStrict(t *testing.T) {
	dir := writeSkill(t, "warned", map[string]string{"SKILL.md": validMD("warned")}) // no scripts/
	plain := Skill(dir, Options{})
	strict := Skill(dir, Options{Strict: true})
	if !plain.Valid || len(plain.Warnings) != 1 {
		t.Fatalf("default: valid=%v warnings=%v, want valid with one warning", plain.Valid, messages(plain.Warnings))
	}
	if strict.Valid || !reflect.DeepEqual(strict.Warnings, plain.Warnings) || len(strict.Errors) != 0 {
		t.Errorf("strict: valid=%v errors=%v warnings=%v, want invalid with the same warning kept as a warning",
			strict.Valid, messages(strict.Errors), messages(strict.Warnings))
	}
}

func TestSkillDotPath(t *testing.T) {
	dir := writeSkill(t, "dotted", map[string]string{"SKILL.md": validMD("dotted"), "scripts/a.sh": ""})
	t.Chdir(dir)
	if r := Skill(".", Options{}); !r.Valid {
		t.Errorf("validating \".\" compares the name with the real folder name: %v", messages(r.Errors))
	}
}

func TestNameProblems(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"pdf-processing", nil},
		{"v2", nil},
		{"café", nil},
		{"数据-分析", nil}, // letters without case, like the reference's isalnum
		{"Pdf", []string{"must be lowercase"}},
		{"-a", []string{"start or end with a hyphen"}},
		{"a-", []string{"start or end with a hyphen"}},
		{"a--b", []string{"consecutive hyphens"}},
		{"a_b", []string{"invalid characters"}},
		{"a b", []string{"invalid characters"}},
		{"a.b", []string{"invalid characters"}},
		{strings.Repeat("a", 64), nil},
		{strings.Repeat("é", 64), nil}, // counted in characters, not bytes
		{strings.Repeat("a", 65), []string{"exceeds 64 character limit (65 chars)"}},
		{"A--", []string{"lowercase", "hyphen", "consecutive"}},
	}
	for _, tt := range tests {
		got := NameProblems(tt.name)
		if len(got) != len(tt.want) {
			t.Errorf("%q: got %q, want %d problems like %q", tt.name, got, len(tt.want), tt.want)
			continue
		}
		for i := range got {
			if !strings.Contains(got[i], tt.want[i]) {
				t.Errorf("%q: problem %d is %q, want it to mention %q", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

func TestSkillsOrderAndConcurrency(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i := 0; i < 50; i++ {
		name := fmt.Sprintf("s%02d", i)
		dir := filepath.Join(root, name)
		md := validMD(name)
		if i%3 == 0 {
			md = validMD("wrong")
		}
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	results := Skills(dirs, Options{})
	if len(results) != len(dirs) {
		t.Fatalf("%d results for %d dirs", len(results), len(dirs))
	}
	for i, r := range results {
		if r.Path != dirs[i] {
			t.Fatalf("result %d is for %s, want %s", i, r.Path, dirs[i])
		}
		if want := i%3 != 0; r.Valid != want {
			t.Errorf("%s: valid=%v, want %v (%v)", r.Path, r.Valid, want, messages(r.Errors))
		}
	}
	if got := Skills(nil, Options{}); len(got) != 0 {
		t.Errorf("Skills(nil) = %v", got)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	mk := func(rel, file string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if file != "" {
			if err := os.WriteFile(filepath.Join(p, file), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("b/skill-two", "SKILL.md")
	mk("a/skill-one", "SKILL.md")
	mk("a/skill-one/references/nested", "SKILL.md") // inside a skill: not searched
	mk("c/lower", "skill.md")
	mk("d/not-a-skill", "README.md")
	mk(".git/hidden", "SKILL.md")
	mk("node_modules/pkg", "SKILL.md")
	mk("e/SKILL.md", "") // a folder named SKILL.md does not make a skill
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(root, "a", "skill-one"),
		filepath.Join(root, "b", "skill-two"),
		filepath.Join(root, "c", "lower"),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Find = %q\nwant %q", got, want)
	}
	if got, err := Find(filepath.Join(root, "a", "skill-one")); err != nil || len(got) != 1 {
		t.Errorf("Find on a skill folder = %q, %v; want the folder itself", got, err)
	}
	if _, err := Find(filepath.Join(root, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Find(missing) error = %v, want ErrNotExist", err)
	}
}

func TestListNoScripts(t *testing.T) {
	dir := writeSkill(t, "docs-only", map[string]string{"SKILL.md": validMD("docs-only"), "references/a.md": "x"})
	if _, err := List(dir, false); !errors.Is(err, ErrNoScripts) {
		t.Errorf("List without scripts/ = %v, want ErrNoScripts", err)
	}
	files, err := List(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Kind+":"+f.Path)
	}
	if want := []string{"reference:references/a.md", "other:SKILL.md"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("List --all = %q, want %q", paths, want)
	}
}

// TestResultFrontmatter: the result carries SKILL.md as parsed, body
// included, so that callers need not read it again; nil when it could not
// be read or parsed. It stays out of the JSON form.
func TestResultFrontmatter(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantBody string // "" means no frontmatter expected
	}{
		{"valid", map[string]string{"SKILL.md": validMD("valid"), "scripts/a.py": ""}, "# Body\n"},
		{"lower-case skill.md", map[string]string{"skill.md": validMD("lower-case skill.md"), "scripts/a.py": ""}, "# Body\n"},
		{"invalid but parsed", map[string]string{"SKILL.md": "---\nname: Bad_Name\ndescription: d\n---\ntext\n"}, "text\n"},
		{"unparsable", map[string]string{"SKILL.md": "no frontmatter\n"}, ""},
		{"missing", map[string]string{"README.md": "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Skill(writeSkill(t, "s", tt.files), Options{})
			switch {
			case tt.wantBody == "" && r.Frontmatter != nil:
				t.Errorf("Frontmatter %+v, want nil", r.Frontmatter)
			case tt.wantBody != "" && (r.Frontmatter == nil || r.Frontmatter.Body != tt.wantBody):
				t.Errorf("Frontmatter %+v, want body %q", r.Frontmatter, tt.wantBody)
			}
			b, err := json.Marshal(r)
			var keys map[string]any
			if err == nil {
				err = json.Unmarshal(b, &keys)
			}
			if _, ok := keys["Frontmatter"]; ok || err != nil {
				t.Errorf("JSON form %s, %v", b, err)
			}
		})
	}
}

// TestWithoutPath: the path of an *fs.PathError is dropped, wrapped or
// not; other errors are returned as they are.
func TestWithoutPath(t *testing.T) {
	_, openErr := os.Open(filepath.Join(t.TempDir(), "none"))
	plain := errors.New("plain")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"path error", openErr, "no such file or directory"},
		{"wrapped path error", fmt.Errorf("reading: %w", openErr), "no such file or directory"},
		{"other", plain, "plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := WithoutPath(tt.err); got == nil || got.Error() != tt.want {
				t.Errorf("WithoutPath(%v) = %v, want %q", tt.err, got, tt.want)
			}
		})
	}
}
