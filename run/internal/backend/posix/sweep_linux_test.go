package posix

import (
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// startLeader starts argv as the leader of a new session and returns its
// pid; the caller reaps it.
func startLeader(t *testing.T, argv ...string) int {
	t.Helper()
	pid, err := syscall.ForkExec(argv[0], argv, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{Setsid: true}})
	if err != nil {
		t.Skipf("cannot start %s: %v", argv[0], err)
	}
	return pid
}

// startSession is startLeader, with the leader killed and reaped at the
// end of the test.
func startSession(t *testing.T, argv ...string) int {
	t.Helper()
	pid := startLeader(t, argv...)
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Wait4(pid, nil, 0, nil)
	})
	return pid
}

// TestSessionMembersHoldsTheSession lists a session of a leader and two
// members that are not ours, and kills them through what it was given.
func TestSessionMembersHoldsTheSession(t *testing.T) {
	leader := startSession(t, "/bin/sh", "-c", "sleep 30 & sleep 30 & wait")
	var members []member
	for i := 0; i < 200 && len(members) < 2; i++ {
		for _, m := range members {
			m.close()
		}
		members = nil
		time.Sleep(5 * time.Millisecond)
		sessionMembers(leader, func(m member) { members = append(members, m) })
	}
	for _, m := range members {
		if m.ours {
			t.Errorf("member %d counted as ours: its parent is the leader", m.pid)
		}
		if m.pid == leader {
			t.Error("the leader is listed")
		}
		m.signal()
		m.close()
	}
	if len(members) != 2 {
		t.Fatalf("members of the session: %+v, want the two sleeps", members)
	}
	// The leader reaps them; then nothing of the session is left but it.
	deadline := time.Now().Add(5 * time.Second)
	for sessionMembers(leader, member.close) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the members outlived their kill")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHoldMemberOnlyItsSession refuses a process of another session and
// one that is gone; a member of ours is reaped once it has exited.
func TestHoldMemberOnlyItsSession(t *testing.T) {
	leader := startLeader(t, "/bin/sleep", "30")
	self := strconv.Itoa(os.Getpid())
	if m, ok := holdMember(leader, strconv.Itoa(leader+1), self); ok {
		m.close()
		t.Error("a process of another session was held")
	}
	m, ok := holdMember(leader, strconv.Itoa(leader), self)
	if !ok || !m.ours {
		syscall.Kill(leader, syscall.SIGKILL)
		syscall.Wait4(leader, nil, 0, nil)
		t.Fatalf("the leader as a member of its own session: %+v, %v", m, ok)
	}
	m.signal()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m.reap()
		if _, ok := holdMember(leader, strconv.Itoa(leader), self); !ok {
			break
		}
		if time.Now().After(deadline) {
			m.close()
			syscall.Wait4(leader, nil, 0, nil)
			t.Fatal("a killed member of ours was not reaped")
		}
		time.Sleep(time.Millisecond)
	}
	m.close()
}

// TestHoldMemberRefusesAThread gives holdMember the id of one of this
// process's own threads, which the kernel shows at /proc/TID but has no
// pidfd for: a pid reaped after the listing can be taken by a thread of
// another process, and falling back to the id alone would SIGKILL that
// whole process. Only a kernel without pidfds falls back.
func TestHoldMemberRefusesAThread(t *testing.T) {
	if fd, err := unix.PidfdOpen(os.Getpid(), 0); err != nil {
		t.Skipf("no pidfd here: %v", err)
	} else {
		unix.Close(fd)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	if tid == os.Getpid() {
		done := make(chan int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			done <- unix.Gettid()
		}()
		tid = <-done
	}
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := holdMember(tid, strconv.Itoa(sid), strconv.Itoa(os.Getpid())); ok {
		m.close()
		t.Errorf("thread %d held as a member: %+v", tid, m)
	}
}

// TestMemberKillKeepsToItsPidfd lists a member, lets it be reaped behind
// the sweep's back (as a concurrent sweep or its parent would) and makes
// another child of the test take its pid (/proc/sys/kernel/ns_last_pid,
// root only). The member's kill must neither signal nor reap that process:
// the sweep of the previous code, which killed and waited by pid, did both.
func TestMemberKillKeepsToItsPidfd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to set ns_last_pid")
	}
	pid := startLeader(t, "/bin/sleep", "30")
	m, ok := holdMember(pid, strconv.Itoa(pid), strconv.Itoa(os.Getpid()))
	if !ok || !m.ours {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Wait4(pid, nil, 0, nil)
		t.Fatalf("the session leader as a member of its session: %+v, %v", m, ok)
	}
	if m.pidfd < 0 {
		m.signal()
		syscall.Wait4(pid, nil, 0, nil)
		t.Skip("no pidfd here")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	if _, err := syscall.Wait4(pid, nil, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0); err != nil {
		unix.Close(m.pidfd)
		t.Skipf("ns_last_pid: %v", err)
	}
	other, err := syscall.ForkExec("/bin/sleep", []string{"sleep", "30"}, &syscall.ProcAttr{})
	if err != nil {
		unix.Close(m.pidfd)
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(other, syscall.SIGKILL)
		syscall.Wait4(other, nil, 0, nil)
	}()
	if other != pid {
		unix.Close(m.pidfd)
		t.Skipf("the pid went to another process first (%d, want %d)", other, pid)
	}
	m.signal()
	m.reap()
	m.close()
	if err := syscall.Kill(other, 0); err != nil {
		t.Errorf("the process that took the pid: %v", err)
	}
	var ws syscall.WaitStatus
	if got, err := syscall.Wait4(other, &ws, syscall.WNOHANG, nil); got != 0 || err != nil {
		t.Errorf("the process that took the pid was killed or reaped: %d, %v, %v", got, err, ws)
	}
}
