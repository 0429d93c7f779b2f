package grants

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// MakeWriteFolder creates dir (with its parents) when it is missing, the
// way a run creates a missing write folder, and returns the folders it
// created itself, parents first, also on error. Each is made with one
// mkdir, not MkdirAll, so that a folder a concurrent caller made first is
// not counted as ours and never removed by RemoveMade; see Mkdirs for why
// by descriptors. The folders belong to the caller when uid is the
// caller's or mapWrite reports that a folder made in the first one's
// parent is handed over id-mapped; otherwise the last is given to uid and
// gid, the run's host identity.
func MakeWriteFolder(dir string, uid, gid int, mapWrite func(parent string) bool) ([]string, error) {
	dir = filepath.Clean(dir)
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	slices.Reverse(missing) // parents first
	if uid == os.Geteuid() || len(missing) == 0 || mapWrite(filepath.Dir(missing[0])) {
		uid = -1 // the caller's own: no chown
	}
	return Mkdirs(missing, uid, gid)
}

// RemoveMade removes the folders MakeWriteFolder created, children first,
// when the run they were made for was refused. rmdir, not a recursive
// removal: a folder someone has put something in since is left alone.
func RemoveMade(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		syscall.Rmdir(made[i])
	}
}

// wouldMakeFolder is MakeWriteFolder's dry run (Request.Dry): it adds
// to toMake each missing folder from dir up, as given, with the path it
// would have once made (below the nearest existing folder, resolved).
// Its error is the one the first mkdir would meet: the caller makes the
// folders, so the caller must be able to write in that existing folder
// (writable).
func wouldMakeFolder(dir string, toMake map[string]string, writable func(string) error) error {
	dir = filepath.Clean(dir)
	var missing []string
	d := dir
	for {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
		d = filepath.Dir(d)
	}
	if len(missing) == 0 {
		return nil
	}
	first := missing[len(missing)-1]
	real, err := filepath.EvalSymlinks(d)
	if err == nil {
		err = writable(real)
	}
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: first, Err: err}
	}
	d = real
	for i := len(missing) - 1; i >= 0; i-- {
		d = filepath.Join(d, filepath.Base(missing[i]))
		toMake[missing[i]] = d
	}
	return nil
}

// missingBelowMade is the error resolving the missing path p meets in a
// run that has made the folders of toMake (a dry run's, see
// wouldMakeFolder): when p lies below one of them, the first missing
// element is the one below it; otherwise err, met now, is that error.
func missingBelowMade(p string, toMake map[string]string, err error) error {
	for q := p; filepath.Dir(q) != q; q = filepath.Dir(q) {
		if _, ok := toMake[filepath.Dir(q)]; ok {
			return &fs.PathError{Op: "lstat", Path: q, Err: syscall.ENOENT}
		}
	}
	return err
}
