package sign

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// copyManifest copies the skill folder dir into dst, which must not exist
// yet, and returns the manifest of the copy: each file is hashed from the
// bytes written to dst, and its mode taken from the same open file, so the
// copy is exactly what the manifest names whatever happens to dir during
// or after the copy. sig, the signature that will be checked, is written
// as dst's SignatureFile (left out of the manifest, as always). Entries
// Manifest refuses are refused here too. On an error dst may hold part of
// the copy; the caller removes it. maxEntries and maxBytes bound the copy
// as they bound a digest (MaxEntries and MaxBytes in VerifySkillWith).
func copyManifest(dir, dst string, sig []byte, maxEntries int, maxBytes int64) ([]byte, error) {
	t, err := list(dir, maxEntries)
	if err != nil {
		return nil, fmt.Errorf("digest: %w", err)
	}
	if err := mkdirMode(dst); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(ManifestHeader)
	budget := maxBytes
	for _, e := range t.Entries {
		to := filepath.Join(dst, filepath.FromSlash(e.Path))
		switch {
		case e.Type == fs.ModeDir:
			if err := mkdirMode(to); err != nil {
				return nil, err
			}
			continue
		case e.Type == 0 && e.Path == SignatureFile:
			continue
		}
		if bad := unsignable(e); bad != "" {
			return nil, fmt.Errorf("digest: %s: %s not allowed in a signable skill (only regular files and folders are)", strconv.Quote(e.Path), bad)
		}
		sum, exec, n, err := copyFile(t, e.Path, to, budget, maxBytes)
		if err != nil {
			return nil, err
		}
		budget -= n
		fmt.Fprintf(&b, "%s %s %s\n", modeText(exec), sum, e.Path)
	}
	sigPath := filepath.Join(dst, SignatureFile)
	if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(sigPath, 0o644); err != nil { // not the umask's choice
		return nil, err
	}
	return b.Bytes(), nil
}

// copyFile copies the regular file rel of t to the new file to within
// budget bytes (what is left of maxBytes), and returns the SHA-256 of the
// bytes written, whether the source had an execute bit (the copy gets
// 0755, else 0644, less the group and other bits the source lacks) and
// the size.
func copyFile(t *Tree, rel, to string, budget, maxBytes int64) (string, bool, int64, error) {
	src, st, err := t.Open(rel)
	if err != nil {
		return "", false, 0, fmt.Errorf("digest: %w", err)
	}
	defer src.Close()
	exec := st.Mode().Perm()&0o111 != 0
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, 0, err
	}
	sum, n, err := hashWithin(src, out, budget, maxBytes)
	if err == nil {
		mode := fs.FileMode(0o644)
		if exec {
			mode = 0o755
		}
		// Never more open than the original to the group and others: a
		// file others could not read in the skill folder stays so in the
		// copy, whose path under $TMPDIR they may guess.
		mode &= st.Mode().Perm() | 0o700
		err = out.Chmod(mode) // not the umask's choice
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, 0, err
	}
	return sum, exec, n, nil
}

// mkdirMode makes the folder dir with mode 0755 whatever the umask.
func mkdirMode(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o755)
}

// modeText is a manifest line's MODE.
func modeText(exec bool) string {
	if exec {
		return "755"
	}
	return "644"
}

// unsignable names what makes the entry e unsignable ("symlink",
// "newline-name", ...), or returns "" for a regular file or folder with a
// name Manifest accepts.
func unsignable(e Entry) string {
	switch {
	case e.Type != 0 && e.Type != fs.ModeDir:
		return typeName(e.Type)
	case bytes.ContainsRune([]byte(e.Path), '\n'):
		return "newline-name"
	}
	return ""
}

// VerifyCopy is VerifySkillWith with opts.CopyTo set to a new private
// folder under os.TempDir(): it returns the signer and the verified copy
// of dir, named like dir (validation compares a skill's folder name with
// its name), which the caller runs instead of dir. remove deletes the copy;
// call it when the run is over, on error too (it is never nil).
func VerifyCopy(dir, allowedSigners string, opts Options) (s *Signer, copyDir string, remove func(), err error) {
	remove = func() {}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, "", remove, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, "", remove, fmt.Errorf("%w: %w", ErrNotVerified, err)
	}
	tmp, err := os.MkdirTemp(copyTemp(), "skill-sandbox-verified-")
	if err != nil {
		return nil, "", remove, fmt.Errorf("%w: verified copy: %w", ErrNotVerified, err)
	}
	remove = func() { os.RemoveAll(tmp) }
	// MkdirTemp's folder is private (0700). A skill folder others may
	// enter gets a parent they may enter too (not list): a root caller's
	// sandbox runs as another identity, which must reach the copy as it
	// reached the folder. A private skill folder keeps a private copy.
	if st.Mode().Perm()&0o001 != 0 {
		if err := os.Chmod(tmp, 0o711); err != nil {
			return nil, "", remove, fmt.Errorf("%w: verified copy: %w", ErrNotVerified, err)
		}
	}
	opts.CopyTo = filepath.Join(tmp, filepath.Base(abs))
	s, err = VerifySkillWith(dir, allowedSigners, opts)
	if err != nil {
		return nil, "", remove, err
	}
	return s, opts.CopyTo, remove, nil
}

// copyTemp is the folder VerifyCopy makes its copy in: os.TempDir(), or
// /tmp when that lies in /dev, /proc, /sys or /run (TMPDIR=/dev/shm,
// /run/user/UID), trees of which a sandbox has its own copy, where the
// copy's path would not exist for the script.
func copyTemp() string {
	tmp := os.TempDir()
	if real, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = real
	}
	for _, n := range []string{"/dev", "/proc", "/sys", "/run"} {
		if tmp == n || strings.HasPrefix(tmp, n+"/") {
			if st, err := os.Lstat("/tmp"); err == nil && st.IsDir() {
				return "/tmp"
			}
		}
	}
	return tmp
}
