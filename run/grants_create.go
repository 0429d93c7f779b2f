package run

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/grants"
)

// MakeWriteFolder creates dir (with its parents) when it is missing, the
// way Run creates a missing WritePaths folder: owned by the caller. For a
// root caller whose sandbox runs as uid 65534 that holds where the folder
// can be handed over id-mapped (see docs/grants.md); where it cannot, dir
// is given to uid 65534 so that scripts can write in it. It reports
// whether it created dir.
func MakeWriteFolder(dir string) (bool, error) {
	uid, gid := sandboxIdentity()
	made, err := makeWriteFolder(dir, true, uid, gid)
	return slices.Contains(made, dir), err
}

// makeWriteFolder does MakeWriteFolder's work and returns the folders it
// created itself, parents first, also on error. Each is made with one
// mkdir, not MkdirAll, so that a folder a concurrent caller made first is
// not counted as ours and never removed by removeMade; see grants.Mkdirs for
// why by descriptors. mapped is false when the run will have no mount
// namespace, so nothing is handed over id-mapped. uid and gid are the
// run's host identity, which gets the folders that cannot be mapped.
func makeWriteFolder(dir string, mapped bool, uid, gid int) ([]string, error) {
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
	if uid == os.Geteuid() || len(missing) == 0 || (mapped && canMapWrite(filepath.Dir(missing[0]), uid, gid)) {
		uid = -1 // the caller's own: no chown
	}
	return grants.Mkdirs(missing, uid, gid)
}

// removeMade removes the folders makeWriteFolder created, children first,
// when the run they were made for was refused. rmdir, not a recursive
// removal: a folder someone has put something in since is left alone.
func removeMade(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		syscall.Rmdir(made[i])
	}
}

// wouldMakeFolder is makeWriteFolder's dry run (see CheckGrants): it adds
// to toMake each missing folder from dir up, as given, with the path it
// would have once made (below the nearest existing folder, resolved).
// Its error is the one the first mkdir would meet: the caller makes the
// folders, so the caller must be able to write in that existing folder.
func wouldMakeFolder(dir string, toMake map[string]string) error {
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
		err = writableFolder(real)
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
