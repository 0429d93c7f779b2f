package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

func TestDigestCLI(t *testing.T) {
	example := repoPath("testdata", "example", "word-stats")
	want, err := sign.Digest(example)
	if err != nil {
		t.Fatal(err)
	}
	linked := filepath.Join(t.TempDir(), "linked")
	if err := os.Mkdir(linked, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(linked, "passwd")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // exact, when not ""
		stderrPart string
	}{
		{"digest", []string{"digest", example}, 0, want + "\n", ""},
		{"manifest", []string{"digest", "--manifest", example}, 0, "", ""},
		{"symlink refused", []string{"digest", linked}, 1, "", `"passwd": symlink not allowed`},
		{"missing", []string{"digest", filepath.Join(linked, "nope")}, 1, "", "no such file"},
		{"no path", []string{"digest"}, 2, "", "exactly one PATH"},
		{"two paths", []string{"digest", example, example}, 2, "", "exactly one PATH"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, "", tt.args...)
			if r.Code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %s", r.Code, tt.code, r.Stderr)
			}
			if tt.stdout != "" && r.Stdout != tt.stdout {
				t.Errorf("stdout %q, want %q", r.Stdout, tt.stdout)
			}
			if !strings.Contains(r.Stderr, tt.stderrPart) {
				t.Errorf("stderr %q lacks %q", r.Stderr, tt.stderrPart)
			}
		})
	}
	m := runCLI(t, "", "digest", "--manifest", example).Stdout
	if !strings.HasPrefix(m, sign.ManifestHeader) || !strings.Contains(m, " SKILL.md\n") {
		t.Errorf("manifest output %q", m)
	}
}
