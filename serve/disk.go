package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// errNoSpace refuses a run whose work folder has too little free space.
var errNoSpace = errors.New("insufficient storage")

// checkSpace refuses a run when the work folder's file system has less
// free space than the run may write (writeMB, the policy's write_mb; 0
// for the default) plus its input files. Where the free space cannot be
// known, it refuses nothing.
func (s *Server) checkSpace(writeMB int, files []inputFile) error {
	if writeMB <= 0 {
		writeMB = run.DefaultWriteMB
	}
	need := min(int64(writeMB), 1<<40) << 20
	for _, f := range files {
		need += int64(len(f.data))
	}
	free, ok := freeBytes(s.cfg.WorkDir)
	if ok && free < need {
		return fmt.Errorf("%w: the work folder has %d bytes free, the run may write %d (write_mb %d and its input files)", errNoSpace, free, need, writeMB)
	}
	return nil
}

// maxDiskWalk bounds the entries measured in one execution's folder, so
// that a run that left a million files costs a bounded walk. A folder
// with more counts as holding the tenant's whole disk budget.
const maxDiskWalk = 100_000

// errWalkCap stops a walk at maxDiskWalk entries.
var errWalkCap = errors.New("too many entries")

// folderBytes returns the bytes the files under dir hold (their sizes,
// sparse or not), walking without following any symbolic link; over
// maxDiskWalk entries it returns budget. The run has ended: nothing
// changes the folder while it is walked but the server itself.
func folderBytes(dir string, budget int64) int64 {
	var n int64
	entries := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: counted as far as it could be read
		}
		if entries++; entries > maxDiskWalk {
			return errWalkCap
		}
		if d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	if errors.Is(err, errWalkCap) {
		return max(n, budget)
	}
	return n
}

// trimDisk deletes the oldest finished executions while the finished
// ones hold more than budget bytes on disk; last, the execution that just
// finished, is kept even alone over the budget: its client is about to
// read it.
func (tn *tenant) trimDisk(budget int64, last *execution) []*execution {
	tn.mu.Lock()
	defer tn.mu.Unlock()
	return tn.evict(last, (*execution).diskBytes, func(_ int, held int64) bool { return held > budget })
}
