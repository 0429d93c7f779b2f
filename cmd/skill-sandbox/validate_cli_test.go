package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/validate"
)

// decodeValidateJSONL parses the JSONL output of "validate --json".
func decodeValidateJSONL(t *testing.T, out string) []validate.Result {
	t.Helper()
	var results []validate.Result
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r validate.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q is not a JSON result: %v", sc.Text(), err)
		}
		// Every documented key is present, even when empty.
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &keys); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"path", "valid", "errors", "warnings", "files"} {
			if _, ok := keys[k]; !ok {
				t.Errorf("line %q has no %q key", sc.Text(), k)
			}
		}
		results = append(results, r)
	}
	return results
}

// skillFoldersUnder counts the folders directly under dir that hold a
// SKILL.md or skill.md.
func skillFoldersUnder(t *testing.T, dir string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		for _, md := range []string{"SKILL.md", "skill.md"} {
			if _, err := os.Lstat(filepath.Join(dir, e.Name(), md)); err == nil {
				n++
				break
			}
		}
	}
	return n
}

func TestValidateCLIExitCodes(t *testing.T) {
	example := repoPath("testdata", "example", "word-stats")
	skills := repoPath("testdata", "skills")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string // substrings expected on stdout
		stderr []string // substrings expected on stderr
	}{
		{"valid", []string{"validate", example}, 0,
			[]string{"✅ Valid Skill: word-stats (scripts: 2, references: 1, assets: 0)\n"}, nil},
		{"valid strict", []string{"validate", "--strict", example}, 0, []string{"✅ Valid Skill: word-stats"}, nil},
		{"invalid", []string{"validate", filepath.Join(skills, "folder-mismatch")}, 1,
			[]string{"❌ " + filepath.Join(skills, "folder-mismatch") + ": SKILL.md:2:7: name: Directory name 'folder-mismatch' must match skill name 'other-name'\n"}, nil},
		{"all errors reported", []string{"validate", filepath.Join(skills, "unknown-field")}, 1,
			[]string{"SKILL.md:4:1: version: Unexpected field", "SKILL.md:5:1: author: Unexpected field"}, nil},
		{"yaml error with position", []string{"validate", filepath.Join(skills, "yaml-colon-in-value")}, 1,
			[]string{"SKILL.md:3:22: mapping values are not allowed here"}, nil},
		{"warning only", []string{"validate", filepath.Join(skills, "no-scripts-folder")}, 0,
			[]string{"✅ Valid Skill: no-scripts-folder", "⚠️ " + filepath.Join(skills, "no-scripts-folder") + ": scripts/: no scripts/ folder"}, nil},
		{"warning strict", []string{"validate", "--strict", filepath.Join(skills, "no-scripts-folder")}, 1,
			[]string{"❌ " + filepath.Join(skills, "no-scripts-folder") + ": scripts/: no scripts/ folder", "--strict"}, nil},
		{"mixed paths", []string{"validate", example, filepath.Join(skills, "Upper-Case")}, 1,
			[]string{"✅ Valid Skill: word-stats", "must be lowercase", "2 skills: 1 valid, 1 invalid"}, nil},
		{"missing path", []string{"validate", filepath.Join(skills, "does-not-exist")}, 1, []string{"Path does not exist"}, nil},
		{"flag after path", []string{"validate", example, "--strict"}, 0, []string{"✅ Valid Skill: word-stats"}, nil},
		{"no path", []string{"validate"}, 2, nil, []string{"skill-sandbox: error: validate: no PATH given\nsee skill-sandbox validate -h\n"}},
		{"unknown flag", []string{"validate", "--bogus", example}, 2, nil, []string{"skill-sandbox: error: validate:", "bogus"}},
		{"help", []string{"validate", "-h"}, 0, []string{"Usage: skill-sandbox validate", "--recursive"}, nil},
		{"recursive nothing found", []string{"validate", "--recursive", repoPath("validate")}, 1, nil, []string{"no skills"}},
		{"recursive missing dir", []string{"validate", "--recursive", filepath.Join(skills, "nope")}, 1, nil, []string{"skill-sandbox: error: validate:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, "", tt.args...)
			if res.Code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", res.Code, tt.code, res.Stdout, res.Stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(res.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, res.Stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(res.Stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, res.Stderr)
				}
			}
		})
	}
}

func TestValidateCLIJSON(t *testing.T) {
	skills := repoPath("testdata", "skills")
	paths := []string{
		repoPath("testdata", "example", "word-stats"),
		filepath.Join(skills, "many-errors"),
		filepath.Join(skills, "dangling-reference"),
	}
	res := runCLI(t, "", append([]string{"validate", "--json"}, paths...)...)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (many-errors is invalid); stderr %s", res.Code, res.Stderr)
	}
	results := decodeValidateJSONL(t, res.Stdout)
	if len(results) != len(paths) {
		t.Fatalf("%d JSON lines for %d paths:\n%s", len(results), len(paths), res.Stdout)
	}
	for i, r := range results {
		if r.Path != paths[i] {
			t.Errorf("line %d is for %s, want %s (input order)", i, r.Path, paths[i])
		}
	}
	if r := results[0]; !r.Valid || r.Name != "word-stats" || r.Files != (validate.Counts{Scripts: 2, References: 1}) {
		t.Errorf("word-stats: %+v", r)
	}
	if r := results[1]; r.Valid || len(r.Errors) < 5 {
		t.Errorf("many-errors: valid=%v with %d errors, want invalid with every error", r.Valid, len(r.Errors))
	}
	if r := results[2]; !r.Valid || len(r.Warnings) != 4 || r.Warnings[0].Line == 0 || r.Warnings[0].Column == 0 {
		t.Errorf("dangling-reference: %+v, want valid with 4 located warnings", r)
	}
}

