//go:build linux && (amd64 || arm64)

package seccomp

import "golang.org/x/sys/unix"

// The argument checks of the seccomp filter that depend on which
// namespaces are in force (Policy). In every mode:
//
//	system call                                    result
//	---------------------------------------------  ------------------------
//	socket of a family other than AF_UNIX,         EAFNOSUPPORT (AF_VSOCK reaches the
//	  AF_INET, AF_INET6 (and AF_NETLINK, below)                  hypervisor from any netns;
//	                                                             AF_PACKET, AF_BLUETOOTH, ...)
//	socket AF_INET/AF_INET6 other than a TCP       EPERM  (raw, ICMP, SCTP, MPTCP: no Landlock rule
//	  stream or a UDP datagram socket                      covers them)
//	socket AF_UNIX other than stream, datagram,    EPERM
//	  seqpacket
//	socket AF_NETLINK: NETLINK_ROUTE only, and     EAFNOSUPPORT (the route dump of a netns holds
//	  only inside a network namespace                         only its loopback; the host's
//	                                                          lists host addresses)
//	socketpair other than AF_UNIX                  EAFNOSUPPORT
//	sendto, sendmmsg, sendmsg with MSG_FASTOPEN    EPERM  (a TCP connect that Landlock's
//	setsockopt(IPPROTO_TCP, TCP_FASTOPEN_CONNECT)          connect rule does not see)
//	execveat with AT_EMPTY_PATH                    EPERM  (fexecve of a memfd: see below)
//	modify_ldt (amd64)                             EPERM
//
// Without a network namespace (and without AllowNetwork, which asks for
// the host network): UDP sockets too, so no DNS or other datagram leaves
// the host through a script (TCP is Landlock's).
//
// Without a mount namespace: socket(AF_UNIX) and socketpair(AF_UNIX,
// SOCK_DGRAM) too. Landlock has no rule for connecting to a pathname unix
// socket before ABI 9, and without the mount namespace the host's sockets
// (/run/docker.sock, /run/dbus, the systemd journal) are not masked; seccomp
// cannot see the address connect() is given, so the only unix sockets left
// are stream and seqpacket pairs from socketpair, which are connected to
// each other and cannot be pointed elsewhere (a datagram pair could, with
// connect or sendto).
//
// Without an IPC namespace: the System V shared memory, semaphore and
// message queue calls and the POSIX message queue calls, which would reach
// the host's objects (and those of concurrent runs).
//
// Without a PID namespace: setsid. The run's processes are then exactly
// the members of the init process's session, which the supervisor kills when
// the run ends (sessionMembers); a process cannot leave it, whatever it
// puts in its environment. Daemons that call setsid fail with EPERM.
//
// Without a cgroup capping the run's memory: memfd_create (ENOSYS, as on a
// kernel before 3.17, so programs fall back to a file in the size-capped
// work folder or /tmp) and shmget (EPERM; also inside the run's own IPC
// namespace, whose shmall is unlimited). Their pages are in no process's
// address space or resident size, so neither RLIMIT_AS nor the
// supervisor's watch (run/internal/watch) would count them: 1 GiB in memfds
// would pass a 512 MiB limit. POSIX shared memory (shm_open) is a file in
// the private /dev/shm, a 64 MiB tmpfs.
//
// memfd + fexecve: glibc's fexecve is execveat(fd, "", AT_EMPTY_PATH), which
// is refused, so a binary written to a memfd at run time cannot be started
// past the non-executable work folder that way. execve of
// /proc/self/fd/N still works (seccomp cannot read the path, and Landlock
// treats the memfd's internal mount as private); that is accepted as
// equivalent to what ctypes already allows: running machine code of the
// script's own making, in a process under the same layers.

// Constants for the argument checks (linux/socket.h, linux/in.h, ...).
const (
	afUnix       = unix.AF_UNIX
	afInet       = unix.AF_INET
	afInet6      = unix.AF_INET6
	afNetlink    = unix.AF_NETLINK
	sockTypeMask = ^uint32(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)
	msgFastOpen  = unix.MSG_FASTOPEN
	tcpFOConnect = unix.TCP_FASTOPEN_CONNECT
	atEmptyPath  = unix.AT_EMPTY_PATH
	retEAFNOSUPP = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
	retEMFILE    = unix.SECCOMP_RET_ERRNO | uint32(unix.EMFILE)
	bpfAndK      = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	seccompArg3  = 40
	seccompArg4  = 48
)

// policyFilter assembles the checks above, one block per system call.
func policyFilter(pol Policy) ([]block, error) {
	var a bpfAsm
	policyBlocks(&a, pol)
	return a.program()
}

// policyBlocks assembles the checks above.
func policyBlocks(a *bpfAsm, pol Policy) {
	socketBlock(a, pol)
	socketpairBlock(a, pol)
	sendBlocks(a, pol)
	a.ifSyscall(unix.SYS_EXECVEAT, func() { a.denyFlag(seccompArg4, atEmptyPath) })
	namespaceBlocks(a, pol)
}

