package validate

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenCase is what a golden file under testdata/golden/validate holds.
type goldenCase struct {
	Result      Result `json:"result"`
	StrictValid bool   `json:"strict_valid"`
}

// TestGoldenValidate validates every skill under testdata/skills and
// compares the result, and the verdict under Strict, with its golden file.
// Run "go test ./validate -run Golden -update" to rewrite the files, then
// review the diff.
func TestGoldenValidate(t *testing.T) {
	dirs, err := os.ReadDir(filepath.Join("..", "testdata", "skills"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 40 {
		t.Fatalf("only %d skills under testdata/skills; want at least 40", len(dirs))
	}
	for _, d := range dirs {
		name := d.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "testdata", "skills", name)
			r := Skill(dir, Options{})
			strict := Skill(dir, Options{Strict: true})
			r.Path = "testdata/skills/" + name
			got := marshalGolden(t, goldenCase{Result: r, StrictValid: strict.Valid})
			compareGolden(t, filepath.Join("..", "testdata", "golden", "validate", name+".json"), got)
		})
	}
}

// TestGoldenList lists the scripts, and all files, of a few skills and
// compares them with testdata/golden/list.
func TestGoldenList(t *testing.T) {
	for _, dir := range []string{
		"testdata/example/word-stats",
		"testdata/skills/pdf-processing",
		"testdata/skills/nested-scripts",
		"testdata/skills/shebang-tools",
		"testdata/skills/internal-symlink",
		"testdata/skills/symlink-escape",
	} {
		for _, all := range []bool{false, true} {
			name := filepath.Base(dir)
			if all {
				name += "-all"
			}
			t.Run(name, func(t *testing.T) {
				files, err := List(filepath.Join("..", filepath.FromSlash(dir)), all)
				if err != nil {
					t.Fatal(err)
				}
				compareGolden(t, filepath.Join("..", "testdata", "golden", "list", name+".json"), marshalGolden(t, files))
			})
		}
	}
}

func marshalGolden(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the result:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
