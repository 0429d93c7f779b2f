//go:build darwin

package run

import (
	"errors"
	"os"
)

// errHalfJoined is attach's error for a process left in part of a
// cgroup: never, here.
var errHalfJoined = errors.New("moving the init stage back out of the cgroups it had entered failed")

// runCgroup does not exist here: cgroups are a Linux feature.
type runCgroup struct{}

// openCgroup reports that this platform has no cgroups.
func openCgroup(string, cgroupLimits) (*runCgroup, error) {
	return nil, errors.New("cgroups are a Linux feature")
}

func (*runCgroup) attach(int) error { return nil }

// planLateCgroup places nothing: there are no cgroups here.
func planLateCgroup(string, cgroupLimits, int) *runCgroup { return nil }

func (*runCgroup) tasksFiles() []string                  { return nil }
func (*runCgroup) makeLate(cgroupLimits, *os.File) error { return nil }
func (*runCgroup) openStats()                            {}

// startInside runs start: there is no cgroup to be born in.
func (*runCgroup) startInside(start func() (*started, error)) (*started, bool, error) {
	st, err := start()
	return st, false, err
}
func (*runCgroup) stats() cgroupStats               { return cgroupStats{} }
func (*runCgroup) passHomeTasks(*launchSpec) func() { return func() {} }
func (*runCgroup) removeEmpty() bool                { return true }
func (*runCgroup) close()                           {}

// configChannel is the config pipe of an init stage.
func configChannel(bool) (sup, stage *os.File, err error) { return stagePipe(true) }