// socketBlock assembles the checks of socket(domain, type, protocol).
func socketBlock(a *bpfAsm, pol Policy) {
	a.ifSyscall(unix.SYS_SOCKET, func() {
		a.load(seccompArg0)
		a.jeq(afUnix, "sock_unix")
		a.jeq(afInet, "sock_inet")
		a.jeq(afInet6, "sock_inet")
		if !pol.SharedNet {
			a.jeq(afNetlink, "sock_netlink")
		}
		a.ret(retEAFNOSUPP)

		a.label("sock_unix")
		if pol.NoMount {
			a.ret(retEPERM)
		} else {
			a.load(seccompArg1)
			a.and(sockTypeMask)
			a.jeq(unix.SOCK_STREAM, "allow")
			a.jeq(unix.SOCK_DGRAM, "allow")
			a.jeq(unix.SOCK_SEQPACKET, "allow")
			a.ret(retEPERM)
		}

		a.label("sock_inet")
		a.load(seccompArg1)
		a.and(sockTypeMask)
		a.jeq(unix.SOCK_STREAM, "sock_tcp")
		if !pol.HostNet {
			a.jeq(unix.SOCK_DGRAM, "sock_udp")
		}
		a.ret(retEPERM)
		a.label("sock_tcp")
		a.load(seccompArg2)
		a.jeq(0, "allow")
		a.jeq(unix.IPPROTO_TCP, "allow")
		a.ret(retEPERM)
		a.label("sock_udp")
		a.load(seccompArg2)
		a.jeq(0, "allow")
		a.jeq(unix.IPPROTO_UDP, "allow")
		a.ret(retEPERM)

		if !pol.SharedNet {
			a.label("sock_netlink")
			a.load(seccompArg2)
			a.jeq(unix.NETLINK_ROUTE, "allow")
			a.ret(retEAFNOSUPP)
		}
	})
}

// socketpairBlock assembles the checks of socketpair(domain, type,
// protocol, sv).
func socketpairBlock(a *bpfAsm, pol Policy) {
	a.ifSyscall(unix.SYS_SOCKETPAIR, func() {
		a.load(seccompArg0)
		a.jeq(afUnix, "pair_unix")
		a.ret(retEAFNOSUPP)
		a.label("pair_unix")
		a.load(seccompArg1)
		a.and(sockTypeMask)
		a.jeq(unix.SOCK_STREAM, "allow")
		a.jeq(unix.SOCK_SEQPACKET, "allow")
		if !pol.NoMount {
			a.jeq(unix.SOCK_DGRAM, "allow")
		}
		a.ret(retEPERM)
	})
}

// sendBlocks assembles the checks of the calls that send (TCP Fast Open)
// and of setsockopt.
func sendBlocks(a *bpfAsm, pol Policy) {
	// TCP Fast Open: a connect carried by the first send.
	a.ifSyscall(unix.SYS_SENDTO, func() { a.denyFlag(seccompArg3, msgFastOpen) })
	a.ifSyscall(unix.SYS_SENDMMSG, func() { a.denyFlag(seccompArg3, msgFastOpen) })
	a.ifSyscall(unix.SYS_SENDMSG, func() { a.denyFlag(seccompArg2, msgFastOpen) })
	a.ifSyscall(unix.SYS_SETSOCKOPT, func() {
		a.load(seccompArg1)
		if pol.NoMemCgroup {
			a.jeq(unix.SOL_SOCKET, "sol_socket")
		}
		a.jne(unix.IPPROTO_TCP, "allow")
		a.load(seccompArg2)
		a.jne(tcpFOConnect, "allow")
		a.ret(retEPERM)
		if pol.NoMemCgroup {
			// Socket buffers past the defaults: kernel memory that no
			// process's size shows, which only a cgroup would charge
			// (126 socket pairs raised to a 4 MiB wmem_max held 1 GiB).
			a.label("sol_socket")
			a.load(seccompArg2)
			a.jeq(unix.SO_SNDBUF, "deny_buf")
			a.jeq(unix.SO_RCVBUF, "deny_buf")
			a.jeq(unix.SO_SNDBUFFORCE, "deny_buf")
			a.jne(unix.SO_RCVBUFFORCE, "allow")
			a.label("deny_buf")
			a.ret(retEPERM)
		}
	})
}

// namespaceBlocks assembles the denials of what a missing namespace or
// memory cgroup would leave within reach.
func namespaceBlocks(a *bpfAsm, pol Policy) {
	if pol.NoPID {
		a.ifSyscall(unix.SYS_SETSID, func() { a.ret(retEPERM) })
	}
	if pol.NoIPC {
		for _, nr := range ipcSyscalls() {
			a.ifSyscall(nr, func() { a.ret(retEPERM) })
		}
	} else if pol.NoMemCgroup {
		a.ifSyscall(unix.SYS_SHMGET, func() { a.ret(retEPERM) })
	}
	if pol.NoMemCgroup {
		a.ifSyscall(unix.SYS_MEMFD_CREATE, func() { a.ret(retENOSYS) })
	}
	if pol.NoQuotas {
		for _, nr := range append(archInotifyInit(), unix.SYS_INOTIFY_INIT1, unix.SYS_FANOTIFY_INIT) {
			a.ifSyscall(nr, func() { a.ret(retEMFILE) })
		}
	}
	if pol.NotifyEpollAdd {
		// The operation is a register argument (an int: its low word),
		// so what the supervisor is asked about is what the kernel does.
		a.ifSyscall(unix.SYS_EPOLL_CTL, func() {
			a.load(seccompArg1)
			a.jne(unix.EPOLL_CTL_ADD, "allow")
			a.ret(unix.SECCOMP_RET_USER_NOTIF)
		})
	}
}

// ipcSyscalls are the System V IPC and POSIX message queue calls.
func ipcSyscalls() []uint32 {
	return []uint32{
		unix.SYS_SHMGET, unix.SYS_SHMAT, unix.SYS_SHMCTL, unix.SYS_SHMDT,
		unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
		unix.SYS_MSGGET, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
		unix.SYS_MQ_OPEN, unix.SYS_MQ_UNLINK, unix.SYS_MQ_TIMEDSEND,
		unix.SYS_MQ_TIMEDRECEIVE, unix.SYS_MQ_NOTIFY, unix.SYS_MQ_GETSETATTR,
	}
}
