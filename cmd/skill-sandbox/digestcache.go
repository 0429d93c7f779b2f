package main

import (
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// digestCacheFile is where the CLI keeps the hashes of large skill files
// between calls: skill-sandbox/digests in the user's cache folder
// (os.UserCacheDir), or "" when there is none.
func digestCacheFile() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "skill-sandbox", "digests")
}

// diskCache is the cache of large files' hashes of one call: read from
// digestCacheFile on first use and written back by save when it changed.
// The record digest and the signature check share it, so that a 50 MB
// reference file is read at most once per call, and not at all when its
// hash is on disk already. A cache that cannot be read or written is
// ignored: the digest is then computed in full, to the same value.
type diskCache struct {
	file  string
	cache *sign.HashCache
}

// get returns the cache, loading it on first use.
func (d *diskCache) get() *sign.HashCache {
	if d.cache == nil {
		d.file = digestCacheFile()
		d.cache = sign.NewHashCache()
		if d.file == "" || d.cache.Load(d.file) != nil {
			d.cache = sign.NewHashCache()
		}
	}
	return d.cache
}

// save writes the cache back if it was used and changed.
func (d *diskCache) save() {
	if d.cache != nil && d.file != "" && d.cache.Dirty() {
		_ = d.cache.Save(d.file) // best effort: only speed depends on it
	}
}
