package sign

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// signSkill signs dir with testKey's key (Go only, no ssh-keygen) and
// returns an allowed_signers file trusting it.
func signSkill(t *testing.T, dir string) string {
	t.Helper()
	digest, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	writeFile(t, filepath.Join(dir, SignatureFile), SignEd25519(priv, Namespace, Message(digest)))
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	writeFile(t, allowed, []byte("alice@example.com "+testKey(t)+"\n"))
	return allowed
}

// TestVerifyCopy: the copy VerifyCopy returns is the folder as verified:
// same digest, files, modes and signature, named like the folder, and
// untouched by later changes to the folder; remove deletes it. What
// VerifySkill refuses, VerifyCopy refuses.
func TestVerifyCopy(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, skill string) // before the check
		want   error                            // nil: verified
	}{
		{"signed", func(*testing.T, string) {}, nil},
		{"empty folder added", func(t *testing.T, skill string) {
			if err := os.Mkdir(filepath.Join(skill, "cache"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"file changed", func(t *testing.T, skill string) {
			writeFile(t, filepath.Join(skill, "scripts", "run.py"), []byte("print('evil')\n"))
		}, ErrNotVerified},
		{"symlink added", func(t *testing.T, skill string) {
			if err := os.Symlink("run.py", filepath.Join(skill, "scripts", "alias.py")); err != nil {
				t.Fatal(err)
			}
		}, ErrNotVerified},
		{"unsigned", func(t *testing.T, skill string) {
			if err := os.Remove(filepath.Join(skill, SignatureFile)); err != nil {
				t.Fatal(err)
			}
		}, ErrUnsigned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			skill := makeSkill(t)
			// The modes the copy is checked for, whatever the umask.
			for rel, mode := range map[string]os.FileMode{"scripts/run.py": 0o644, "scripts/run.sh": 0o755} {
				if err := os.Chmod(filepath.Join(skill, rel), mode); err != nil {
					t.Fatal(err)
				}
			}
			allowed := signSkill(t, skill)
			tt.change(t, skill)
			// The copy goes under a temporary folder of the test's own, so
			// that what remove leaves behind, on every path, can be seen.
			tmp := t.TempDir()
			for _, v := range []string{"TMPDIR", "TMP", "TEMP"} {
				t.Setenv(v, tmp)
			}
			s, cp, remove, err := VerifyCopy(skill, allowed, Options{})
			defer remove()
			if !errors.Is(err, tt.want) || (err != nil && !errors.Is(err, ErrNotVerified)) {
				t.Fatalf("VerifyCopy: %v, want %v", err, tt.want)
			}
			if err != nil {
				remove()
				if cp != "" {
					t.Errorf("a refused folder has a copy %q", cp)
				}
				// A refusal part-way through the copy (the symlink) or
				// after it (the changed file) leaves nothing once removed.
				if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
					t.Errorf("after remove, %s holds %v (%v)", tmp, left, err)
				}
				return
			}
			if filepath.Base(cp) != filepath.Base(skill) || cp == skill {
				t.Errorf("copy %s is not a new folder named like %s", cp, skill)
			}
			if d, err := Digest(cp); err != nil || d != s.Digest {
				t.Errorf("Digest(copy) = %s, %v; verified %s", d, err, s.Digest)
			}
			for rel, want := range map[string]os.FileMode{".": 0o755 | os.ModeDir, "scripts": 0o755 | os.ModeDir,
				"scripts/run.sh": 0o755, "scripts/run.py": 0o644, SignatureFile: 0o644} {
				if st, err := os.Stat(filepath.Join(cp, rel)); err != nil || st.Mode() != want {
					t.Errorf("%s in the copy: %v, %v; want mode %v", rel, st.Mode(), err, want)
				}
			}
			sig, _ := os.ReadFile(filepath.Join(skill, SignatureFile))
			if got, _ := os.ReadFile(filepath.Join(cp, SignatureFile)); string(got) != string(sig) {
				t.Errorf("the copy's signature differs from the one checked")
			}
			// The folder changes after the check; the copy does not.
			writeFile(t, filepath.Join(skill, "scripts", "run.py"), []byte("print('evil')\n"))
			if got, _ := os.ReadFile(filepath.Join(cp, "scripts", "run.py")); string(got) != "print('hi')\n" {
				t.Errorf("the copy changed with the folder: %q", got)
			}
			remove()
			if _, err := os.Stat(filepath.Dir(cp)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("remove left %s: %v", filepath.Dir(cp), err)
			}
		})
	}
}

