package audit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/skill-sandbox/skill-sandbox/internal/outfile"
)

// TestOpenLogRacesPlantedSymlink: a sandboxed script (uid 65534) with a
// write grant on the folder holding the log's folder swaps that folder
// for a symlink to a folder of its choice, over and over, while a root
// caller opens the log. Checking the path and then opening it by name
// follows the link whenever the swap lands between the two; OpenLog
// resolves once and opens the result without following links, so each
// open lands in the real folder or is refused, and the folder the link
// points at never gets the file.
func TestOpenLogRacesPlantedSymlink(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root caller's sandbox runs as another identity, whose symlinks can be told apart")
	}
	dir := t.TempDir()
	victim, sub, alt := filepath.Join(dir, "victim"), filepath.Join(dir, "sub"), filepath.Join(dir, "alt")
	for _, d := range []string{victim, sub} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(victim, alt); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(alt, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	stop, done := make(chan struct{}), make(chan error)
	go func() {
		for {
			select {
			case <-stop:
				close(done)
				return
			default:
			}
			// RENAME_EXCHANGE swaps the folder and the link in one step,
			// as a script's rename(2) would.
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE); err != nil {
				done <- err
				return
			}
		}
	}()
	const tries = 50000
	opened, refused, raced := 0, 0, 0
	for range tries {
		l, err := OpenLog(filepath.Join(sub, "audit.jsonl"))
		if err != nil {
			var planted *outfile.PlantedSymlinkError
			switch {
			case errors.Is(err, unix.ELOOP):
				raced++ // swapped between the check and the open
			case !errors.As(err, &planted):
				t.Errorf("OpenLog: %v, want a refusal of the link", err)
			}
			refused++
			continue
		}
		opened++
		l.Close()
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(victim, "audit.jsonl")); err == nil {
		t.Errorf("the log was created in the folder the planted link points at (%d opened, %d refused of %d)", opened, refused, tries)
	}
	t.Logf("%d opened in the real folder, %d refused (%d of them swapped after the check), of %d", opened, refused, raced, tries)
}
