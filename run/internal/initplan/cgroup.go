//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// joinCgroup moves the init process into the run's cgroup v1 cgroups
// (Input.JoinCgroup), which the supervisor makes while the init process
// builds the sandbox, off the path to the script. It waits for the
// supervisor's word on the config socket: stageconfig.CgroupByte with a
// descriptor of each cgroup's "tasks" file, opened by the supervisor
// (SCM_RIGHTS), exactly as many as there are cgroups. It writes "0" to
// each, which moves the writing thread (the init process's only one)
// alone, without the global lock that moving another process takes, and
// closes it. The kernel checks the identity that opened the file, the
// supervisor's, against the task moved: no file is ever given to the
// init process's identity. Last before Landlock, and outside any layer's
// block: a failure ends the start, the supervisor having said why (or
// being gone). The script, forked later, and all it starts are born
// inside.
func (c *compiler) joinCgroup() {
	n := len(c.in.JoinCgroup)
	if n == 0 {
		return
	}
	word := c.b.Zero(8)
	iov := c.b.Zero(int(unsafe.Sizeof(unix.Iovec{})))
	c.b.SetPointer(iov+initproc.Data(unsafe.Offsetof(unix.Iovec{}.Base)), word)
	c.b.Store(iov+initproc.Data(unsafe.Offsetof(unix.Iovec{}.Len)), 8, imm(1))
	cmsg := c.b.Zero(unix.CmsgSpace(4 * n))
	msg := c.b.Zero(int(unsafe.Sizeof(unix.Msghdr{})))
	c.b.SetPointer(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Iov)), iov)
	c.b.Store(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Iovlen)), 8, imm(1))
	c.b.SetPointer(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Control)), cmsg)
	c.b.Store(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Controllen)), 8, imm(uint64(unix.CmsgSpace(4*n))))
	c.b.Sys("the run's cgroup: waiting for the supervisor", unix.SYS_RECVMSG, []initproc.Arg{num(stageconfig.ConfigFD), initproc.Ref(msg), imm(unix.MSG_CMSG_CLOEXEC)})
	c.b.Load(c.tmp, word, 1)
	c.b.Assert("the run's cgroup: the supervisor could not make it", initproc.Eq, reg(c.tmp), imm(stageconfig.CgroupByte), false)
	c.b.Load(c.tmp, cmsg+initproc.Data(unsafe.Offsetof(unix.Cmsghdr{}.Len)), 8)
	c.b.Assert(fmt.Sprintf("the run's cgroup: not %d descriptors from the supervisor", n), initproc.Eq, reg(c.tmp), imm(uint64(unix.CmsgLen(4*n))), false)
	c.b.Load(c.tmp, cmsg+initproc.Data(unsafe.Offsetof(unix.Cmsghdr{}.Type)), 4)
	c.b.Assert("the run's cgroup: no descriptors from the supervisor", initproc.Eq, reg(c.tmp), imm(unix.SCM_RIGHTS), false)
	zero := c.b.String("0")
	for i, tasks := range c.in.JoinCgroup {
		c.b.Load(c.fd, cmsg+initproc.Data(unix.CmsgLen(0)+4*i), 4)
		c.note("join the run's cgroup:", tasks)
		c.b.Sys("the run's cgroup: join "+tasks, unix.SYS_WRITE, []initproc.Arg{reg(c.fd), initproc.Ref(zero), imm(1)})
		c.closeReg(c.fd)
	}
}
