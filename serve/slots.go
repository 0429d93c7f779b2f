package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/audit"
	"github.com/skill-sandbox/skill-sandbox/run"
)

// Executions on gvisor take pre-started sandboxes through slots (see
// run.Pool.SetSlots): each sandbox of the pool waits with a folder of
// its own in the work folder, named as an execution id, and bound at
// its path; an execution that reserves one makes that folder its own
// (its id is the folder's name), writes its input files there and runs
// with it as its write grant and working folder, as in its own folder.

// startSlots lets the executions on gvisor take the pool's sandboxes:
// the slots are made in the work folder, named as it is by the runs
// (symbolic links resolved).
func (s *Server) startSlots() error {
	parent, err := filepath.EvalSymlinks(s.cfg.WorkDir)
	if err == nil {
		parent, err = filepath.Abs(parent)
	}
	if err != nil {
		return fmt.Errorf("work folder: %w", err)
	}
	s.pool.SetSlots(parent, func() (string, error) { return newSlot(parent) })
	return nil
}

// newSlot makes an empty slot folder in parent, named as an execution
// id, as an execution's folder is made (makeFolder) for gvisor runs.
func newSlot(parent string) (string, error) {
	id, err := audit.NewRequestID()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, id)
	if err := newFolder(dir, run.BackendGVisor); err != nil {
		return "", err
	}
	return dir, nil
}

// slotFolder reserves a pre-started sandbox for an execution of the
// skill in skillDir on backend and writes its input files in the
// sandbox's slot; ok is false when
// none waits or the slot is not the empty folder the pool made (the
// sandbox is then released, and the execution makes its own folder).
func (s *Server) slotFolder(tenant, backend, skillDir string, files []inputFile) (string, bool) {
	// A request the queue would refuse (429, 503) reserves nothing: each
	// reservation it gave up would cost the pool a whole sandbox.
	if s.pool == nil || backend != run.BackendGVisor || !s.mayAccept(tenant) {
		return "", false
	}
	dir, ok := s.pool.ReserveSlot(skillDir)
	if !ok {
		return "", false
	}
	if err := checkSlot(dir); err != nil {
		s.log().Warn("pre-started sandbox's slot not used", "slot", dir, "error", err.Error())
		s.pool.ReleaseSlot(dir)
		// Not the folder the pool made: no execution's. RemoveAll
		// removes a symbolic link, not what it leads to.
		os.RemoveAll(dir)
		return "", false
	}
	if err := writeFiles(dir, files); err != nil {
		// The same files fail again in a folder of the execution's own,
		// with the error to answer.
		s.pool.ReleaseSlot(dir)
		os.RemoveAll(dir)
		return "", false
	}
	return dir, true
}

// checkSlot reports why dir is not an empty folder of its own name (a
// symbolic link put in its place, a file, a folder with entries).
func checkSlot(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a folder")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("holds %d entries", len(ents))
	}
	return nil
}
