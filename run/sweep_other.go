//go:build !linux

package run

import "time"

// sweepGrants: outputs are neutralised on Linux only (docs/grants.md).
func sweepGrants([]string, []string, map[string]uint64, *snapshot, time.Time, int) ([]Neutralised, bool) {
	return nil, false
}
