//go:build unix

package sign

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestDigestFIFO shows that a FIFO is digested by type, never opened: an
// open would block forever with no writer.
func TestDigestFIFO(t *testing.T) {
	dir := makeSkill(t)
	before := mustDigest(t, dir)
	if err := syscall.Mkfifo(filepath.Join(dir, "scripts", "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if after := mustDigest(t, dir); after == before {
		t.Error("adding a FIFO did not change the digest")
	}
}
