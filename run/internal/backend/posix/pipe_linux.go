package posix

import (
	"os"

	"golang.org/x/sys/unix"
)

// Pipe returns a pipe between the supervisor and an init process: the
// supervisor's end non-blocking, on the runtime's poller (deadlines, no
// thread parked per read), and the init process's end a plain blocking
// descriptor, as the init process and the script use it. os.Pipe would put both
// ends on the poller, and the init process's would then cost a switch back to
// blocking before the clone and a removal from the poller at its close
// after the clone, while the init process waits for its program.
func Pipe(stageReads bool) (sup, stage *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	supFD, stageFD := fds[0], fds[1]
	if stageReads {
		supFD, stageFD = fds[1], fds[0]
	}
	if err := unix.SetNonblock(supFD, true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(supFD), "|0"), os.NewFile(uintptr(stageFD), "|1"), nil
}