// TestVerifyCopyParentMode: the copy's private parent folder lets others
// pass through (0711) only when they could enter the skill folder itself,
// so a root caller's sandbox identity reaches the copy as it reached the
// folder, and a private skill is not exposed by its copy.
func TestVerifyCopyParentMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits on Windows")
	}
	for _, tt := range []struct {
		skill, want os.FileMode
	}{
		{0o755, 0o711},
		{0o751, 0o711},
		{0o750, 0o700},
		{0o700, 0o700},
	} {
		t.Run(tt.skill.String(), func(t *testing.T) {
			skill := makeSkill(t)
			allowed := signSkill(t, skill)
			if err := os.Chmod(skill, tt.skill); err != nil {
				t.Fatal(err)
			}
			_, cp, remove, err := VerifyCopy(skill, allowed, Options{})
			defer remove()
			if err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(filepath.Dir(cp)); err != nil || st.Mode().Perm() != tt.want {
				t.Errorf("parent of the copy: %v, %v; want %v", st.Mode().Perm(), err, tt.want)
			}
		})
	}
}

// TestCopyManifestBounds: the copy is bounded like a digest: a folder
// with more entries or more bytes than allowed is refused with
// ErrTooLarge, and the copy then holds no more than the byte budget and
// one byte; within the bounds, the copy's manifest is the folder's.
func TestCopyManifestBounds(t *testing.T) {
	skill := makeSkill(t)
	want, _, err := manifest(skill, true, MaxEntries, MaxBytes)
	if err != nil {
		t.Fatal(err)
	}
	var total int64 // of makeSkill's files (it has more than 3 entries)
	filepath.WalkDir(skill, func(p string, d os.DirEntry, err error) error {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && d.Name() != SignatureFile {
			total += st.Size()
		}
		return nil
	})
	tests := []struct {
		name       string
		maxEntries int
		maxBytes   int64
		tooLarge   bool
	}{
		{"within", MaxEntries, MaxBytes, false},
		{"exact bytes", MaxEntries, total, false},
		{"one byte short", MaxEntries, total - 1, true},
		{"few bytes", MaxEntries, 5, true},
		{"too many entries", 3, MaxBytes, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "copy")
			m, err := copyManifest(skill, dst, []byte("sig\n"), tt.maxEntries, tt.maxBytes)
			if tt.tooLarge {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("copyManifest: %v, want ErrTooLarge", err)
				}
			} else if err != nil || string(m) != string(want) {
				t.Fatalf("copyManifest: %v\n%s\nwant the folder's manifest\n%s", err, m, want)
			}
			var copied int64
			filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() && d.Name() != SignatureFile {
					if st, err := d.Info(); err == nil {
						copied += st.Size()
					}
				}
				return nil
			})
			if copied > tt.maxBytes+1 {
				t.Errorf("the copy holds %d bytes, over the budget of %d", copied, tt.maxBytes)
			}
		})
	}
}

// TestVerifyCopyFileModes: a file of the copy is 0644 or 0755 (by its
// execute bit), but never more open to the group and others than the
// original: a file others could not read in the skill folder cannot be
// read by them in the copy either.
func TestVerifyCopyFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits on Windows")
	}
	tests := []struct {
		rel       string
		src, want os.FileMode
	}{
		{"scripts/run.py", 0o644, 0o644},
		{"scripts/run.py", 0o600, 0o600},
		{"scripts/run.py", 0o640, 0o640},
		{"scripts/run.py", 0o444, 0o644},
		{"scripts/run.sh", 0o755, 0o755},
		{"scripts/run.sh", 0o700, 0o700},
		{"scripts/run.sh", 0o750, 0o750},
		{"scripts/run.sh", 0o711, 0o711},
	}
	for _, tt := range tests {
		t.Run(tt.rel+"-"+tt.src.String(), func(t *testing.T) {
			skill := makeSkill(t)
			allowed := signSkill(t, skill)
			// The execute bit is unchanged, so the digest is too.
			if err := os.Chmod(filepath.Join(skill, filepath.FromSlash(tt.rel)), tt.src); err != nil {
				t.Fatal(err)
			}
			_, cp, remove, err := VerifyCopy(skill, allowed, Options{})
			defer remove()
			if err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(filepath.Join(cp, filepath.FromSlash(tt.rel))); err != nil || st.Mode().Perm() != tt.want {
				t.Errorf("%s (%v) in the copy: %v, %v; want %v", tt.rel, tt.src, st.Mode().Perm(), err, tt.want)
			}
		})
	}
}
