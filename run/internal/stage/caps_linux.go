package stage

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Securebits (linux/securebits.h; not in x/sys).
const (
	secbitNoRoot                  = 1 << 0 // execve by uid 0 grants no capabilities
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2 // uid changes do not touch capabilities
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5 // keep-caps stays off
	secbitNoCapAmbientRaise       = 1 << 6 // the ambient set cannot be raised
	secbitNoCapAmbientRaiseLocked = 1 << 7

	sandboxSecurebits = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup |
		secbitNoSetuidFixupLocked | secbitKeepCapsLocked |
		secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities leaves the script with no capability and no way back:
// the script runs as uid 0 of its user namespace, which normally means a
// full capability set there (enough to mount, to use raw sockets, to ignore
// file modes of the run's own files). In order: the bounding set is
// emptied (execve can grant nothing beyond it), securebits are locked so
// uid 0 is not special at execve, the ambient set is cleared, and capset
// empties the permitted, effective and inheritable sets.
//
// Without a user namespace an unprivileged process holds no capabilities
// and may not change the bounding set; that counts as applied when the
// permitted set is already empty.
func dropCapabilities(*config) error {
	last := lastCap()
	var bsetErr error
	for c := 0; c <= last; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && !isErrno(err, unix.EINVAL) {
			bsetErr = err
			break
		}
	}
	secErr := unix.Prctl(unix.PR_SET_SECUREBITS, sandboxSecurebits, 0, 0, 0)
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	if bsetErr != nil || secErr != nil {
		// Only acceptable if we never held anything.
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capget: %w", err)
		}
		if data[0].Permitted|data[1].Permitted|data[0].Effective|data[1].Effective != 0 {
			return fmt.Errorf("bounding set: %v, securebits: %v", bsetErr, secErr)
		}
	}
	return nil
}

// lastCap reads the highest capability number the kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63
}
