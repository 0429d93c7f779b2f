//go:build linux

package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal pair with output post-processing off
// (no "\n" to "\r\n"), so that what the harness reads from master is the
// bytes a terminal would have been sent.
func openPTY() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	if t, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS); err == nil {
		t.Oflag &^= unix.OPOST
		unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, t)
	}
	return m, s, nil
}

// drainPTY copies master into w until the slave side is closed everywhere
// (the read then fails with EIO), and closes master.
func drainPTY(master *os.File, w io.Writer) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(w, master)
		master.Close()
	}()
	return done
}
