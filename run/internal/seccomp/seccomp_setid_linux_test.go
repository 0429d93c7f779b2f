//go:build linux && (amd64 || arm64)

package seccomp

import (
	"testing"

	"golang.org/x/sys/unix"
)

// setIDCase is one call of TestSetIDRules and what the filter returns.
type setIDCase struct {
	name string
	nr   uint32
	args [6]uint64
	want uint32
}

// TestSetIDRules runs the whole filter on the calls of setIDRules: each
// way of setting a set-id bit or making a device node is refused, the
// same calls without them are allowed.
func TestSetIDRules(t *testing.T) {
	prog, err := Filter(Policy{})
	if err != nil {
		t.Fatal(err)
	}
	const (
		at     = uint64(1<<64 - 100) // AT_FDCWD as the kernel sees the int
		creat  = unix.O_CREAT | unix.O_WRONLY
		tmpRW  = unix.O_TMPFILE | unix.O_RDWR
		regMod = unix.S_IFREG | 0o644
	)
	cases := []setIDCase{
		{"fchmod 4755", unix.SYS_FCHMOD, [6]uint64{3, 0o4755}, retEPERM},
		{"fchmod 2755", unix.SYS_FCHMOD, [6]uint64{3, 0o2755}, retEPERM},
		{"fchmod 1777 (sticky)", unix.SYS_FCHMOD, [6]uint64{3, 0o1777}, retAllow},
		{"fchmod 0755", unix.SYS_FCHMOD, [6]uint64{3, 0o755}, retAllow},
		{"fchmodat 4755", unix.SYS_FCHMODAT, [6]uint64{at, 0x1000, 0o4755}, retEPERM},
		{"fchmodat 0600", unix.SYS_FCHMODAT, [6]uint64{at, 0x1000, 0o600}, retAllow},
		{"fchmodat2 6755", unix.SYS_FCHMODAT2, [6]uint64{at, 0x1000, 0o6755, unix.AT_SYMLINK_NOFOLLOW}, retEPERM},
		{"fchmodat2 0644", unix.SYS_FCHMODAT2, [6]uint64{at, 0x1000, 0o644, 0}, retAllow},
		{"openat O_CREAT 4755", unix.SYS_OPENAT, [6]uint64{at, 0x1000, creat, 0o4755}, retEPERM},
		{"openat O_TMPFILE 2755", unix.SYS_OPENAT, [6]uint64{at, 0x1000, tmpRW, 0o2755}, retEPERM},
		{"openat O_CREAT 0644", unix.SYS_OPENAT, [6]uint64{at, 0x1000, creat, 0o644}, retAllow},
		{"openat read, mode ignored", unix.SYS_OPENAT, [6]uint64{at, 0x1000, unix.O_RDONLY, 0o4755}, retAllow},
		{"mknodat set-uid file", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, unix.S_IFREG | 0o4755}, retEPERM},
		{"mknodat char device", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, unix.S_IFCHR | 0o666, 0x103}, retEPERM},
		{"mknodat block device", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, unix.S_IFBLK | 0o600, 0x800}, retEPERM},
		{"mknodat fifo", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, unix.S_IFIFO | 0o644}, retAllow},
		{"mknodat file", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, regMod}, retAllow},
		{"mknodat socket", unix.SYS_MKNODAT, [6]uint64{at, 0x1000, unix.S_IFSOCK | 0o644}, retAllow},
		{"openat2", unix.SYS_OPENAT2, [6]uint64{at, 0x1000, 0x2000, 24}, retENOSYS},
	}
	for _, c := range archSetIDCalls() {
		mode := func(m uint64) [6]uint64 {
			var a [6]uint64
			a[(c.mode-seccompArg0)/8] = m
			if c.flags >= 0 {
				a[(uint32(c.flags)-seccompArg0)/8] = creat
			}
			return a
		}
		cases = append(cases,
			setIDCase{"amd64 call with 4755", c.nr, mode(0o4755), retEPERM},
			setIDCase{"amd64 call with 0644", c.nr, mode(regMod), retAllow})
	}
	for _, c := range cases {
		got, _, err := runBPF(prog, seccompData(c.nr, auditArch, c.args))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s (nr %d): %#x, want %#x", c.name, c.nr, got, c.want)
		}
	}
}
