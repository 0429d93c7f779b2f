//go:build !linux && !darwin

package run

// runCgroup is nothing here: there are no cgroups (plan's lateCgroup is
// always nil).
type runCgroup struct{}
