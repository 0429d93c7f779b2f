package artifacts

import "time"

// fileClock returns the time in Unix nanoseconds, the clock file times
// are stamped with here.
func fileClock() int64 { return time.Now().UnixNano() }
