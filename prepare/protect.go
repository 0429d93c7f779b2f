package prepare

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/realpath"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Protect keeps the run sb from writing the cache, whichever skill it
// runs: a write grant that holds the cache folder gets the folder as a
// ReadOnlyPaths entry (made first when missing, so that a script cannot
// create it with environments and markers of its own), and a write grant
// inside the cache is refused (run.ErrBadConfig). Only the caller (and
// root) then write the cache, which the verified markers rely on (see
// Cache.Lookup). A zero Cache needs nothing.
func (c Cache) Protect(sb *run.Sandbox) error {
	if c.Dir == "" {
		return nil
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return err
	}
	cache := realpath.Existing(abs)
	holds := false
	for _, w := range sb.WritePaths {
		wabs, err := filepath.Abs(w)
		if err != nil {
			return fmt.Errorf("%w: write grant %s: %v", run.ErrBadConfig, w, err)
		}
		grant := realpath.Existing(wabs)
		switch {
		case within(grant, cache):
			return fmt.Errorf("%w: write grant %s lies in the cache of prepared environments %s, which runs may not change", run.ErrBadConfig, w, cache)
		case within(cache, grant):
			holds = true
		}
	}
	if !holds {
		return nil
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("cache of prepared environments: %w", err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		cache = real
	}
	for _, p := range sb.ReadOnlyPaths {
		if p == cache {
			return nil
		}
	}
	sb.ReadOnlyPaths = append(sb.ReadOnlyPaths, cache)
	return nil
}

// within reports whether path is dir or lies under it (both clean and
// absolute).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
