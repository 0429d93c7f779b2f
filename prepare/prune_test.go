package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPrune(t *testing.T) {
	c := Cache{Dir: t.TempDir()}
	keep, drop := strings.Repeat("a", 64), strings.Repeat("b", 64)
	for _, d := range []string{keep, drop, ".build-old", ".build-new", "not-a-key"} {
		if err := os.MkdirAll(filepath.Join(c.Dir, d, "lib"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(c.Dir, d, "lib", "f"), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * StaleBuildAge)
	if err := os.Chtimes(filepath.Join(c.Dir, ".build-old"), old, old); err != nil {
		t.Fatal(err)
	}
	pruned, err := c.Prune(map[string]bool{keep: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pruned {
		got = append(got, filepath.Base(p.Dir))
		if p.Bytes != 5 {
			t.Errorf("%s: %d bytes, want 5", p.Dir, p.Bytes)
		}
	}
	if strings.Join(got, " ") != ".build-old "+drop {
		t.Errorf("pruned %v", got)
	}
	for _, d := range []string{keep, ".build-new", "not-a-key"} {
		if _, err := os.Stat(filepath.Join(c.Dir, d)); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
	if p, err := (Cache{Dir: filepath.Join(c.Dir, "missing")}).Prune(nil); p != nil || err != nil {
		t.Errorf("missing cache: %v %v", p, err)
	}
}
