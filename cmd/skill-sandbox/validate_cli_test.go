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

// TestListCLI checks list's JSON; testdata/script/list.txt its table
// and errors.
func TestListCLI(t *testing.T) {
	example := repoPath("testdata", "example", "word-stats")

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