func TestValidateCLIRecursive(t *testing.T) {
	skills := repoPath("testdata", "skills")
	res := runCLI(t, "", "validate", "--recursive", "--json", skills)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1: the corpus holds invalid skills", res.Code)
	}
	results := decodeValidateJSONL(t, res.Stdout)
	if want := skillFoldersUnder(t, skills); len(results) != want || want < 40 {
		t.Fatalf("%d results, want one per skill folder (%d, at least 40)", len(results), want)
	}
	valid := map[string]bool{}
	for i, r := range results {
		if i > 0 && results[i-1].Path >= r.Path {
			t.Errorf("results not in lexical order: %s before %s", results[i-1].Path, r.Path)
		}
		valid[filepath.Base(r.Path)] = r.Valid
	}
	for name, want := range map[string]bool{
		"pdf-processing": true, "bom-crlf": true, "lowercase-skill-md": true, "nfkc-fullwidth": true,
		"symlink-escape": false, "binary-junk": false, "nfkc-uppercase": false, "missing-name": false,
	} {
		if got, ok := valid[name]; !ok || got != want {
			t.Errorf("%s: valid=%v (found %v), want %v", name, got, ok, want)
		}
	}
	// Human output: one ✅ line per valid skill and a summary.
	human := runCLI(t, "", "validate", "--recursive", skills)
	nValid := 0
	for _, ok := range valid {
		if ok {
			nValid++
		}
	}
	if got := strings.Count(human.Stdout, "✅ Valid Skill: "); got != nValid {
		t.Errorf("%d ✅ lines, want %d", got, nValid)
	}
	if !strings.Contains(human.Stdout, "❌ "+filepath.Join(skills, "symlink-escape")+": scripts/passwd: symlink points outside the skill folder (-> /etc/passwd)") {
		t.Errorf("no symlink escape line in:\n%s", human.Stdout)
	}
}

func TestListCLI(t *testing.T) {
	example := repoPath("testdata", "example", "word-stats")
	noScripts := repoPath("testdata", "skills", "no-scripts-folder")

	table := runCLI(t, "", "list", example)
	if table.Code != 0 {
		t.Fatalf("exit %d: %s", table.Code, table.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(table.Stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "KIND") ||
		!strings.Contains(lines[1], "scripts/stats.py") || !strings.Contains(lines[1], "python3") ||
		!strings.Contains(lines[2], "scripts/top.sh") || !strings.Contains(lines[2], "bash") {
		t.Errorf("table:\n%s", table.Stdout)
	}

	js := runCLI(t, "", "list", "--json", example)
	var files []validate.File
	if err := json.Unmarshal([]byte(js.Stdout), &files); err != nil || js.Code != 0 {
		t.Fatalf("exit %d, %v:\n%s", js.Code, err, js.Stdout)
	}
	if len(files) != 2 || files[0].Interpreter == nil || files[0].Interpreter.Program != "python3" ||
		files[1].Interpreter == nil || files[1].Interpreter.Program != "bash" || files[0].Kind != "script" {
		t.Errorf("list --json = %+v", files)
	}

	all := runCLI(t, "", "list", "--all", "--json", example)
	files = nil
	if err := json.Unmarshal([]byte(all.Stdout), &files); err != nil || all.Code != 0 {
		t.Fatalf("exit %d, %v:\n%s", all.Code, err, all.Stdout)
	}
	kinds := map[string]string{}
	for _, f := range files {
		kinds[f.Path] = f.Kind
	}
	if kinds["references/sample.txt"] != "reference" || kinds["SKILL.md"] != "other" || len(files) != 4 {
		t.Errorf("list --all --json = %+v", files)
	}

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no scripts", []string{"list", noScripts}, 1, "no scripts/ folder"},
		{"no scripts with --all", []string{"list", "--all", noScripts}, 0, ""},
		{"missing path", []string{"list", repoPath("testdata", "nope")}, 1, "skill-sandbox: error: list:"},
		{"no path", []string{"list"}, 2, "want exactly one PATH"},
		{"two paths", []string{"list", example, noScripts}, 2, "want exactly one PATH"},
		{"bad flag", []string{"list", "--nope", example}, 2, "skill-sandbox: error: list:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runCLI(t, "", tt.args...)
			if res.Code != tt.code || !strings.Contains(res.Stderr, tt.stderr) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", res.Code, tt.code, res.Stderr, tt.stderr)
			}
		})
	}
}

// TestOneLine: list and validate print names from the skill through
// oneLine: line breaks stay visible as \n and \r, and no control or
// invisible format character (a bidi override that would show another
// name) reaches the terminal.
func TestOneLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain.sh", "plain.sh"},
		{"two\nlines\r", `two\nlines\r`},
		{"a\x1b]0;t\x07.sh", `a\x1b]0;t\x07.sh`},
		{"c1 \u009b2J del \x7f", `c1 \u009b2J del \x7f`},
		{"evil\u202ehs.exe", `evil\u202ehs.exe`},
		{"zero\u200bwidth", `zero\u200bwidth`},
		{"é 中 ✅", "é 中 ✅"},
	} {
		if got := oneLine(tt.in); got != tt.want {
			t.Errorf("oneLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
