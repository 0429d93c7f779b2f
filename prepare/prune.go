package prepare

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StaleBuildAge is how old a build folder (".build-*") must be for Prune
// to take it as left behind by a build that died rather than one under
// way.
const StaleBuildAge = time.Hour

// Pruned is one folder Prune removed.
type Pruned struct {
	Dir   string
	Bytes int64 // the sizes of its regular files
}

// Prune removes every environment of the cache whose key is not in keep
// and that is not in use (Use), and build folders older than
// StaleBuildAge. Other files are left
// alone. It returns what it removed; an error stops it.
func (c Cache) Prune(keep map[string]bool) ([]Pruned, error) {
	entries, err := os.ReadDir(c.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Pruned
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || keep[name] {
			continue
		}
		if strings.HasPrefix(name, ".build-") || strings.HasPrefix(name, ".evict-") {
			fi, err := e.Info()
			if err != nil || time.Since(fi.ModTime()) < StaleBuildAge {
				continue
			}
		} else if !isKey(name) {
			continue
		}
		dir := filepath.Join(c.Dir, name)
		size := treeSize(dir)
		if isKey(name) {
			// An environment in use (Use) is left alone.
			if removed, err := c.remove(name); err != nil || !removed {
				if err != nil {
					return out, err
				}
				continue
			}
		} else if err := os.RemoveAll(dir); err != nil {
			return out, err
		}
		out = append(out, Pruned{Dir: dir, Bytes: size})
	}
	return out, nil
}

// isKey reports whether name has the form of a cache key.
func isKey(name string) bool {
	if len(name) != 64 {
		return false
	}
	for _, r := range name {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// treeSize adds up the sizes of the regular files below dir (errors
// skipped: the number is for the report).
func treeSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
