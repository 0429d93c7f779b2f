package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoad(t *testing.T) {
	const pyDeps = "[project]\ndependencies = [\"a>=1\"]\n"
	tests := []struct {
		files   map[string]string
		want    string // Normalised, or the error's text with err set
		err     bool
		nothing bool
	}{
		{files: map[string]string{}, nothing: true},
		{files: map[string]string{"requirements.txt": "# none yet\n"}, nothing: true},
		{files: map[string]string{"requirements.txt": "a\n"}, want: "a\n"},
		{files: map[string]string{"scripts/requirements.txt": "b>=1\n"}, want: "b>=1\n"},
		{files: map[string]string{"requirements.txt": "a\n", "scripts/requirements.txt": "b\n"}, want: "declares its requirements in one file", err: true},
		{files: map[string]string{"requirements.txt": "-e .\n"}, want: "requirements.txt:1: editable", err: true},
		{files: map[string]string{"pyproject.toml": pyDeps}, want: "a>=1\n"},
		{files: map[string]string{"scripts/pyproject.toml": pyDeps}, want: "a>=1\n"},
		{files: map[string]string{"pyproject.toml": "[tool.ruff]\nx = 1\n"}, nothing: true},
		{files: map[string]string{"pyproject.toml": "[tool.ruff]\n", "requirements.txt": "b\n"}, want: "b\n"},
		{files: map[string]string{"pyproject.toml": "[project]\ndynamic = [\"dependencies\"]\n", "requirements.txt": "b\n"}, want: "b\n"},
		{files: map[string]string{"pyproject.toml": "[project]\ndynamic = [\"dependencies\"]\n"}, want: "lists dependencies, which only the build backend computes", err: true},
		{files: map[string]string{"pyproject.toml": pyDeps, "requirements.txt": "b\n"}, want: "declares its requirements in one file", err: true},
		{files: map[string]string{"pyproject.toml": pyDeps, "scripts/pyproject.toml": pyDeps}, want: "a skill has one pyproject.toml", err: true},
		{files: map[string]string{"pyproject.toml": "[project\n"}, want: "pyproject.toml:1: want \"]\"", err: true},
	}
	for i, tt := range tests {
		dir := t.TempDir()
		for name, body := range tt.files {
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		deps, err := Load(dir)
		switch {
		case tt.err:
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%d: error %v, want %q", i, err, tt.want)
			}
		case err != nil:
			t.Errorf("%d: %v", i, err)
		case tt.nothing != (deps == nil):
			t.Errorf("%d: deps %+v", i, deps)
		case deps != nil && string(deps.Normalised) != tt.want:
			t.Errorf("%d: normalised %q, want %q", i, deps.Normalised, tt.want)
		}
	}
	// A link is refused, not followed.
	dir := t.TempDir()
	os.Symlink("/etc/passwd", filepath.Join(dir, "requirements.txt"))
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("link: %v", err)
	}
}

// TestLoadPublished: the requirements files of published skills in
// testdata are accepted.
func TestLoadPublished(t *testing.T) {
	deps, err := Load(filepath.Join("..", "testdata", "scan", "anthropic", "mcp-builder"))
	if err != nil || deps == nil || string(deps.Normalised) != "anthropic>=0.39.0\nmcp>=1.1.0\n" {
		t.Fatalf("mcp-builder: %+v %v", deps, err)
	}
}
