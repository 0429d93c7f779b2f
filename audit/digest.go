package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
)

// Bounds of DigestDir. A skill is a handful of small files; a folder
// beyond these is refused rather than hashed for minutes.
const (
	DigestMaxEntries = 10000     // files, folders, symlinks and others
	DigestMaxBytes   = 256 << 20 // total bytes of regular files
)

// ErrDigestLimit is returned (wrapped) by DigestDir when the folder exceeds
// DigestMaxEntries or DigestMaxBytes.
var ErrDigestLimit = errors.New("skill folder too large to digest")

// digestHeader starts the hashed stream; it names the format version.
const digestHeader = "skill-sandbox-digest-v1\x00"

// DigestDir returns a deterministic SHA-256, as 64 lowercase hex digits,
// over the whole folder dir: every entry below it (the folder itself
// excluded) in byte order of its slash-separated relative path, each with
// its type and
//
//   - regular files: the executable bit (as git keeps it: "755" when any x
//     bit is set, else "644"), the size and the SHA-256 of the content;
//   - symbolic links: the target text (links are never followed);
//   - folders: nothing more;
//   - FIFOs, sockets and devices: their type only (they are never opened).
//
// The exact byte stream is specified in docs/audit.md so that the digest
// can be recomputed elsewhere. Ownership, timestamps and permission bits
// other than x are left out, so two checkouts of the same commit agree. A
// symlink to dir itself is followed; nothing below it is.
func DigestDir(dir string) (string, error) {
	return digestDir(dir, DigestMaxEntries, DigestMaxBytes)
}

// digestDir is DigestDir with the bounds as parameters.
func digestDir(dir string, maxEntries int, maxBytes int64) (string, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	st, err := os.Stat(root)
	if err != nil {
		return "", fmt.Errorf("digest: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("digest: %s is not a folder", dir)
	}
	d := digester{root: root, maxEntries: maxEntries, maxBytes: maxBytes}
	if err := d.walk(""); err != nil {
		return "", err
	}
	slices.SortFunc(d.entries, func(a, b entry) int {
		switch {
		case a.rel < b.rel:
			return -1
		case a.rel > b.rel:
			return 1
		}
		return 0
	})
	h := sha256.New()
	io.WriteString(h, digestHeader)
	for _, e := range d.entries {
		if err := d.write(h, e); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type entry struct {
	rel  string // slash-separated, relative to the root
	mode fs.FileMode
}

type digester struct {
	root       string
	maxEntries int
	maxBytes   int64
	entries    []entry
	bytes      int64 // regular-file bytes hashed so far
}

// walk lists the folder rel (relative to the root) and everything below
// it, reading directories in batches so that a huge folder is refused
// without being read whole.
func (d *digester) walk(rel string) error {
	f, err := os.Open(filepath.Join(d.root, filepath.FromSlash(rel)))
	if err != nil {
		return fmt.Errorf("digest: %w", err)
	}
	defer f.Close()
	var subdirs []string
	for {
		batch, err := f.ReadDir(256)
		for _, de := range batch {
			if len(d.entries) >= d.maxEntries {
				return fmt.Errorf("digest: %w: more than %d entries", ErrDigestLimit, d.maxEntries)
			}
			child := path.Join(rel, de.Name())
			d.entries = append(d.entries, entry{rel: child, mode: de.Type()})
			if de.IsDir() {
				subdirs = append(subdirs, child)
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return fmt.Errorf("digest: %w", err)
		}
	}
	for _, sub := range subdirs {
		if err := d.walk(sub); err != nil {
			return err
		}
	}
	return nil
}

// write adds the record of one entry to h.
func (d *digester) write(h hash.Hash, e entry) error {
	abs := filepath.Join(d.root, filepath.FromSlash(e.rel))
	field := func(s string) {
		io.WriteString(h, s)
		h.Write([]byte{0})
	}
	switch t := e.mode.Type(); {
	case t == fs.ModeDir:
		field("d")
		field(e.rel)
	case t == fs.ModeSymlink:
		target, err := os.Readlink(abs)
		if err != nil {
			return fmt.Errorf("digest: %w", err)
		}
		field("l")
		field(e.rel)
		field(target)
	case t == 0:
		sum, size, exec, err := d.hashFile(abs)
		if err != nil {
			return err
		}
		mode := "644"
		if exec {
			mode = "755"
		}
		field("f")
		field(e.rel)
		field(mode)
		field(strconv.FormatInt(size, 10))
		field(sum)
	default:
		field("o")
		field(e.rel)
		field(typeName(t))
	}
	return nil
}

// hashFile hashes one regular file without following a symlink or blocking
// on a FIFO swapped in after the listing, within the remaining byte budget.
func (d *digester) hashFile(abs string) (sum string, size int64, exec bool, err error) {
	f, err := openRegular(abs)
	if err != nil {
		return "", 0, false, fmt.Errorf("digest: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, false, fmt.Errorf("digest: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("digest: %s changed type while being read", abs)
	}
	budget := d.maxBytes - d.bytes
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, budget+1))
	if err != nil {
		return "", 0, false, fmt.Errorf("digest: %w", err)
	}
	if n > budget {
		return "", 0, false, fmt.Errorf("digest: %w: more than %d bytes", ErrDigestLimit, d.maxBytes)
	}
	d.bytes += n
	return hex.EncodeToString(h.Sum(nil)), n, st.Mode().Perm()&0o111 != 0, nil
}

func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeNamedPipe != 0:
		return "fifo"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeCharDevice != 0:
		return "chardev"
	case t&fs.ModeDevice != 0:
		return "blockdev"
	default:
		return "other"
	}
}
