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

// cachedDigest returns the record digest of the skill folder dir
// (audit.DigestDir, the same value) using the on-disk cache of large
// files' hashes, so that a 50 MB reference file is read once and not on
// every audited call. A cache that cannot be read or written is ignored:
// the digest is then computed in full.
func cachedDigest(dir string) (string, error) {
	file := digestCacheFile()
	cache := sign.NewHashCache()
	if file == "" || cache.Load(file) != nil {
		cache = sign.NewHashCache()
	}
	sum, err := sign.DigestAnyCached(dir, cache)
	if file != "" && cache.Dirty() {
		_ = cache.Save(file) // best effort: only speed depends on it
	}
	return sum, err
}
