package prepare

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkTreeDigest measures the check every run of a skill with
// requirements pays (Cache.Lookup): 2000 files of 16 KiB in 100 folders,
// 31 MiB, about a small scientific environment's site-packages.
func BenchmarkTreeDigest(b *testing.B) {
	dir := b.TempDir()
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
	b.SetBytes(2000 * int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := treeDigest(dir); err != nil {
			b.Fatal(err)
		}
	}
}
