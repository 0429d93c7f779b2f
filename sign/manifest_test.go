package sign

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestGolden pins the manifest text of a fixed tree.
func TestManifestGolden(t *testing.T) {
	got, err := Manifest(makeSkill(t))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "manifest.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("manifest:\n%s\ngolden:\n%s", got, want)
	}
	if d, _ := Digest(makeSkill(t)); d != sumHex(want) {
		t.Errorf("Digest %s is not the SHA-256 of the manifest", d)
	}
}

func TestDigestRefuses(t *testing.T) {
	tests := []struct {
		name string
		make func(dir string) error
		want string
	}{
		{"symlink inside", func(dir string) error {
			return os.Symlink("a.txt", filepath.Join(dir, "references/link"))
		}, `"references/link": symlink not allowed`},
		{"symlink as SKILL.sig", func(dir string) error {
			return os.Symlink("SKILL.md", filepath.Join(dir, SignatureFile))
		}, `"SKILL.sig": symlink`},
		{"newline in a name", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "a\nb"), nil, 0o644)
		}, `"a\nb": newline-name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeSkill(t)
			if err := tt.make(dir); err != nil {
				t.Fatal(err)
			}
			_, err := Digest(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Digest error %v, want it to contain %q", err, tt.want)
			}
			if _, err := DigestAny(dir); err != nil {
				t.Errorf("DigestAny: %v", err)
			}
		})
	}
}

// shellDigest extracts the skill_digest function from docs/signing.md.
func shellDigest(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "signing.md"))
	if err != nil {
		t.Fatal(err)
	}
	const marker = "# skill_digest DIR:"
	s := string(doc)
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatal("docs/signing.md has no skill_digest block")
	}
	end := strings.Index(s[i:], "\n```")
	if end < 0 {
		t.Fatal("unterminated skill_digest block")
	}
	return s[i : i+end+1]
}

// TestDigestShellPipeline runs the documented shell function against the
// Go code, so the specification and the implementation cannot drift.
func TestDigestShellPipeline(t *testing.T) {
	for _, tool := range []string{"bash", "find", "sort", "sha256sum", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: the documented pipeline needs it", tool)
		}
	}
	fn := shellDigest(t)
	trees := map[string]func(t *testing.T) string{
		"makeSkill": func(t *testing.T) string { return makeSkill(t) },
		"with signature and odd names": func(t *testing.T) string {
			dir := makeSkill(t)
			for name, mode := range map[string]os.FileMode{
				SignatureFile:                  0o644,
				"scripts/" + SignatureFile:     0o644,
				"références/é.md":              0o644,
				"a b/c d.txt":                  0o600,
				"a.b/x":                        0o700,
				"a/b":                          0o640,
				"-dash":                        0o644,
				"scripts/tool":                 0o711,
				"ünïcode/\u200bzero-width.txt": 0o644,
			} {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(name), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, mode); err != nil {
					t.Fatal(err)
				}
			}
			return dir
		},
		"empty": func(t *testing.T) string { return t.TempDir() },
	}
	for name, mk := range trees {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			want, err := Digest(dir)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "-c", fn+`skill_digest "$1"`, "bash", dir)
			cmd.Env = append(os.Environ(), "LC_ALL=en_US.UTF-8")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("pipeline: %v", err)
			}
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("shell digest %s, Go digest %s", got, want)
			}
		})
	}
	t.Run("refuses a symlink", func(t *testing.T) {
		dir := makeLinkedSkill(t)
		if err := exec.Command("bash", "-c", fn+`skill_digest "$1"`, "bash", dir).Run(); err == nil {
			t.Error("pipeline accepted a symlink")
		}
	})
}

func BenchmarkDigest(b *testing.B) {
	dir := makeSkill(b)
	for b.Loop() {
		if _, err := Digest(dir); err != nil {
			b.Fatal(err)
		}
	}
}
