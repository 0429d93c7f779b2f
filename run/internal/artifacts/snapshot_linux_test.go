package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/run/internal/swaptest"
)

// TestArtifactsStayInTheRoot swaps folders of a write grant with symlinks
// to a folder outside it (renameat2 RENAME_EXCHANGE), as a script of
// another run sharing the grant can while this run's snapshots are taken:
// no snapshot may list what lies outside, and no file may be hashed
// through a symlinked folder. By path, the walk went into the symlinked
// folder (a root-only folder's names and sizes among the artifacts).
func TestArtifactsStayInTheRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	const pairs = 16
	for i := range pairs {
		d, l := filepath.Join(root, "d"+string(rune('a'+i))), filepath.Join(root, "l"+string(rune('a'+i)))
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, l); err != nil {
			t.Fatal(err)
		}
	}
	var swaps [][2]string
	for i := range pairs {
		swaps = append(swaps, [2]string{filepath.Join(root, "d"+string(rune('a'+i))), filepath.Join(root, "l"+string(rune('a'+i)))})
	}
	stop := swaptest.ExchangeLoop(swaps...)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("renameat2: %v", err)
		}
	}()
	for range 300 {
		for p := range Take([]string{root}).files {
			if strings.HasSuffix(p, "/secret") {
				t.Fatalf("the snapshot of %s lists %s, outside it", root, p)
			}
		}
	}

	// A file reached through a symlinked folder is not hashed.
	link := filepath.Join(root, "static-link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(outside, "secret"))
	if err != nil {
		t.Fatal(err)
	}
	if sum, _, err := hashFile(filepath.Join(link, "secret"), fileState{size: info.Size(), ino: inodeOf(info)}); err == nil {
		t.Errorf("hashed %s through a symlinked folder: %s", filepath.Join(link, "secret"), sum)
	}
}

// TestSnapshotPathBudget fills a folder with files whose paths are near
// PATH_MAX, more path text than a snapshot keeps: the snapshot stops at
// its budget and says it is truncated, instead of holding it all in the
// supervisor.
func TestSnapshotPathBudget(t *testing.T) {
	root := t.TempDir()
	deep := root
	for i := 0; len(deep) < unix.PathMax-400; i++ {
		deep = filepath.Join(deep, strings.Repeat(string(rune('a'+i%26)), 250))
	}
	deep = deep[:strings.LastIndexByte(deep[:min(len(deep), unix.PathMax-400)], '/')]
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("f", 200)
	files := maxPathBytes/(len(deep)+len(name)+8) + 100
	for i := range files {
		f, err := os.Create(filepath.Join(deep, fmt.Sprintf("%s%06d", name, i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	snap := Take([]string{root})
	kept := 0
	for p := range snap.files {
		kept += len(p)
	}
	if !snap.truncated || kept > maxPathBytes {
		t.Errorf("%d files of %d-byte paths: truncated %v, %d bytes of paths kept (budget %d)", files, len(deep)+len(name)+7, snap.truncated, kept, maxPathBytes)
	}
}
