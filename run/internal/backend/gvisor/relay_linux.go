package gvisor

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ExecRelayIfRequested turns this process into the network relay of a
// gVisor run when runsc started it as the sandbox's first process (see
// bundleSpec), or the waiting process of a pre-started sandbox (see
// Prestarted): it never returns then. Otherwise it does nothing.
//
// The sandbox has gVisor's own network stack with a loopback and nothing
// else (runsc --network none); the relay listens on the proxy port of
// that loopback and carries each connection to the supervisor's
// filtering proxy over a Unix socket it makes in a host folder bound
// into the sandbox (runsc --host-uds create; the supervisor connects),
// then runs the script as its child, reaps and exits with the script's
// status.
func ExecRelayIfRequested() {
	switch {
	case len(os.Args) >= 5 && os.Args[0] == relayArg0 && os.Getpid() == 1:
		os.Exit(relayMain(os.Args[1], os.Args[2], os.Args[3], os.Args[4:]))
	case len(os.Args) >= 4 && os.Args[0] == limitArg0 && os.Getppid() == 1:
		os.Exit(limitExec(os.Args[1], os.Args[2], os.Args[3:]))
	case len(os.Args) == 1 && os.Args[0] == poolArg0 && os.Getpid() == 1:
		os.Exit(poolWait())
	}
}

// relayFail reports why the relay could not run the script; its status.
func relayFail(err error) int {
	fmt.Fprintf(os.Stderr, "skill-sandbox: gvisor network relay: %v\n", err)
	return 125
}

// relayMain listens on 127.0.0.1 at each of ports (a comma-separated
// list: the proxy's port, then the local ports of AllowLocal) and on its
// Unix socket, waits for the supervisor's control connection there,
// starts argv under the address-space limit as (bytes, "0" for none) and
// the task limit nproc (see limitExec) and returns its exit status (128
// plus the signal when a signal ended it); 125 when any of that failed,
// the script not run.
func relayMain(ports, as, nproc string, argv []string) int {
	var lns []net.Listener
	for _, port := range strings.Split(ports, ",") {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || len(lns) >= maxRelayPorts {
			return relayFail(fmt.Errorf("bad port list %q", ports))
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+port)
		if err != nil {
			return relayFail(err)
		}
		lns = append(lns, ln)
	}
	uln, err := net.Listen("unix", sandboxNetDir+"/"+relaySocket)
	if err != nil {
		return relayFail(err)
	}
	ctl, err := uln.Accept()
	if err != nil {
		return relayFail(fmt.Errorf("waiting for the supervisor: %v", err))
	}
	var mu sync.Mutex
	for i, ln := range lns {
		go relayAccept(ln, byte(i+1), uln, ctl, &mu)
	}
	wd, _ := os.Getwd()
	args := append([]string{limitArg0, as, nproc}, argv...)
	pid, err := syscall.ForkExec(relayArg0, args, &syscall.ProcAttr{Dir: wd, Env: os.Environ(), Files: []uintptr{0, 1, 2}})
	if err != nil {
		return relayFail(fmt.Errorf("starting %s: %v", argv[0], err))
	}
	return reapUntil(pid)
}

// limitExec sets RLIMIT_AS to as bytes and RLIMIT_NPROC to nproc tasks
// plus the relay's (soft and hard; "0" leaves either) and executes argv
// in place of this process. Neither limit can be given to the relay by
// runsc, as the script's other limits are: the Go runtime reserves more
// address space at its start than a script's limit may allow, and a
// thread it cannot make is fatal to it (gVisor's kernel counts the
// tasks of the uid, the relay's threads with the script's). Lowered once
// the runtime is up, RLIMIT_AS binds only what execve maps next, the
// script. Nothing is allocated between the system calls: the heap could
// not grow under the limit.
func limitExec(as, nproc string, argv []string) int {
	n, err := strconv.ParseUint(as, 10, 64)
	if err != nil {
		return relayFail(fmt.Errorf("bad address-space limit %q", as))
	}
	tasks, err := strconv.ParseUint(nproc, 10, 64)
	if err != nil {
		return relayFail(fmt.Errorf("bad task limit %q", nproc))
	}
	if tasks > 0 {
		// The relay's threads count against the uid's tasks too: the
		// script gets nproc of its own, as natively (where the init
		// process is not the script's uid).
		relay, err := os.ReadDir("/proc/1/task")
		if err != nil {
			return relayFail(fmt.Errorf("counting the relay's threads: %v", err))
		}
		tasks += uint64(len(relay))
	}
	path := argv[0]
	if lp, err := exec.LookPath(path); err == nil {
		path = lp
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return relayFail(err)
	}
	av, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return relayFail(err)
	}
	ev, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return relayFail(err)
	}
	nlim := syscall.Rlimit{Cur: tasks, Max: tasks}
	if tasks > 0 {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, unix.RLIMIT_NPROC, uintptr(unsafe.Pointer(&nlim)), 0, 0, 0); e != 0 {
			return relayFail(fmt.Errorf("RLIMIT_NPROC: %v", e))
		}
	}
	lim := syscall.Rlimit{Cur: n, Max: n}
	if n > 0 {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, syscall.RLIMIT_AS, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
			return relayFail(fmt.Errorf("RLIMIT_AS: %v", e))
		}
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&av[0])), uintptr(unsafe.Pointer(&ev[0])))
	return relayFail(fmt.Errorf("starting %s: %v", argv[0], e))
}

// reapUntil reaps every child (the relay is the sandbox's first process:
// orphans come to it) until pid ends, and returns pid's status.
func reapUntil(pid int) int {
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 125
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// relayAccept carries each connection of ln to one the supervisor
// makes to uln, which it asks for with the byte which on ctl (1 for the
// proxy's port, 2 and up for the local ports, in order). mu pairs each
// request with the next connection to uln: the listeners ask in turn.
func relayAccept(ln net.Listener, which byte, uln net.Listener, ctl net.Conn, mu *sync.Mutex) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		var up net.Conn
		_, err = ctl.Write([]byte{which})
		if err == nil {
			up, err = uln.Accept()
		}
		mu.Unlock()
		if err != nil {
			c.Close()
			return
		}
		go relayConn(c, up)
	}
}

// relayConn copies c to up and back, passing each direction's end on as
// a half-close, as the proxy expects of a client.
func relayConn(c, up net.Conn) {
	defer c.Close()
	defer up.Close()
	done := make(chan struct{})
	go func() {
		io.Copy(up, c)
		up.(*net.UnixConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}
