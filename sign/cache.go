package sign

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HashCache remembers the SHA-256 of large regular files, so that a skill
// folder with a big reference file is not read whole on every run. An
// entry is keyed by the file's path, device, inode, size, mtime and ctime;
// a file changed in any way (content, mode, rename over it) gets a new
// ctime, which the caller cannot set, and so misses the cache. An entry is
// only trusted when the file's ctime is older than the moment hashing
// began by RacyMargin, so that a write racing the hash (whose ctime the
// kernel may take from a coarse clock) is never remembered as the old
// content. The digest computed with a cache is the same value as without
// one: a hit returns the hash recorded for that exact file state.
//
// Files smaller than CacheMinSize are always hashed: reading them costs
// less than the bookkeeping. A HashCache is safe for concurrent use.
type HashCache struct {
	mu    sync.Mutex
	m     map[cacheKey]cacheVal
	dirty bool // an entry was stored since NewHashCache or Load
}

// CacheMinSize is the smallest file a HashCache remembers.
const CacheMinSize = 256 << 10

// RacyMargin is how much older than the start of hashing a file's ctime
// must be for its cached hash to be used.
const RacyMargin = 100 * time.Millisecond

// maxCacheEntries bounds a HashCache in memory and on disk.
const maxCacheEntries = 4096

type cacheKey struct {
	path         string
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds since the epoch
}

type cacheVal struct {
	sum  string // hex SHA-256
	seen int64  // when hashing began, nanoseconds since the epoch
	// loaded marks an entry read from a file by Load rather than hashed
	// by this process: a signature check never trusts it.
	loaded bool
}

// NewHashCache returns an empty cache.
func NewHashCache() *HashCache {
	return &HashCache{m: make(map[cacheKey]cacheVal)}
}

// DigestAnyCached is DigestAny using (and filling) the cache c; c may be
// nil. The result is always equal to DigestAny(dir).
func DigestAnyCached(dir string, c *HashCache) (string, error) {
	m, _, err := manifestCached(dir, false, MaxEntries, MaxBytes, c)
	if err != nil {
		return "", err
	}
	return sumHex(m), nil
}

// lookup returns the cached hash of the open file described by st, if any;
// with hashedOnly, only a hash this process computed counts (not one Load
// read from a file, which whoever can write that file could have forged).
func (c *HashCache) lookup(path string, st fs.FileInfo, hashedOnly bool) (string, bool) {
	if c == nil || st.Size() < CacheMinSize {
		return "", false
	}
	k, ok := fileKey(path, st)
	if !ok {
		return "", false
	}
	c.mu.Lock()
	v, hit := c.m[k]
	c.mu.Unlock()
	if !hit || k.ctime+int64(RacyMargin) >= v.seen || hashedOnly && v.loaded {
		return "", false
	}
	return v.sum, true
}

// store remembers sum for the file described by st, whose hashing began at
// seen.
func (c *HashCache) store(path string, st fs.FileInfo, sum string, seen time.Time) {
	if c == nil || st.Size() < CacheMinSize {
		return
	}
	k, ok := fileKey(path, st)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCacheEntries {
		clear(c.m) // crude but bounded; the cache is only an optimisation
	}
	old, had := c.m[k]
	c.m[k] = cacheVal{sum: sum, seen: seen.UnixNano()}
	// Confirming a loaded entry changes nothing Save would write.
	if !had || old.sum != sum {
		c.dirty = true
	}
}

// Dirty reports whether an entry was stored since the cache was made or
// loaded, that is whether Save would change anything.
func (c *HashCache) Dirty() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dirty
}

// Save writes the cache to file atomically, readable by its owner only.
func (c *HashCache) Save(file string) error {
	var b bytes.Buffer
	b.WriteString(cacheHeader)
	c.mu.Lock()
	for k, v := range c.m {
		fmt.Fprintf(&b, "%s %d %d %d %d %d %d %s\n", v.sum, v.seen, k.dev, k.ino, k.size, k.mtime, k.ctime, strconv.Quote(k.path))
	}
	c.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".digest-cache-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

const cacheHeader = "skill-sandbox-digest-cache-v1\n"

// Load adds the entries of a cache file written by Save. The file must be
// a regular file owned by the caller and writable by nobody else (whoever
// could write it could make a record name the wrong digest); a missing
// file is no error. Lines that do not parse are an error naming the line.
func (c *HashCache) Load(file string) error {
	f, err := openRegular(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := checkPrivate(file, st); err != nil {
		return err
	}
	r := bufio.NewReader(io.LimitReader(f, maxCacheEntries*512))
	head, err := r.ReadString('\n')
	if err != nil || head != cacheHeader {
		return fmt.Errorf("%s:1: not a digest cache", file)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for line := 2; len(c.m) < maxCacheEntries; line++ {
		s, err := r.ReadString('\n')
		if err == io.EOF && s == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %v", file, line, err)
		}
		k, v, perr := parseCacheLine(strings.TrimSuffix(s, "\n"))
		if perr != nil {
			return fmt.Errorf("%s:%d: %v", file, line, perr)
		}
		c.m[k] = v
	}
	return nil
}

func parseCacheLine(s string) (cacheKey, cacheVal, error) {
	f := strings.SplitN(s, " ", 8)
	if len(f) != 8 || len(f[0]) != 64 {
		return cacheKey{}, cacheVal{}, fmt.Errorf("malformed entry")
	}
	if _, err := hex.DecodeString(f[0]); err != nil || strings.ToLower(f[0]) != f[0] {
		return cacheKey{}, cacheVal{}, fmt.Errorf("malformed hash")
	}
	var n [6]int64
	for i := range n {
		v, err := strconv.ParseInt(f[1+i], 10, 64)
		if err != nil {
			return cacheKey{}, cacheVal{}, fmt.Errorf("malformed number %q", f[1+i])
		}
		n[i] = v
	}
	p, err := strconv.Unquote(f[7])
	if err != nil {
		return cacheKey{}, cacheVal{}, fmt.Errorf("malformed path")
	}
	return cacheKey{path: p, dev: uint64(n[1]), ino: uint64(n[2]), size: n[3], mtime: n[4], ctime: n[5]},
		cacheVal{sum: f[0], seen: n[0], loaded: true}, nil
}
