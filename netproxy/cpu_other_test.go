//go:build !unix

package netproxy

import "time"

// processCPU is the CPU time the process has used; 0 where unknown.
func processCPU() time.Duration { return 0 }
