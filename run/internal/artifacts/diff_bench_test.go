package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkArtifacts10000 times the artifact listing of a write grant of
// 10,000 files in 100 folders: the snapshot before the run, settle, the
// one after and their comparison, with one file changed.
func BenchmarkArtifacts10000(b *testing.B) {
	root := b.TempDir()
	for d := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte("some content"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	changed := filepath.Join(root, "d050", "f050")
	b.ResetTimer()
	for range b.N {
		before := Take([]string{root})
		before.Settle()
		if err := os.WriteFile(changed, []byte("other content"), 0o644); err != nil {
			b.Fatal(err)
		}
		if a := Diff(before, Take([]string{root})); a.Count != 1 {
			b.Fatalf("%d changes, want 1", a.Count)
		}
	}
}
