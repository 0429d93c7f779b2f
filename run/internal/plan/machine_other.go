//go:build !linux

package plan

// runCPUs is Linux's: elsewhere the run keeps the affinity it inherits.
func runCPUs(float64) []int { return nil }
