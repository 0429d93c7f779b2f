package sign

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"
)

// ManifestHeader is the first line of every manifest; it names the format
// version, so a future format can never produce the same digest.
const ManifestHeader = "skill-sandbox-manifest-v1\n"

// SignatureFile is where a skill's detached signature lives, relative to
// the skill folder. A regular file by that name at the root is left out of
// the digest.
const SignatureFile = "SKILL.sig"

// Manifest returns the canonical manifest of the skill folder dir, the text
// whose SHA-256 is Digest(dir): ManifestHeader, then one line per regular
// file in byte order of its path,
//
//	MODE SP SHA256HEX SP PATH LF
//
// where MODE is "755" when any execute bit is set and "644" otherwise.
// Folders are implied by the paths (an empty folder adds nothing).
// SignatureFile at the root is skipped. Symlinks, FIFOs, sockets, devices
// and paths holding a newline are refused with an error naming them.
func Manifest(dir string) ([]byte, error) {
	m, _, err := manifest(dir, true, MaxEntries, MaxBytes)
	return m, err
}

// Digest returns the canonical digest of the skill folder dir: the SHA-256
// of Manifest(dir) as 64 lowercase hex digits. A signature signs exactly
// Message(Digest(dir)).
func Digest(dir string) (string, error) {
	m, err := Manifest(dir)
	if err != nil {
		return "", err
	}
	return sumHex(m), nil
}

// DigestAny is Digest for any folder: where Digest refuses an entry,
// DigestAny hashes a line describing it instead (see docs/signing.md), so
// that every folder has a digest. For a folder Digest accepts, both are
// equal. Audit records use it to identify whatever was run.
func DigestAny(dir string) (string, error) {
	return DigestAnyCached(dir, nil)
}

// Message returns the bytes a signature signs for a digest: its 64 hex
// digits and a newline, exactly what "skill-sandbox digest" prints.
func Message(digest string) []byte {
	return []byte(digest + "\n")
}

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// manifest builds the manifest of dir; strict refuses what cannot be
// signed, otherwise such entries get a "!" line. It also returns the tree.
func manifest(dir string, strict bool, maxEntries int, maxBytes int64) ([]byte, *Tree, error) {
	return manifestCached(dir, strict, maxEntries, maxBytes, nil)
}

// manifestCached is manifest with a cache of file hashes (nil: none).
func manifestCached(dir string, strict bool, maxEntries int, maxBytes int64, cache *HashCache) ([]byte, *Tree, error) {
	t, err := list(dir, maxEntries)
	if err != nil {
		return nil, nil, fmt.Errorf("digest: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(ManifestHeader)
	budget := maxBytes
	for _, e := range t.Entries {
		if e.Type == fs.ModeDir {
			continue
		}
		if e.Type == 0 && e.Path == SignatureFile {
			continue
		}
		bad := unsignable(e)
		if bad != "" && strict {
			return nil, nil, fmt.Errorf("digest: %s: %s not allowed in a signable skill (only regular files and folders are)", strconv.Quote(e.Path), bad)
		}
		switch {
		case e.Type == fs.ModeSymlink:
			target, err := t.Readlink(e.Path)
			if err != nil {
				return nil, nil, fmt.Errorf("digest: %w", err)
			}
			fmt.Fprintf(&b, "! symlink %s %s\n", sumHex([]byte(target)), strconv.Quote(e.Path))
		case e.Type != 0:
			fmt.Fprintf(&b, "! %s - %s\n", bad, strconv.Quote(e.Path))
		default:
			sum, exec, n, err := hashFile(t, e.Path, budget, maxBytes, cache, strict)
			if err != nil {
				return nil, nil, err
			}
			budget -= n
			mode := modeText(exec)
			if bad != "" {
				fmt.Fprintf(&b, "! %s-%s %s %s\n", bad, mode, sum, strconv.Quote(e.Path))
			} else {
				fmt.Fprintf(&b, "%s %s %s\n", mode, sum, e.Path)
			}
		}
	}
	return b.Bytes(), t, nil
}

// hashFile hashes the regular file rel within budget bytes and returns its
// SHA-256 in hex, whether any execute bit is set and its size; for the
// signable digest (strict) a cached hash counts only if this process
// computed it.
func hashFile(t *Tree, rel string, budget, maxBytes int64, cache *HashCache, strict bool) (string, bool, int64, error) {
	seen := time.Now()
	f, st, err := t.Open(rel)
	if err != nil {
		return "", false, 0, fmt.Errorf("digest: %w", err)
	}
	defer f.Close()
	exec := st.Mode().Perm()&0o111 != 0
	abs := filepath.Join(t.Root, filepath.FromSlash(rel))
	// The signable digest (strict) is what signatures are checked
	// against: it uses only hashes computed by this process.
	if sum, ok := cache.lookup(abs, st, strict); ok {
		if st.Size() > budget {
			return "", false, 0, fmt.Errorf("digest: %w: more than %d bytes", ErrTooLarge, maxBytes)
		}
		return sum, exec, st.Size(), nil
	}
	sum, n, err := hashWithin(f, nil, budget, maxBytes)
	if err != nil {
		return "", false, 0, err
	}
	if n == st.Size() {
		cache.store(abs, st, sum, seen)
	}
	return sum, exec, n, nil
}

// hashWithin reads r to its end, at most budget bytes (what is left of
// maxBytes), and returns the SHA-256 in hex and the size; the bytes also
// go to copyTo when it is not nil (the verified copy).
func hashWithin(r io.Reader, copyTo io.Writer, budget, maxBytes int64) (string, int64, error) {
	h := sha256.New()
	var w io.Writer = h
	if copyTo != nil {
		w = io.MultiWriter(copyTo, h)
	}
	n, err := io.Copy(w, io.LimitReader(r, budget+1))
	if err != nil {
		return "", 0, fmt.Errorf("digest: %w", err)
	}
	if n > budget {
		return "", 0, fmt.Errorf("digest: %w: more than %d bytes", ErrTooLarge, maxBytes)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}
