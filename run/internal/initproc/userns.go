//go:build linux && (amd64 || arm64)

package initproc

import (
	"fmt"
	"os"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// UserNS returns a user namespace whose uid and gid 0 map to uid and gid,
// the mapping of the sandbox's own namespace, for id-mapped mounts. It is
// the namespace of an init process that is given no program and exits as
// soon as the namespace is open. It runs in the supervisor.
func UserNS(uid, gid int) (int, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return -1, err
	}
	defer r.Close()
	defer w.Close()
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(null)
	// As the run's own namespace is mapped (see run's nsAttr): a root
	// caller that keeps its own uid leaves setgroups denied.
	at := &Attr{
		Cloneflags:     unix.CLONE_NEWUSER,
		Files:          []int{null, null, null, int(r.Fd()), null},
		UIDMap:         fmt.Sprintf("0 %d 1\n", uid),
		GIDMap:         fmt.Sprintf("0 %d 1\n", gid),
		SetgroupsAllow: identity.DropsToNobody(uid),
		ReportFD:       stageconfig.ReportFD,
		Name:           "ss-idmap",
	}
	// Clone: an init process with no program follows, in a new user
	// namespace, as uid 0 of it (the host's uid); it exits at once.
	pid, err := Start(at)
	if err != nil {
		return -1, err
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/user", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	w.Close() // the init process reads the end of its program and exits
	unix.Kill(pid, unix.SIGKILL)
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	if err != nil {
		return -1, err
	}
	return fd, nil
}
