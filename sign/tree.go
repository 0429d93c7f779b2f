package sign

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of List, Digest and DigestAny. A skill is a handful of small
// files; a folder beyond these is refused rather than hashed for minutes.
const (
	MaxEntries = 10000     // files, folders, symlinks and others
	MaxBytes   = 256 << 20 // total bytes of regular files
)

// ErrTooLarge is returned (wrapped) when a folder has more than MaxEntries
// entries or more than MaxBytes bytes of regular files.
var ErrTooLarge = errors.New("skill folder too large to digest")

// Entry is one entry below a skill folder.
type Entry struct {
	// Path is relative to the folder, with '/' separators.
	Path string
	// Type is the entry's type bits: 0 for a regular file, fs.ModeDir,
	// fs.ModeSymlink, fs.ModeNamedPipe and so on.
	Type fs.FileMode
}

// Tree is the listing of a skill folder made by List.
type Tree struct {
	// Root is the folder with symlinks resolved.
	Root string
	// Entries holds every entry below Root (Root itself excluded), sorted
	// by Path as bytes. Symlinks below Root are listed, never followed.
	Entries []Entry
}

// List lists the folder dir and everything below it, up to MaxEntries
// entries. A symlink given as dir itself is followed; nothing below it is.
func List(dir string) (*Tree, error) {
	return list(dir, MaxEntries)
}

func list(dir string, maxEntries int) (*Tree, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a folder", dir)
	}
	t := &Tree{Root: root}
	if err := t.walk("", maxEntries); err != nil {
		return nil, err
	}
	slices.SortFunc(t.Entries, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return t, nil
}

// walk lists the folder rel and everything below it, reading directories
// in batches so that a huge folder is refused without being read whole.
func (t *Tree) walk(rel string, maxEntries int) error {
	// Non-blocking: a FIFO swapped in for the folder does not block the
	// open (its listing then fails), and on Linux os.Open would spend
	// four fcntl calls making the descriptor non-blocking and back.
	f, err := openNonblock(filepath.Join(t.Root, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	defer f.Close()
	var subdirs []string
	for {
		batch, err := f.ReadDir(256)
		for _, de := range batch {
			if len(t.Entries) >= maxEntries {
				return fmt.Errorf("%w: more than %d entries", ErrTooLarge, maxEntries)
			}
			child := path.Join(rel, de.Name())
			t.Entries = append(t.Entries, Entry{Path: child, Type: de.Type()})
			if de.IsDir() {
				subdirs = append(subdirs, child)
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			break
		}
		if err != nil {
			return err
		}
	}
	for _, sub := range subdirs {
		if err := t.walk(sub, maxEntries); err != nil {
			return err
		}
	}
	return nil
}

// Open opens the regular file rel of the tree for reading without
// following a symlink or blocking on a FIFO swapped in after the listing;
// it fails if rel is no longer a regular file. The caller closes the file.
func (t *Tree) Open(rel string) (*os.File, fs.FileInfo, error) {
	f, err := openRegular(filepath.Join(t.Root, filepath.FromSlash(rel)))
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s changed type while being read", rel)
	}
	return f, st, nil
}

// typeName names a non-regular, non-folder entry type.
func typeName(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symlink"
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

// Readlink returns the target text of the symlink rel of the tree, as
// listed (rel is slash-separated and relative to Root).
func (t *Tree) Readlink(rel string) (string, error) {
	return os.Readlink(filepath.Join(t.Root, filepath.FromSlash(rel)))
}
