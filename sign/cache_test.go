//go:build linux

package sign

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// TestVerifyWithCache shows that VerifySkillWith uses Options.Cache: after
// the record digest filled the cache, verification takes the large file's
// hash from it (a planted wrong hash makes it fail, which only the cache
// can cause), and without the cache the same skill verifies.
func TestVerifyWithCache(t *testing.T) {
	needKeygen(t)
	priv, pub := keygen(t, t.TempDir(), "k")
	skill := makeSkill(t)
	if err := os.WriteFile(filepath.Join(skill, "references", "big.bin"), bytes.Repeat([]byte("a"), 2*CacheMinSize), 0o644); err != nil {
		t.Fatal(err)
	}
	digest, err := Digest(skill)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(skill, SignatureFile), keygenSign(t, priv, Namespace, Message(digest)))
	allowed := filepath.Join(t.TempDir(), "allowed_signers")
	writeFile(t, allowed, []byte("alice@example.com "+pub+"\n"))
	time.Sleep(RacyMargin + 50*time.Millisecond) // so that the entry is trusted

	c := NewHashCache()
	if got, err := DigestAnyCached(skill, c); err != nil || got != digest {
		t.Fatalf("DigestAnyCached = %s, %v; want %s", got, err, digest)
	}
	s, err := VerifySkillWith(skill, allowed, Options{Cache: c})
	if err != nil || s.Digest != digest {
		t.Fatalf("VerifySkillWith(cache) = %+v, %v; want digest %s", s, err, digest)
	}
	for k, v := range c.m {
		c.m[k] = cacheVal{sum: "00" + v.sum[2:], seen: v.seen}
	}
	if _, err := VerifySkillWith(skill, allowed, Options{Cache: c}); err == nil {
		t.Fatal("a planted hash in the cache was not used")
	}
	if _, err := VerifySkillWith(skill, allowed, Options{}); err != nil {
		t.Fatalf("without the cache: %v", err)
	}
	// A hash read from a cache file serves the record's digest but never
	// a signature check: whoever could write the file could forge it.
	for k, v := range c.m {
		c.m[k] = cacheVal{sum: "00" + v.sum[2:], seen: time.Now().Add(time.Hour).UnixNano()}
	}
	file := filepath.Join(t.TempDir(), "cache")
	if err := c.Save(file); err != nil {
		t.Fatal(err)
	}
	loaded := NewHashCache()
	if err := loaded.Load(file); err != nil {
		t.Fatal(err)
	}
	forged, err := DigestAnyCached(skill, loaded)
	if err != nil || forged == digest {
		t.Fatalf("the record digest did not use the loaded entry: %s, %v", forged, err)
	}
	if s, err := VerifySkillWith(skill, allowed, Options{Cache: loaded}); err != nil || s.Digest != digest {
		t.Fatalf("a loaded entry was used by the signature check: %+v, %v", s, err)
	}
	if _, err := VerifySkillWith(skill, allowed, Options{Cache: loaded, Recorded: forged}); !errors.Is(err, ErrChanged) {
		t.Fatalf("a record digest from a forged cache entry: %v, want ErrChanged", err)
	}
	// A recorded digest that is not the folder's: it changed in between.
	other := strings.Repeat("0", 64)
	if _, err := VerifySkillWith(skill, allowed, Options{Recorded: other}); !errors.Is(err, ErrChanged) || !errors.Is(err, ErrNotVerified) {
		t.Fatalf("recorded %s: %v, want ErrChanged", other, err)
	}
	if _, err := VerifySkillWith(skill, allowed, Options{Recorded: digest}); err != nil {
		t.Fatalf("recorded the same digest: %v", err)
	}
}
