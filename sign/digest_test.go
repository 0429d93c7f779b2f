package sign

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// makeSkill writes a small skill tree under a new temporary folder.
func makeSkill(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	files := map[string]string{
		"SKILL.md":               "---\nname: demo\ndescription: d\n---\nbody\n",
		"scripts/run.py":         "print('hi')\n",
		"scripts/run.sh":         "echo hi\n",
		"references/a.txt":       "alpha\n",
		"references/a/b.txt":     "beta\n",
		"assets/empty":           "",
		"references/notes.md":    "# notes\n",
		"scripts/lib/helpers.py": "X = 1\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// makeLinkedSkill is makeSkill plus a symlink, which only DigestAny takes.
func makeLinkedSkill(t testing.TB) string {
	t.Helper()
	dir := makeSkill(t)
	if err := os.Symlink("a.txt", filepath.Join(dir, "references/link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func mustDigest(t *testing.T, dir string) string {
	t.Helper()
	d, err := DigestAny(dir)
	if err != nil {
		t.Fatal(err)
	}
	if strict, err := Digest(dir); err == nil && strict != d {
		t.Fatalf("Digest %s != DigestAny %s on a signable folder", strict, d)
	}
	if len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		t.Fatalf("digest %q is not 64 hex digits", d)
	}
	return d
}

func TestDigestChanges(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, dir string) error
		changes bool
	}{
		{"nothing", func(*testing.T, string) error { return nil }, false},
		{"content", func(_ *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, "scripts/run.py"), []byte("print('ho')\n"), 0o644)
		}, true},
		{"one byte appended to an empty file", func(_ *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, "assets/empty"), []byte{0}, 0o644)
		}, true},
		{"new empty file", func(_ *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, "assets/new"), nil, 0o644)
		}, true},
		{"new empty folder", func(_ *testing.T, dir string) error {
			return os.Mkdir(filepath.Join(dir, "assets/sub"), 0o755)
		}, false}, // folders are implied by file paths
		{"signature file added", func(_ *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, SignatureFile), []byte("sig"), 0o644)
		}, false},
		{"signature file name below the root", func(_ *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, "scripts", SignatureFile), []byte("sig"), 0o644)
		}, true},
		{"rename", func(_ *testing.T, dir string) error {
			return os.Rename(filepath.Join(dir, "references/notes.md"), filepath.Join(dir, "references/notes2.md"))
		}, true},
		{"file moved between folders", func(_ *testing.T, dir string) error {
			return os.Rename(filepath.Join(dir, "references/a/b.txt"), filepath.Join(dir, "references/b.txt"))
		}, true},
		{"executable bit set", func(_ *testing.T, dir string) error {
			return os.Chmod(filepath.Join(dir, "scripts/run.py"), 0o744)
		}, true},
		{"symlink target", func(_ *testing.T, dir string) error {
			p := filepath.Join(dir, "references/link")
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Symlink("notes.md", p)
		}, true},
		{"symlink replaced by its target's copy", func(_ *testing.T, dir string) error {
			p := filepath.Join(dir, "references/link")
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.WriteFile(p, []byte("alpha\n"), 0o644)
		}, true},
		{"group and other permissions", func(_ *testing.T, dir string) error {
			return os.Chmod(filepath.Join(dir, "references/a.txt"), 0o600)
		}, false},
		{"modification time", func(_ *testing.T, dir string) error {
			old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
			return os.Chtimes(filepath.Join(dir, "SKILL.md"), old, old)
		}, false},
		{"linked file outside changes", func(t *testing.T, dir string) error {
			// The link is hashed as its target text; what it points to
			// outside the folder is not read.
			outside := filepath.Join(t.TempDir(), "outside")
			if err := os.WriteFile(outside, []byte("1"), 0o644); err != nil {
				return err
			}
			p := filepath.Join(dir, "references/link")
			if err := os.Remove(p); err != nil {
				return err
			}
			if err := os.Symlink(outside, p); err != nil {
				return err
			}
			before, err := DigestAny(dir)
			if err != nil {
				return err
			}
			if err := os.WriteFile(outside, []byte("2"), 0o644); err != nil {
				return err
			}
			after, err := DigestAny(dir)
			if err != nil {
				return err
			}
			if before != after {
				return errors.New("digest followed a symlink out of the folder")
			}
			return nil
		}, true}, // the link target itself changed
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := makeLinkedSkill(t)
			before := mustDigest(t, dir)
			if again := mustDigest(t, dir); again != before {
				t.Fatalf("digest not stable: %s then %s", before, again)
			}
			if err := tt.change(t, dir); err != nil {
				t.Fatal(err)
			}
			after := mustDigest(t, dir)
			if (after != before) != tt.changes {
				t.Errorf("digest changed = %v, want %v", after != before, tt.changes)
			}
		})
	}
}

func TestDigestSameTreeElsewhere(t *testing.T) {
	a, b := makeSkill(t), makeSkill(t)
	if mustDigest(t, a) != mustDigest(t, b) {
		t.Error("the same tree in two places digests differently")
	}
	// A symlink to the folder digests like the folder.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	if mustDigest(t, link) != mustDigest(t, a) {
		t.Error("a symlink to the skill folder digests differently")
	}
}

// TestDigestGolden pins the digest of a fixed tree: the byte stream is
// specified in docs/signing.md and must never change (signatures depend on
// it).
func TestDigestGolden(t *testing.T) {
	got := mustDigest(t, makeSkill(t))
	golden := filepath.Join("testdata", "digest.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got+"\n" != string(want) {
		t.Errorf("digest %s, golden %s", got, want)
	}
}

func TestDigestErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(tmp, "missing"), file} {
		if _, err := DigestAny(dir); err == nil {
			t.Errorf("DigestAny(%s) succeeded", dir)
		}
	}
}

func TestDigestLimits(t *testing.T) {
	const maxEntries, maxBytes = 50, 1000
	tests := []struct {
		name    string
		files   int   // files directly in the folder
		nested  int   // files in a subfolder (the subfolder is an entry too)
		size    int64 // bytes per file
		wantErr bool
	}{
		{"at the entry limit", maxEntries, 0, 0, false},
		{"one entry too many", maxEntries + 1, 0, 0, true},
		{"too many below a subfolder", 10, maxEntries - 10, 0, true},
		{"at the byte limit", 10, 0, maxBytes / 10, false},
		{"one byte too many", 10, 0, maxBytes/10 + 1, true},
		{"one sparse file far too big", 1, 0, 1 << 40, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			create := func(name string) {
				f, err := os.Create(name)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				// Sparse: no disk space is used, but every byte is read.
				if err := f.Truncate(tt.size); err != nil {
					t.Fatal(err)
				}
			}
			for i := range tt.files {
				create(filepath.Join(dir, fmt.Sprint(i)))
			}
			if tt.nested > 0 {
				if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
					t.Fatal(err)
				}
				for i := range tt.nested {
					create(filepath.Join(dir, "sub", fmt.Sprint(i)))
				}
			}
			_, _, err := manifest(dir, true, maxEntries, maxBytes)
			if tt.wantErr != errors.Is(err, ErrTooLarge) || (!tt.wantErr && err != nil) {
				t.Errorf("manifest = %v, want limit error %v", err, tt.wantErr)
			}
		})
	}
	if _, err := Digest(t.TempDir()); err != nil {
		t.Errorf("empty folder: %v", err)
	}
}
