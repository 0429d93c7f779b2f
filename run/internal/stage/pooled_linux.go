package stage

import (
	"errors"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// receivePooled runs in the init stage before it reads its config. A
// pooled stage's config descriptor is a socket, and the first byte on it
// comes with the run's descriptors, which it moves where a stage started
// for the run would have them. A stage started for its run has a pipe
// there, and nothing to do.
func receivePooled() error {
	var st unix.Stat_t
	if err := unix.Fstat(stageconfig.ConfigFD, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil
	}
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(stageconfig.MaxPassedFDs*4))
	n, oobn, flags, _, err := unix.Recvmsg(stageconfig.ConfigFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
	switch {
	case err != nil:
		return fmt.Errorf("receiving the run's descriptors: %v", err)
	case n != 1:
		return errors.New("receiving the run's descriptors: the supervisor closed the config socket")
	case flags&unix.MSG_CTRUNC != 0:
		return errors.New("receiving the run's descriptors: too many")
	case buf[0] != stageconfig.PassNoStdin && buf[0] != stageconfig.PassWithStdin:
		return fmt.Errorf("receiving the run's descriptors: bad header %q", buf[0])
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return fmt.Errorf("receiving the run's descriptors: %v", err)
		}
		for i := range msgs {
			rights, err := unix.ParseUnixRights(&msgs[i])
			if err != nil {
				return fmt.Errorf("receiving the run's descriptors: %v", err)
			}
			fds = append(fds, rights...)
		}
	}
	if buf[0] == stageconfig.PassWithStdin && len(fds) == 0 {
		return errors.New("receiving the run's descriptors: stdin announced, none sent")
	}
	// First move every received descriptor above the slots they go to,
	// so that placing one cannot overwrite another.
	for i, fd := range fds {
		hi, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, stageconfig.FirstTreeFD+len(fds))
		if err != nil {
			return fmt.Errorf("receiving the run's descriptors: %v", err)
		}
		unix.Close(fd)
		fds[i] = hi
	}
	if buf[0] == stageconfig.PassWithStdin {
		if err := unix.Dup3(fds[0], 0, 0); err != nil {
			return fmt.Errorf("receiving stdin: %v", err)
		}
		unix.Close(fds[0])
		fds = fds[1:]
	}
	for i, fd := range fds {
		slot := stageconfig.FirstTreeFD + i
		if _, err := unix.FcntlInt(uintptr(slot), unix.F_GETFD, 0); !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("receiving the run's descriptors: descriptor %d is in use", slot)
		}
		if err := unix.Dup3(fd, slot, 0); err != nil {
			return fmt.Errorf("receiving the run's descriptors: %v", err)
		}
		unix.Close(fd)
	}
	return nil
}
