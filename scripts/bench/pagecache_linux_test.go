package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCachedFolios checks the count of cached pages on a file that was
// just written (every page of it is in the page cache), and that the
// large-folio count is a part of it.
func TestCachedFolios(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("reading /proc/kpageflags needs root")
	}
	const pages = 64
	path := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(path, make([]byte, pages*os.Getpagesize()), 0o600); err != nil {
		t.Fatal(err)
	}
	cached, large, err := cachedFolios(path)
	if err != nil {
		t.Fatal(err)
	}
	if cached != pages || large > cached {
		t.Errorf("cachedFolios = %d cached, %d in large folios; want %d cached", cached, large, pages)
	}
	t.Logf("%d of %d pages in large folios", large, cached)
	if _, _, err := cachedFolios(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("cachedFolios of a missing file: no error")
	}
}
