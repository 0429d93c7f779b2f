package posix

import (
	"slices"
	"strings"
	"testing"
)

func TestProcOvermounts(t *testing.T) {
	cases := []struct {
		name, mountinfo string
		want            []string
	}{
		{"host", "22 1 0:21 / /proc rw,nosuid - proc proc rw\n30 22 0:28 / /proc/sys/fs/binfmt_misc rw - autofs systemd-1 rw\n", nil},
		{"docker", "600 599 0:60 / /proc ro - proc proc rw\n601 600 0:5 /null /proc/kcore rw - devtmpfs udev rw\n" +
			"602 600 0:61 / /proc/acpi ro - tmpfs tmpfs ro\n603 600 0:5 /null /proc/timer\\040list rw - devtmpfs udev rw\n",
			[]string{"/proc/kcore", "/proc/acpi", "/proc/timer list"}},
		{"a sibling named like proc", "40 1 0:30 / /procfs rw - tmpfs t rw\n", nil},
		{"short lines", "1 2 3\n\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := procOvermounts(c.mountinfo); !slices.Equal(got, c.want) {
				t.Errorf("procOvermounts = %q, want %q", got, c.want)
			}
		})
	}
	why := procMaskedWhy([]string{"/proc/a", "/proc/b", "/proc/c", "/proc/d", "/proc/e"})
	if !strings.Contains(why, "/proc/a, /proc/b, /proc/c and 2 more") || !strings.Contains(why, "unmask") {
		t.Errorf("procMaskedWhy = %q", why)
	}
}

func FuzzProcOvermounts(f *testing.F) {
	f.Add("601 600 0:5 /null /proc/kcore rw - devtmpfs udev rw\n")
	f.Add("1 2 3 4 /proc/a\\134b\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range procOvermounts(s) {
			if !strings.HasPrefix(p, "/proc/") {
				t.Fatalf("%q is not below /proc", p)
			}
		}
	})
}
