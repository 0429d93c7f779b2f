//go:build !linux

package cgroup

import (
	"errors"
	"os"
)

// Cgroup does not exist here: cgroups are a Linux feature. Its methods do
// nothing, as those of a cgroup that holds nothing.
type Cgroup struct{}

// Open reports that this platform has no cgroups.
func Open(string, Limits) (*Cgroup, error) {
	return nil, errors.New("cgroups are a Linux feature")
}

// PlanLate places nothing: there are no cgroups here.
func PlanLate(string, Limits, int) *Cgroup { return nil }

// LateChannel is never needed here (PlanLate places nothing).
func LateChannel() (sup, initEnd *os.File, err error) {
	return nil, nil, errors.New("cgroups are a Linux feature")
}

// Version is 0: no cgroup version.
func (*Cgroup) Version() int { return 0 }

// Attach has nothing to move the process into.
func (*Cgroup) Attach(int) error { return nil }

// StartInside runs start: there is no cgroup to be born in.
func (*Cgroup) StartInside(start func() error) (inside bool, err error) {
	return false, start()
}

// PassHomeTasks passes nothing.
func (*Cgroup) PassHomeTasks([]*os.File) func() { return func() {} }

// TasksFiles is nil: nothing is joined late.
func (*Cgroup) TasksFiles() []string { return nil }

// MakeLate makes nothing.
func (*Cgroup) MakeLate(Limits, *os.File) error { return nil }

// SetLimits has nothing to limit.
func (*Cgroup) SetLimits(Limits) error { return nil }

// OpenStats opens nothing.
func (*Cgroup) OpenStats() {}

// Stats are zero.
func (*Cgroup) Stats() Stats { return Stats{} }

// RemoveEmpty has nothing to remove.
func (*Cgroup) RemoveEmpty() bool { return true }

// Close has nothing to close.
func (*Cgroup) Close() {}
