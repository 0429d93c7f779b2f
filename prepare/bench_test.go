package prepare

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/skill-sandbox/skill-sandbox/sign"
)

// BenchmarkTreeDigest measures the check every run of a skill with
// requirements pays (Cache.Lookup): 2000 files of 16 KiB in 100 folders,
// 31 MiB, about a small scientific environment's site-packages.
func BenchmarkTreeDigest(b *testing.B) {
	dir := b.TempDir()
	b.SetBytes(benchTree(b, dir))
	b.ResetTimer()
	for b.Loop() {
		if _, err := treeDigest(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup measures Cache.Lookup of the same environment once a
// full check has recorded its stamp: what a run pays when nothing
// changed.
func BenchmarkLookup(b *testing.B) {
	c := Cache{Dir: b.TempDir()}
	dir := c.Path(benchKey)
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchTree(b, dir))
	fakeManifest(b, dir, benchKey)
	time.Sleep(sign.RacyMargin + 50*time.Millisecond)
	if _, err := c.Lookup(benchKey); err != nil { // the full check, recording the stamp
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Lookup(benchKey); err != nil {
			b.Fatal(err)
		}
	}
}

const benchKey = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// fakeManifest writes the manifest of the files in dir, as Build would.
func fakeManifest(tb testing.TB, dir, key string) {
	digest, err := treeDigest(dir)
	if err != nil {
		tb.Fatal(err)
	}
	if err := writeManifest(dir, &manifest{Key: key, Digest: digest}); err != nil {
		tb.Fatal(err)
	}
}

// benchTree writes 2000 files of 16 KiB in 100 folders below dir and
// returns their size.
func benchTree(b *testing.B, dir string) int64 {
	data := make([]byte, 16<<10)
	for i := range 100 {
		sub := filepath.Join(dir, fmt.Sprintf("pkg%d", i))
		if err := os.Mkdir(sub, 0o755); err != nil {
			b.Fatal(err)
		}
		for j := range 20 {
			if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("m%d.py", j)), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return 2000 * int64(len(data))
}
