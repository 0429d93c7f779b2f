package validate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File kinds reported by List.
const (
	KindScript    = "script"
	KindReference = "reference"
	KindAsset     = "asset"
	KindOther     = "other"
)

// File is one file of a skill as List reports it.
type File struct {
	// Path is relative to the skill folder, with '/' separators.
	Path string `json:"path"`
	// Kind is "script" (under scripts/), "reference" (references/),
	// "asset" (assets/) or "other".
	Kind string `json:"kind"`
	// Interpreter is what a script would run under; nil for other kinds and
	// for scripts whose interpreter cannot be determined (see Problem).
	Interpreter *Interpreter `json:"interpreter,omitempty"`
	// Size is the file size in bytes.
	Size int64 `json:"size"`
	// Problem says why the file cannot be used, e.g. a symlink that leaves
	// the skill folder or a script with no known interpreter.
	Problem string `json:"problem,omitempty"`
}

// ErrNoScripts is returned by List when the skill has no scripts/ folder and
// only scripts were asked for.
var ErrNoScripts = errors.New("the skill has no scripts/ folder")

// List returns the scripts of the skill folder dir with the interpreter
// each runs under, or with all set every file (scripts, references, assets,
// then other files, each group sorted by path). Without all, a missing
// scripts/ folder is ErrNoScripts. Hidden files and __pycache__ are left
// out. Symlinks are not followed out of the skill, and FIFOs and devices are
// never opened: such entries are listed with a Problem.
func List(dir string, all bool) ([]File, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	c := &checker{root: root}
	if sst, err := os.Stat(filepath.Join(dir, "scripts")); err != nil || !sst.IsDir() {
		if !all {
			return nil, fmt.Errorf("%s: %w", dir, ErrNoScripts)
		}
	}
	files := []File{}
	count := 0
	var visit func(d, rel string, depth int) error
	visit = func(d, rel string, depth int) error {
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			count++
			if count > maxFiles {
				return fmt.Errorf("%s: more than %d files", dir, maxFiles)
			}
			r := e.Name()
			if rel != "" {
				r = rel + "/" + r
			}
			if hiddenOrCache(r) {
				continue
			}
			kind := kindOf(r)
			if !all && kind != KindScript && !(rel == "" && e.Name() == "scripts") {
				continue
			}
			full := filepath.Join(d, e.Name())
			mode := e.Type()
			f := File{Path: r, Kind: kind}
			if mode&fs.ModeSymlink != 0 {
				if !c.checkSymlink(full, r) {
					f.Problem = c.lastError()
					files = append(files, f)
					continue
				}
				sst, err := os.Stat(full)
				if err != nil {
					continue
				}
				mode = sst.Mode().Type()
			}
			switch {
			case mode.IsDir():
				if depth+1 < maxDepth {
					if err := visit(full, r, depth+1); err != nil {
						return err
					}
				}
				continue
			case !mode.IsRegular():
				f.Problem = notRegular(mode)
			default:
				if info, err := os.Stat(full); err == nil {
					f.Size = info.Size()
				}
				if kind == KindScript {
					in, err := DetectInterpreter(full)
					if err != nil {
						f.Problem = strings.TrimPrefix(err.Error(), full+": ")
					} else {
						f.Interpreter = &in
					}
				}
			}
			files = append(files, f)
		}
		return nil
	}
	if err := visit(c.root, "", 0); err != nil {
		return nil, err
	}
	rank := map[string]int{KindScript: 0, KindReference: 1, KindAsset: 2, KindOther: 3}
	sort.SliceStable(files, func(i, j int) bool {
		if rank[files[i].Kind] != rank[files[j].Kind] {
			return rank[files[i].Kind] < rank[files[j].Kind]
		}
		return files[i].Path < files[j].Path
	})
	return files, nil
}

// kindOf classifies a slash-separated relative path by its top folder.
func kindOf(rel string) string {
	switch {
	case strings.HasPrefix(rel, "scripts/"):
		return KindScript
	case strings.HasPrefix(rel, "references/"):
		return KindReference
	case strings.HasPrefix(rel, "assets/"):
		return KindAsset
	}
	return KindOther
}

// lastError returns the message of the last error recorded.
func (c *checker) lastError() string {
	if n := len(c.res.Errors); n > 0 {
		return c.res.Errors[n-1].Message
	}
	return ""
}
