package cgroup

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

// Attach moves process pid, with all its threads, into the cgroup. The
// init process does nothing before it has read its config, which the
// supervisor sends after this, so the script and everything it starts are
// born inside.
//
// All or nothing: when a v1 hierarchy refuses the move that another took
// (the cpu controller refuses a real-time task while the new cgroup's
// cpu.rt_runtime_us is 0; or a process born part-way inside, see
// StartInside), pid is moved back out of every one of the run's cgroups
// it is in, to the cgroup each was made in, and the error is the refusal:
// Close, which kills every member, then leaves it alone and the run goes
// on without the layer. When it cannot be moved back, the error wraps
// ErrHalfJoined: the process is in a half-configured cgroup, and must not
// run.
func (cg *Cgroup) Attach(pid int) error {
	id := strconv.Itoa(pid)
	for _, dir := range cg.dirs {
		if err := write(dir, "cgroup.procs", id); err != nil {
			if berr := cg.moveOut(id); berr != nil {
				return fmt.Errorf("%v; %w: %v", err, ErrHalfJoined, berr)
			}
			return err
		}
	}
	return nil
}

// moveOut moves process id out of each of the run's cgroups that lists
// it, into the cgroup it was made in.
func (cg *Cgroup) moveOut(id string) error {
	var errs []error
	for _, dir := range cg.dirs {
		data, err := proc.ReadFile(filepath.Join(dir, "cgroup.procs"), maxProcsList)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.Contains(strings.Fields(string(data)), id) {
			errs = append(errs, write(parentDir(dir), "cgroup.procs", id))
		}
	}
	return errors.Join(errs...)
}
