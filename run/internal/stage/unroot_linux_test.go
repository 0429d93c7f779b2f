package stage

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestUnroot checks the messages of the mount steps' errors once unroot
// has named their paths as the script sees them.
func TestUnroot(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"path error", &os.PathError{Op: "mkdir", Path: "/tmp/home/x", Err: unix.EROFS}, "mkdir /home/x: read-only file system"},
		{"the root itself", &os.PathError{Op: "remount (flags 0x1)", Path: "/tmp", Err: unix.EPERM}, "remount (flags 0x1) /: operation not permitted"},
		{"a sibling of the root", &os.PathError{Op: "mkdir", Path: "/tmpx/a", Err: unix.EPERM}, "mkdir /tmpx/a: operation not permitted"},
		{"link", &os.LinkError{Op: "symlink", Old: "/tmp/target", New: "/tmp/dev/fd", Err: unix.EEXIST}, "symlink /tmp/target /dev/fd: file exists"},
		{"joined", errors.Join(&os.PathError{Op: "statfs", Path: "/tmp/usr", Err: unix.ENOENT}, errors.New("bind /etc/x: EPERM")), "statfs /usr: no such file or directory\nbind /etc/x: EPERM"},
		{"already wrapped", fmt.Errorf("grant /tmp/data: %w", &os.PathError{Op: "mkdir", Path: "/tmp/tmp/data", Err: unix.EPERM}), "grant /tmp/data: mkdir /tmp/tmp/data: operation not permitted"},
		{"several %w", fmt.Errorf("%w; %w", &os.PathError{Op: "mkdir", Path: "/tmp/a", Err: unix.EPERM}, errUnavailable), "mkdir /tmp/a: operation not permitted; " + errUnavailable.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := unroot("/tmp", c.err)
			if got.Error() != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
			var errno unix.Errno
			if errors.As(c.err, &errno) && !errors.Is(got, errno) {
				t.Errorf("%v no longer wraps %v", got, errno)
			}
		})
	}
}
