package cgroup

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// Why the init process is born inside its cgroup v1 cgroups instead of
// being moved there: writing a pid to cgroup.procs takes the kernel's
// global cgroup_threadgroup_rwsem for writing, and that waits for an RCU
// grace period, which took 0.1 to 4 ms here (2-core machine, cgroup v1)
// and stalls every fork, exec and thread start on the machine meanwhile.
// Moving only the calling thread, by writing "0" to a v1 "tasks" file,
// skips that lock (the kernel's single-thread migration), and a child
// forked by that thread starts in the thread's cgroups: the v1
// counterpart of clone3's CLONE_INTO_CGROUP. So the supervisor moves the
// one locked thread that starts the init process into the run's cgroups,
// starts it, and moves the thread back.

// StartInside runs start, which forks the init process, on a thread that
// is inside the run's v1 cgroups, so the init process is born inside:
// inside is true then. When the thread cannot be moved (a v2 cgroup, files
// it may not write), start runs as it is and the caller attaches the
// process afterwards (Attach). A caller's thread that was in other v1
// cgroups than its process ends up in the process's. For a cgroup placed
// late, start runs as it is and inside is true: the init process joins it
// itself, before it starts the script (see PlanLate).
//
// The thread moves back after start has returned (see cg.backDone). If it
// cannot be moved back, it stays in the run's cgroups for the run: its
// goroutine keeps it locked until Close, then exits locked, which ends
// the thread (and its membership). It must not end earlier: the init
// process's parent-death signal fires when the thread that forked it
// exits. Close's kill never signals the supervisor's own process.
func (cg *Cgroup) StartInside(start func() error) (inside bool, err error) {
	if cg.late {
		// The init process joins it itself (see PlanLate).
		err = start()
		return err == nil, err
	}
	if cg.version != 1 {
		return false, start()
	}
	type result struct {
		inside bool
		err    error
	}
	ch := make(chan result, 1)
	var bornInside func(locked chan<- struct{})
	bornInside = func(locked chan<- struct{}) {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			// The process's first thread: /proc/self/cgroup, which
			// Open reads to place every run's cgroup, shows its
			// cgroups, and a goroutine that ends locked to it does not
			// end it. It stays locked to this goroutine until another
			// one holds a thread of its own, which is then not this one.
			other := make(chan struct{})
			go bornInside(other)
			<-other
			runtime.UnlockOSThread()
			return
		}
		if locked != nil {
			close(locked)
		}
		var r result
		back, entered := cg.enterThread()
		r.err = start()
		r.inside = entered && r.err == nil
		if back == nil {
			runtime.UnlockOSThread()
			ch <- r
			return
		}
		// The caller goes on at once: the way back (a cgroup migration
		// per hierarchy, tens of microseconds) is off its path, which
		// leads to the init process's program. Close waits for it
		// (backDone) before it removes the cgroup.
		backDone, release := make(chan struct{}), make(chan struct{})
		cg.backDone = backDone
		cg.release = func() { close(release) }
		ch <- r
		ok := back()
		close(backDone)
		if ok {
			runtime.UnlockOSThread()
			return
		}
		<-release
		// Returning while locked ends this thread.
	}
	go bornInside(nil)
	r := <-ch
	return r.inside, r.err
}

// enterThread moves the calling (locked) thread into the run's cgroups and
// reports whether it is in all of them. back, nil when nothing moved, moves
// the thread back and reports whether it could.
func (cg *Cgroup) enterThread() (back func() bool, entered bool) {
	// The thread is taken to be in the process's cgroups (cg.from, from
	// /proc/self/cgroup), and that is where it goes back to. Reading its
	// own (/proc/thread-self/cgroup, /proc/self/task/TID/cgroup) would
	// leave dentries under /proc/PID/task/TID, and then reaping this
	// process costs its parent 4 to 9 ms of kernel time on a loaded
	// machine (release_task's proc_invalidate_siblings_dcache spinning in
	// d_walk while the exiting threads drop theirs; Linux 6.18, perf).
	if len(cg.ctrls) != len(cg.dirs) || len(cg.from) != len(cg.dirs) {
		return nil, false
	}
	var in, out []int
	closeAll := func() {
		for _, fd := range append(in, out...) {
			unix.Close(fd)
		}
	}
	for i := range cg.dirs {
		// Both files are opened before anything moves: the way back is
		// then no longer a matter of permissions.
		fdIn, err1 := unix.Open(cg.dirs[i]+"/tasks", unix.O_WRONLY|unix.O_CLOEXEC, 0)
		fdOut, err2 := unix.Open(parentDir(cg.dirs[i])+"/tasks", unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err1 == nil {
			in = append(in, fdIn)
		}
		if err2 == nil {
			out = append(out, fdOut)
		}
		if err1 != nil || err2 != nil {
			closeAll()
			return nil, false
		}
	}
	self := []byte("0")
	moved := 0
	back = func() bool {
		okAll := true
		for _, fd := range out[:moved] {
			if _, err := unix.Write(fd, self); err != nil {
				okAll = false
			}
		}
		closeAll()
		return okAll
	}
	for _, fd := range in {
		if _, err := unix.Write(fd, self); err != nil {
			return back, false
		}
		moved++
	}
	return back, true
}
