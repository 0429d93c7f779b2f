package prepare

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/treestamp"
)

// DefaultMaxBytes is the size bound of DefaultCache: 8 GiB.
const DefaultMaxBytes = 8 << 30

// Use returns the environment with key as Lookup does, holding a shared
// lock on its folder until release is called: Evict (and Prune) leave an
// environment in use alone. The lock is taken before the check, so the
// environment checked is the one used. release is never nil.
func (c Cache) Use(key string) (env *Env, release func(), err error) {
	release = treestamp.LockShared(c.Path(key))
	env, err = c.Lookup(key)
	if err != nil {
		release()
		return nil, func() {}, err
	}
	return env, release, nil
}

// Evict removes environments, least recently used first, until the
// cache's environments add up to at most c.MaxBytes, leaving alone the
// one with key keep and every one in use (Use). Last use is when a check
// last passed (its marker's time), else when it was built. A zero
// MaxBytes bounds nothing. It returns what it removed; the cache may
// still be larger when what is left is in use.
func (c Cache) Evict(keep string) ([]Pruned, error) {
	if c.MaxBytes <= 0 {
		return nil, nil
	}
	entries, err := os.ReadDir(c.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type candidate struct {
		key  string
		size int64
		used time.Time
	}
	var all []candidate
	var total int64
	for _, e := range entries {
		if !e.IsDir() || !isKey(e.Name()) {
			continue
		}
		cd := candidate{key: e.Name(), size: treeSize(c.Path(e.Name()))}
		if fi, err := os.Stat(filepath.Join(c.Dir, markerDir, cd.key)); err == nil {
			cd.used = fi.ModTime()
		} else if fi, err := e.Info(); err == nil {
			cd.used = fi.ModTime()
		}
		total += cd.size
		all = append(all, cd)
	}
	slices.SortFunc(all, func(a, b candidate) int { return a.used.Compare(b.used) })
	var out []Pruned
	for _, cd := range all {
		if total <= c.MaxBytes {
			break
		}
		if cd.key == keep {
			continue
		}
		removed, err := c.remove(cd.key)
		if err != nil {
			return out, err
		}
		if removed {
			total -= cd.size
			out = append(out, Pruned{Dir: c.Path(cd.key), Bytes: cd.size})
		}
	}
	return out, nil
}

// remove removes the environment with key unless it is in use: under the
// exclusive lock it is renamed aside (gone at once for a later Use),
// then removed with its marker. removed is false when it was in use.
func (c Cache) remove(key string) (removed bool, err error) {
	dir := c.Path(key)
	unlock, ok := treestamp.TryLockExclusive(dir)
	if !ok {
		return false, nil
	}
	aside, err := os.MkdirTemp(c.Dir, ".evict-")
	if err != nil {
		unlock()
		return false, err
	}
	err = os.Rename(dir, filepath.Join(aside, key))
	unlock()
	os.Remove(filepath.Join(c.Dir, markerDir, key))
	if rerr := os.RemoveAll(aside); err == nil {
		err = rerr
	}
	return err == nil, err
}
