package stage

import (
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLandlockCause checks that a missing Landlock says how to get it.
func TestLandlockCause(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{
		unix.ENOSYS:     "CONFIG_SECURITY_LANDLOCK",
		unix.EOPNOTSUPP: "lsm=",
		unix.EFAULT:     "EFAULT",
	} {
		if got := landlockCause(errno); !strings.Contains(got, want) {
			t.Errorf("%v: %q does not say %q", errno, got, want)
		}
	}
}
