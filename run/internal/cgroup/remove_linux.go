package cgroup

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// PassHomeTasks opens, for a v1 cgroup, the "tasks" file of each home
// cgroup and puts it in slots, the init process's
// stageconfig.HomeTasksFD slots (see there: the init process moves itself
// home with them before its report, so that RemoveEmpty can remove the
// cgroup while it exits). It returns what closes the supervisor's copies
// and empties the slots once the init process has started. Where a file
// cannot be opened, where slots is too short, or under v2, where a
// process can only move itself to another domain under a global lock
// that waits for an RCU grace period (milliseconds), the slots stay empty
// and the cgroup is removed after the init process's exit instead.
func (cg *Cgroup) PassHomeTasks(slots []*os.File) (closeAll func()) {
	if cg.version != 1 || len(cg.home) != len(cg.dirs) || len(cg.home) > stageconfig.HomeTasksSlots || len(slots) < stageconfig.HomeTasksSlots {
		return func() {}
	}
	var files []*os.File
	closeAll = func() {
		for _, f := range files {
			f.Close()
		}
		clear(slots)
	}
	for _, home := range cg.home {
		f, err := os.OpenFile(filepath.Join(home, "tasks"), os.O_WRONLY, 0)
		if err != nil {
			closeAll()
			return func() {}
		}
		files = append(files, f)
	}
	copy(slots, files)
	return closeAll
}

// RemoveEmpty removes the cgroup's folders, which rmdir allows only when
// no process is left in them, and reports whether all are gone. The
// cgroup is closed then; otherwise Close must still be called.
func (cg *Cgroup) RemoveEmpty() bool {
	cg.waitBack()
	var left, leftHome []string
	for i, dir := range cg.dirs {
		if err := unix.Rmdir(dir); err != nil && err != unix.ENOENT {
			left = append(left, dir)
			if i < len(cg.home) {
				leftHome = append(leftHome, cg.home[i])
			}
		}
	}
	cg.dirs, cg.home = left, leftHome
	return len(left) == 0
}

// waitBack waits until the thread that started the init process inside
// the cgroup has tried to move back out (see StartInside).
func (cg *Cgroup) waitBack() {
	if cg.backDone != nil {
		<-cg.backDone
		cg.backDone = nil
	}
}

// Close kills every process left in the cgroup and removes it; a nil or
// closed cgroup is left alone.
func (cg *Cgroup) Close() {
	if cg == nil {
		return
	}
	cg.closeStats()
	cg.waitBack()
	if cg.release != nil {
		cg.release()
		cg.release = nil
	}
	if cg.RemoveEmpty() {
		return
	}
	for _, dir := range cg.dirs {
		if cg.version == 2 && write(dir, "cgroup.kill", "1") == nil {
			continue
		}
		killMembers(dir)
	}
	for _, dir := range cg.dirs {
		// Killed processes leave the cgroup once the kernel has released
		// them; until then rmdir fails with EBUSY.
		for i := 0; i < 200; i++ {
			err := unix.Rmdir(dir)
			if err == nil || err == unix.ENOENT {
				break
			}
			if err != unix.EBUSY {
				break
			}
			if i%20 == 19 {
				killMembers(dir)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	cg.dirs = nil
}

// killMembers sends SIGKILL to every process listed in dir, round after
// round until none is left (a process may fork between the read and the
// kill; pids.max bounds how long that can go on). This process is never
// signalled: one of its threads may be listed (see StartInside).
func killMembers(dir string) {
	self := os.Getpid()
	for round := 0; round < 100; round++ {
		data, err := proc.ReadFile(filepath.Join(dir, "cgroup.procs"), maxProcsList)
		if err != nil {
			return
		}
		killed := 0
		for _, p := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(p); err == nil && n > 0 && n != self {
				unix.Kill(n, unix.SIGKILL)
				killed++
			}
		}
		if killed == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
