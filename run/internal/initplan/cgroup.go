//go:build linux && (amd64 || arm64)

package initplan

import (
	"path/filepath"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// openCgroupHomes opens the folders the run's cgroups are made in (the
// supervisor's own cgroups, which exist), for joinCgroup, first thing:
// once pivot_root has detached the host's tree they are reached through
// these descriptors only. Into one register each (c.cgroupHomes).
func (c *compiler) openCgroupHomes() {
	for _, tasks := range c.in.JoinCgroup {
		home := filepath.Dir(filepath.Dir(tasks))
		r := c.b.NewReg()
		c.b.Sys("the run's cgroup: open "+home, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(home), imm(unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC)}, initproc.Into(r))
		c.cgroupHomes = append(c.cgroupHomes, r)
	}
}

// joinCgroup moves the init process into the run's cgroup v1 cgroups
// (Input.JoinCgroup), which the supervisor makes while the init process
// builds the sandbox, off the path to the script: it waits for the
// supervisor's word that they exist (stageconfig.CgroupByte on the config
// pipe), then writes "0" to each "tasks" file, which moves the writing
// thread (the init process's only one) alone, without the global lock
// that moving another process takes. Last before Landlock, which would
// refuse the open, and outside any layer's block: a failure ends the
// start, the supervisor having said why (or being gone). The script,
// forked later, and all it starts are born inside.
//
// The supervisor gave the files to the init process's host identity; the
// kernel also checks that the opener may move the task, itself here.
func (c *compiler) joinCgroup() {
	if len(c.in.JoinCgroup) == 0 {
		return
	}
	word := c.b.Zero(8)
	c.b.Sys("the run's cgroup: waiting for the supervisor", unix.SYS_READ, []initproc.Arg{num(stageconfig.ConfigFD), initproc.Ref(word), imm(1)})
	c.b.Load(c.tmp, word, 1)
	c.b.Assert("the run's cgroup: the supervisor could not make it", initproc.Eq, reg(c.tmp), imm(stageconfig.CgroupByte), false)
	zero := c.b.String("0")
	for i, tasks := range c.in.JoinCgroup {
		home := c.cgroupHomes[i]
		rel := filepath.Join(filepath.Base(filepath.Dir(tasks)), "tasks")
		c.b.Sys("the run's cgroup: open "+tasks, unix.SYS_OPENAT, []initproc.Arg{reg(home), c.ref(rel), imm(unix.O_WRONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC)}, initproc.Into(c.fd))
		c.b.Sys("the run's cgroup: join "+tasks, unix.SYS_WRITE, []initproc.Arg{reg(c.fd), initproc.Ref(zero), imm(1)})
		c.closeReg(c.fd)
		c.closeReg(home)
	}
}
