package prepare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvict: beyond MaxBytes the least recently used environments go,
// but never the one kept nor one in use; Prune leaves one in use too.
func TestEvict(t *testing.T) {
	c := Cache{Dir: filepath.Join(t.TempDir(), "envs"), MaxBytes: 2500}
	keys := []string{strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64), strings.Repeat("d", 64)}
	old := time.Now().Add(-time.Hour)
	for i, k := range keys {
		dir := c.Path(k)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), make([]byte, 1000), 0o644); err != nil {
			t.Fatal(err)
		}
		fakeManifest(t, dir, k)
		// Last used: a first, d last.
		at := old.Add(time.Duration(i) * time.Minute)
		if err := writeMarker(filepath.Join(c.Dir, markerDir, k), []byte("x")); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(c.Dir, markerDir, k), at, at)
	}
	_, release, err := c.Use(keys[0]) // the oldest, in use
	if err != nil {
		t.Fatal(err)
	}
	gone, err := c.Evict(keys[1]) // b kept
	if err != nil {
		t.Fatal(err)
	}
	// 4 KB of files (manifests aside): c goes, then d, leaving a (in use)
	// and b (kept).
	var names []string
	for _, p := range gone {
		names = append(names, filepath.Base(p.Dir)[:1])
	}
	if strings.Join(names, "") != "cd" {
		t.Errorf("evicted %v, want c then d", names)
	}
	for _, k := range keys[:2] {
		if _, err := c.Lookup(k); err != nil {
			t.Errorf("%s.. after Evict: %v", k[:1], err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Dir, markerDir, keys[2])); !os.IsNotExist(err) {
		t.Errorf("marker of an evicted environment left: %v", err)
	}
	pruned, err := c.Prune(nil)
	if err != nil || len(pruned) != 1 || filepath.Base(pruned[0].Dir) != keys[1] {
		t.Errorf("Prune with a in use: %+v %v", pruned, err)
	}
	release()
	if pruned, err := c.Prune(nil); err != nil || len(pruned) != 1 {
		t.Errorf("Prune after the release: %+v %v", pruned, err)
	}
	if entries, _ := os.ReadDir(c.Dir); len(entries) != 1 { // .verified
		t.Errorf("left in the cache: %v", entries)
	}
}

// cacheEntries returns the names in the cache folder dir but the markers'
// folder, which the checks make.
func cacheEntries(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		if e.Name() != markerDir {
			out = append(out, e.Name())
		}
	}
	return out
}
