//go:build !linux

package native

// gvisorPool is empty where there is no gVisor: a Pool holds no
// sandboxes of it.
type gvisorPool struct{}

// newGVisorPool returns nil: gVisor runs on Linux only.
func newGVisorPool(*Pool) *gvisorPool { return nil }

// GVisorStats returns zero counters: there are no gVisor sandboxes here.
func (*Pool) GVisorStats() Stats { return Stats{} }

// SetSlots does nothing: there are no gVisor sandboxes here.
func (*Pool) SetSlots(string, func() (string, error)) {}

// ReserveSlot reserves nothing: there are no gVisor sandboxes here.
func (*Pool) ReserveSlot(string) (string, bool) { return "", false }

// ReleaseSlot does nothing: there are no gVisor sandboxes here.
func (*Pool) ReleaseSlot(string) {}
