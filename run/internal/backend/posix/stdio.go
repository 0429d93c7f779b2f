//go:build linux || darwin

package posix

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ChownOutput gives the script's stdout and stderr pipes to its host
// identity, so that reopening them by name (echo x > /dev/stderr,
// /proc/self/fd/1) passes the permission check, as it does outside the
// sandbox; the pipes are private to this run either way.
func ChownOutput(uid, gid int, outW, errW *os.File) error {
	if uid == os.Geteuid() {
		return nil
	}
	for _, f := range []*os.File{outW, errW} {
		if err := unix.Fchown(int(f.Fd()), uid, gid); err != nil {
			return err
		}
	}
	return nil
}

// StdinFile turns the caller's reader into something exec can hand over:
// nil stays nil (/dev/null), a file is passed as is but a folder (not at
// all) and a socket (copied) (see DirectStdin), and any other reader is
// copied through a pipe.
func StdinFile(r io.Reader, closeLater *[]*os.File) (io.Reader, error) {
	if r == nil {
		return nil, nil
	}
	if f, ok := r.(*os.File); ok {
		asIs, skip := DirectStdin(f)
		switch {
		case skip:
			return nil, nil
		case asIs:
			return f, nil
		}
	}
	pw, pr, err := Pipe(true)
	if err != nil {
		return nil, err
	}
	*closeLater = append(*closeLater, pr)
	go func() {
		io.Copy(pw, r)
		pw.Close()
	}()
	return pr, nil
}

// DirectStdin tells how the file f, given as the script's stdin, reaches
// it: not at all (skip: the script reads /dev/null) when it is a folder,
// whose descriptor would lead into the host's tree from inside the
// sandbox's root (/proc/self/fd/0, openat(0, "..")), past the mount
// namespace; copied through a pipe when it is a socket, the caller's
// connection: passed as it is, the script could write to the caller's
// peer (a Node.js parent's stdio "pipes" are socket pairs; an inetd-style
// service's stdin is its client) or shut it down; as it is otherwise.
func DirectStdin(f *os.File) (asIs, skip bool) {
	st, err := f.Stat()
	switch {
	case err != nil || st.IsDir():
		return false, true
	case st.Mode()&os.ModeSocket != 0:
		return false, false
	}
	return true, false
}
