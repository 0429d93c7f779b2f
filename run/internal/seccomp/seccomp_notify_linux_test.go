//go:build linux && (amd64 || arm64)

package seccomp

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// underFilter runs adds on a thread of its own under the filter of
// Policy{NotifyEpollAdd: true}, once serve has been given the filter's
// listener; the thread ends with adds (it stays locked), so the filter
// goes with it. Serve runs on the test's goroutine: a thread under the
// filter that opened an *os.File would register it with the runtime's
// own epoll instance, and wait for a server not yet started.
func underFilter(t *testing.T, serve func(listener int) error, adds func() error) error {
	t.Helper()
	if !NotifyContinues() {
		t.Skip("the kernel has no SECCOMP_USER_NOTIF_FLAG_CONTINUE (Linux 5.5)")
	}
	prog, err := Filter(Policy{NotifyEpollAdd: true})
	if err != nil {
		t.Fatal(err)
	}
	listeners, goAhead, errc := make(chan int, 1), make(chan struct{}), make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			errc <- err
			return
		}
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		fd, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
		if e != 0 {
			errc <- e
			return
		}
		listeners <- int(fd)
		<-goAhead
		errc <- adds()
	}()
	select {
	case err := <-errc:
		return err
	case fd := <-listeners:
		if err := serve(fd); err != nil {
			return err
		}
	}
	close(goAhead)
	return <-errc
}

// addWatches adds n pipes' read ends to a new epoll instance and returns
// the errors, nil for a watch added; it closes all it opened.
func addWatches(n int) ([]error, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer unix.Close(ep)
	var errs []error
	for i := 0; i < n; i++ {
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return nil, err
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		errs = append(errs, unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, p[0], &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(p[0])}))
		if i == 0 {
			// MOD and DEL pass without the supervisor.
			ev := &unix.EpollEvent{Events: unix.EPOLLOUT}
			if err := errors.Join(unix.EpollCtl(ep, unix.EPOLL_CTL_MOD, p[0], ev), unix.EpollCtl(ep, unix.EPOLL_CTL_DEL, p[0], nil)); err != nil && errs[0] == nil {
				return nil, err
			}
		}
	}
	return errs, nil
}

// TestEpollServerBudget: a thread under the filter gets its first budget
// additions and ENOSPC for the rest (the DEL in between does not give one
// back); once the server stops, an addition fails with ENOSYS, not
// unbounded.
func TestEpollServerBudget(t *testing.T) {
	const budget, tries = 5, 9
	var s *EpollServer
	var errs, after []error
	err := underFilter(t, func(listener int) (err error) {
		s, err = ServeEpoll(listener, budget)
		return err
	}, func() (err error) {
		if errs, err = addWatches(tries); err != nil {
			return err
		}
		if n := s.Stop(); n != tries {
			t.Errorf("the server counted %d additions, want %d", n, tries)
		}
		after, err = addWatches(1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		want := error(nil)
		if i >= budget {
			want = unix.ENOSPC
		}
		if e != want {
			t.Errorf("addition %d: %v, want %v", i+1, e, want)
		}
	}
	if after[0] != unix.ENOSYS {
		t.Errorf("with the listener closed, an addition got %v, want ENOSYS", after[0])
	}
}

// TestReleaseAtLeast: kernel releases as uname gives them.
func TestReleaseAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"5.5.0", true}, {"5.4.0-150-generic", false}, {"6.1.0-18-amd64", true}, {"5.10", true},
		{"4.19.0", false}, {"5.5-rc1", true}, {"5", false}, {"", false}, {"x.y", false}, {"10.0.0", true},
	} {
		if got := releaseAtLeast(c.release, 5, 5); got != c.want {
			t.Errorf("%q: %v, want %v", c.release, got, c.want)
		}
	}
}

// TestListenerClosedWhilePending: an addition waiting for an answer when
// the listener closes (the supervisor died) fails with ENOSYS, and so
// does every later one: the script neither hangs nor adds unbounded.
func TestListenerClosedWhilePending(t *testing.T) {
	var errs []error
	err := underFilter(t, func(listener int) error {
		go func() {
			// Close once the addition waits: the listener is readable.
			fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}}
			for {
				if n, err := unix.Poll(fds, -1); n == 1 || err != unix.EINTR {
					break
				}
			}
			unix.Close(listener)
		}()
		return nil
	}, func() (err error) {
		errs, err = addWatches(2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range errs {
		if e != unix.ENOSYS {
			t.Errorf("addition %d: %v, want ENOSYS", i+1, e)
		}
	}
}
