//go:build !linux

package artifacts

import "time"

// Sweep neutralises nothing here: outputs are neutralised on Linux only
// (docs/grants.md).
func Sweep([]string, []string, map[string]uint64, *Snapshot, time.Time, int) ([]Neutralised, bool) {
	return nil, false
}
