//go:build linux

package sign

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestHashCacheHitAndMiss shows that a warm cache is used (a planted hash
// comes back) for an unchanged file and not for a changed one, and that
// Save and Load round-trip and refuse a cache others can write.
func TestHashCacheHitAndMiss(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), CacheMinSize), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := DigestAny(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := NewHashCache()
	if got, err := DigestAnyCached(dir, c); err != nil || got != want {
		t.Fatalf("cold: %s, %v; want %s", got, err, want)
	}
	if len(c.m) != 1 {
		t.Fatalf("%d entries, want 1", len(c.m))
	}
	// Just hashed: the ctime is within RacyMargin, so the entry is not
	// trusted yet even if planted.
	for k, v := range c.m {
		c.m[k] = cacheVal{sum: "00" + v.sum[2:], seen: v.seen}
	}
	if got, _ := DigestAnyCached(dir, c); got != want {
		t.Fatal("an entry younger than RacyMargin was used")
	}
	// Pretend it was hashed long after the file's last change: planted
	// hash is used, which shows the cache is read.
	for k, v := range c.m {
		c.m[k] = cacheVal{sum: "00" + v.sum[2:], seen: time.Now().Add(time.Hour).UnixNano()}
	}
	if got, _ := DigestAnyCached(dir, c); got == want {
		t.Fatal("warm cache not used")
	}
	file := filepath.Join(t.TempDir(), "sub", "cache")
	if err := c.Save(file); err != nil {
		t.Fatal(err)
	}
	c2 := NewHashCache()
	if err := c2.Load(file); err != nil || len(c2.m) != 1 {
		t.Fatalf("Load: %v, %d entries", err, len(c2.m))
	}
	// Change the content: the ctime moves, the planted entry misses.
	if err := os.WriteFile(big, bytes.Repeat([]byte("b"), CacheMinSize), 0o644); err != nil {
		t.Fatal(err)
	}
	want2, _ := DigestAny(dir)
	if got, _ := DigestAnyCached(dir, c2); got != want2 || want2 == want {
		t.Fatalf("changed file: %s, want %s", got, want2)
	}
	if err := os.Chmod(file, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := NewHashCache().Load(file); err == nil {
		t.Fatal("a world-writable cache was loaded")
	}
	if err := os.WriteFile(file, []byte(cacheHeader+"junk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := NewHashCache().Load(file); err == nil {
		t.Fatal("a malformed cache was loaded")
	}
}
