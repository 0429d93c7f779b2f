package artifacts

import (
	"time"

	"golang.org/x/sys/unix"
)

// fileClock returns, in Unix nanoseconds, the clock the kernel stamps
// file times with: CLOCK_REALTIME_COARSE, the last tick (with
// fine-grained timestamps, Linux 6.13 and later, a stamp is never below
// it either).
func fileClock() int64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts); err != nil {
		return time.Now().UnixNano()
	}
	return ts.Nano()
}
