package seccomp

// Policy says which namespaces are missing, i.e. which host objects
// the seccomp filter must keep out of reach itself (see
// seccomp_net_linux.go).
type Policy struct {
	HostNet   bool // no network namespace and no AllowNetwork: no UDP
	SharedNet bool // no network namespace at all (also with AllowNetwork): no netlink
	NoMount   bool // no mount namespace: no AF_UNIX sockets but stream pairs
	NoIPC     bool // no IPC namespace: no System V IPC, no POSIX message queues
	NoPID     bool // no PID namespace: no setsid, so the run's session holds all of it
	// NoMemCgroup: no cgroup caps the run's memory, so no memfd_create and
	// no System V shared memory segments (pages that no process's
	// RLIMIT_AS or resident size counts).
	NoMemCgroup bool
	// NoQuotas: the run's user namespace does not cap the inotify and
	// fanotify counters the run shares with its caller (no user
	// namespace, or a kernel that counts them per user): no new inotify
	// instance or fanotify group (EMFILE, as at the limit).
	NoQuotas bool
	// NotifyEpollAdd: the run's epoll watches are charged to a host uid
	// others share, so epoll_ctl(EPOLL_CTL_ADD) goes to the supervisor
	// (SECCOMP_RET_USER_NOTIF), which counts them against the run's
	// budget; the filter must be loaded with
	// SECCOMP_FILTER_FLAG_NEW_LISTENER. Other epoll_ctl operations and the
	// waits pass without a round trip.
	NotifyEpollAdd bool
}
