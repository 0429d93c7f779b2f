//go:build linux && (amd64 || arm64)

package initplan

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/seccomp"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// refused are the errnos of a call the kernel, or a policy over it (a
// container's seccomp profile, an LSM), refuses outright: before anything
// changed, a layer whose first call fails so is as absent as on a host
// without it.
var refused = []unix.Errno{unix.EPERM, unix.EACCES, unix.ENOSYS}

// setupNetNS brings up the loopback interface of the run's new network
// namespace, which starts down. Tools that start a local server and talk
// to it on 127.0.0.1 (test runners, web app checks) then work; the
// namespace has no other interface, so the host's loopback and every other
// network stay out of reach. It needs CAP_NET_ADMIN in the namespace,
// which the init process holds until the capabilities layer drops it.
// With a host allowlist it then hands the proxy's socket over (see
// handOverProxySocket).
//
// Until the loopback is up nothing has changed: a refusal of those calls
// leaves the namespace as good as absent (and without any interface). Any
// other failure, or the proxy's socket not handed over, refuses the run.
func (c *compiler) setupNetNS() {
	if pre := c.in.Prefix; pre == nil || !pre.loopback {
		c.loopbackUp()
	}
	if c.cfg.ProxyPort != 0 {
		c.handOverProxySocket()
	}
}

// loopbackUp sets the loopback interface up.
func (c *compiler) loopbackUp() {
	c.note("loopback up")
	sock := c.fd
	c.b.Sys("loopback: socket", unix.SYS_SOCKET, []initproc.Arg{imm(unix.AF_INET), imm(unix.SOCK_DGRAM | unix.SOCK_CLOEXEC), imm(0)},
		initproc.Into(sock), initproc.Unavailable(refused...))
	var ifr [40]byte // struct ifreq: the name, then the flags
	copy(ifr[:], "lo")
	d := c.b.Bytes(ifr[:])
	c.b.Sys("loopback: SIOCGIFFLAGS", unix.SYS_IOCTL, []initproc.Arg{reg(sock), imm(unix.SIOCGIFFLAGS), initproc.Ref(d)},
		initproc.Unavailable(refused...))
	c.b.Load(c.tmp, d+16, 2)
	c.b.Or(c.tmp, reg(c.tmp), imm(unix.IFF_UP))
	c.b.Store(d+16, 2, reg(c.tmp))
	c.b.Sys("loopback: SIOCSIFFLAGS", unix.SYS_IOCTL, []initproc.Arg{reg(sock), imm(unix.SIOCSIFFLAGS), initproc.Ref(d)},
		initproc.Unavailable(refused...))
	c.closeReg(sock)
}

// handOverProxySocket runs in the init process inside the new network
// namespace, after setupNetNS brought loopback up, when the run has a host
// allowlist: it creates the proxy's listening socket on
// 127.0.0.1:ProxyPort and sends it to the supervisor over ProxyFD ('L'),
// then one listening socket on 127.0.0.1:PORT for each of LocalPorts
// ('P', in their order), and closes ProxyFD, so nothing of the relay is
// left for the script but the ports themselves. Each listener lives in
// the run's namespace but is served by the supervisor, on the host's
// network: the same with or without privileges (no setns needed).
func (c *compiler) handOverProxySocket() {
	cfg := c.cfg
	sock := c.fd
	kind, cmsg, msg := c.fdMessage('L')
	for i, port := range append([]int{cfg.ProxyPort}, cfg.LocalPorts...) {
		what := "proxy socket"
		if i > 0 {
			what = fmt.Sprintf("local port %d", port)
			c.b.Store(kind, 1, imm('P'))
		}
		if c.listing {
			c.notef("%s listening on 127.0.0.1:%d, handed to the supervisor", what, port)
		}
		c.b.Sys(what, unix.SYS_SOCKET, []initproc.Arg{imm(unix.AF_INET), imm(unix.SOCK_STREAM | unix.SOCK_CLOEXEC), imm(0)}, initproc.Into(sock))
		sa := unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: [4]byte{127, 0, 0, 1}}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], uint16(port))
		sd := initproc.Struct(c.b, &sa)
		c.b.Sys(fmt.Sprintf("%s: bind 127.0.0.1:%d", what, port), unix.SYS_BIND, []initproc.Arg{reg(sock), initproc.Ref(sd), imm(uint64(unsafe.Sizeof(sa)))})
		c.b.Sys(what+": listen", unix.SYS_LISTEN, []initproc.Arg{reg(sock), imm(128)})
		c.b.Store(cmsg+initproc.Data(unix.CmsgLen(0)), 4, reg(sock))
		c.b.Sys(what+": handing over", unix.SYS_SENDMSG, []initproc.Arg{num(cfg.ProxyFD), initproc.Ref(msg), imm(0)})
		c.closeReg(sock)
	}
	c.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{num(cfg.ProxyFD)}, initproc.IgnoreErrors())
}

// fdMessage puts into the program's data a struct msghdr of one byte,
// kind, and one descriptor as SCM_RIGHTS, for a sendmsg that hands a
// descriptor to the supervisor. It returns the byte's address (to send
// another kind with the same message), the place of the descriptor (a
// 4-byte store at cmsg+CmsgLen(0)) and the message.
func (c *compiler) fdMessage(kindByte byte) (kind, cmsg, msg initproc.Data) {
	kind = c.b.String(string([]byte{kindByte}))
	iov := c.b.Zero(int(unsafe.Sizeof(unix.Iovec{})))
	c.b.SetPointer(iov+initproc.Data(unsafe.Offsetof(unix.Iovec{}.Base)), kind)
	c.b.Store(iov+initproc.Data(unsafe.Offsetof(unix.Iovec{}.Len)), 8, imm(1))
	cmsg = c.b.Zero(unix.CmsgSpace(4))
	c.b.Store(cmsg+initproc.Data(unsafe.Offsetof(unix.Cmsghdr{}.Len)), 8, imm(uint64(unix.CmsgLen(4))))
	c.b.Store(cmsg+initproc.Data(unsafe.Offsetof(unix.Cmsghdr{}.Level)), 4, imm(unix.SOL_SOCKET))
	c.b.Store(cmsg+initproc.Data(unsafe.Offsetof(unix.Cmsghdr{}.Type)), 4, imm(unix.SCM_RIGHTS))
	msg = c.b.Zero(int(unsafe.Sizeof(unix.Msghdr{})))
	c.b.SetPointer(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Iov)), iov)
	c.b.Store(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Iovlen)), 8, imm(1))
	c.b.SetPointer(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Control)), cmsg)
	c.b.Store(msg+initproc.Data(unsafe.Offsetof(unix.Msghdr{}.Controllen)), 8, imm(uint64(unix.CmsgSpace(4))))
	return kind, cmsg, msg
}

// applyRlimits sets every resource limit except RLIMIT_AS, which is set on
// the script alone right before its execve (see launch). Soft and hard
// limits are equal so the script cannot raise them. Under a PID namespace
// the init process stays as PID 1 and reaps: it must not run out of CPU
// time, and counts against RLIMIT_NPROC, so those two are the script's
// (launch) too. The per-user ones (sharedRlimits) bound what the run may
// take of the caller's shared counters.
func (c *compiler) applyRlimits() {
	l := c.cfg.Limits
	list := []rlimit{
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, l.FileSize},
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, l.OpenFiles},
	}
	if !c.pidNS() {
		list = append(list, rlimit{"RLIMIT_CPU", unix.RLIMIT_CPU, l.CPUSeconds})
		if l.Procs > 0 && stageconfig.NprocIsPerRun() {
			list = append(list, rlimit{"RLIMIT_NPROC", unix.RLIMIT_NPROC, l.Procs})
		}
	}
	shared := len(list)
	for i, r := range append(list, sharedRlimits()...) {
		if r.value == 0 && r.resource != unix.RLIMIT_CORE {
			continue
		}
		v := r.value
		if v != 0 {
			v = withinHardLimit(r.resource, v)
		}
		if c.listing {
			group := ""
			if i >= shared { // a share of the caller's own limit
				group = "per-user limits"
			}
			c.hostSteps(group, func() { c.notef("rlimit %s %d", strings.TrimPrefix(r.name, "RLIMIT_"), v) })
		}
		lim := unix.Rlimit{Cur: v, Max: v}
		d := initproc.Struct(c.b, &lim)
		c.b.Sys(fmt.Sprintf("%s=%d", r.name, v), unix.SYS_PRLIMIT64, []initproc.Arg{imm(0), imm(uint64(r.resource)), initproc.Ref(d), imm(0)})
	}
}

// noteSeccomp notes variant i of n of the seccomp filter, for pol, which
// runs when the layers need are applied (the last one: otherwise).
func (c *compiler) noteSeccomp(pol seccomp.Policy, need uint32, i, n int) {
	cond := ""
	switch {
	case i < n-1:
		cond = layersWord(need) + " applied"
	case i > 0:
		cond = "no variant above applies"
	}
	c.when(cond, func() { c.note("seccomp filter:", policyWords(pol)) })
}

// rlimit is one resource limit applyRlimits sets; value 0 leaves it as it
// is (but RLIMIT_CORE's, which is set to 0).
type rlimit struct {
	name     string
	resource int
	value    uint64
}

// sharedRlimits are the limits of the counters the kernel keeps per user
// (ucounts): POSIX message queue bytes, queued signals and SysV shared
// memory locked with SHM_LOCK. A charge is checked against the charging
// task's limit in the run's user namespace (the whole count there: that of
// the caller itself without one), and against the limit its creator had
// in each namespace above, the caller's: with the caller's own limit a run
// could take all of it. Each is lowered to quotaShare of the caller's
// soft limit, or the value here where that is less. (RLIMIT_NPROC, also
// per user, is the run's process cap, Limits.Procs.)
func sharedRlimits() []rlimit {
	out := []rlimit{
		{"RLIMIT_MSGQUEUE", unix.RLIMIT_MSGQUEUE, 100 << 10}, // one queue of the default size (10 × 8 KiB)
		{"RLIMIT_SIGPENDING", unix.RLIMIT_SIGPENDING, 1024},
		{"RLIMIT_MEMLOCK", unix.RLIMIT_MEMLOCK, 1 << 20},
	}
	for i, r := range out {
		var cur unix.Rlimit
		if unix.Getrlimit(r.resource, &cur) == nil && cur.Cur != unix.RLIM_INFINITY && cur.Cur/quotaShare < r.value {
			out[i].value = cur.Cur / quotaShare
		}
	}
	return out
}

// Securebits (linux/securebits.h; not in x/sys).
const (
	secbitNoRoot                  = 1 << 0 // execve by uid 0 grants no capabilities
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2 // uid changes do not touch capabilities
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5 // keep-caps stays off
	secbitNoCapAmbientRaise       = 1 << 6 // the ambient set cannot be raised
	secbitNoCapAmbientRaiseLocked = 1 << 7

	sandboxSecurebits = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup |
		secbitNoSetuidFixupLocked | secbitKeepCapsLocked |
		secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropCapabilities leaves the script with no capability and no way back:
// the script runs as uid 0 of its user namespace, which normally means a
// full capability set there (enough to mount, to use raw sockets, to ignore
// file modes of the run's own files). In order: the bounding set is
// emptied (execve can grant nothing beyond it), securebits are locked so
// uid 0 is not special at execve, the ambient set is cleared, and capset
// empties the permitted, effective and inheritable sets.
//
// Without a user namespace an unprivileged process holds no capabilities
// and may not change the bounding set or securebits; that counts as
// applied when the permitted and effective sets are empty after capset.
func (c *compiler) dropCapabilities() {
	c.note("drop every capability (bounding, ambient, permitted, effective, inheritable); securebits locked")
	bset, sec := c.tmp, c.tmp2
	c.b.Store(c.statBuf, 8, imm(0))
	c.b.Load(bset, c.statBuf, 8)
	c.b.Load(sec, c.statBuf, 8)
	secbits, ambient := c.b.NewLabel(), c.b.NewLabel()
	for cp := 0; cp <= c.pf.lastCap; cp++ {
		c.b.Sys("prctl(PR_CAPBSET_DROP, "+strconv.Itoa(cp)+")", unix.SYS_PRCTL, []initproc.Arg{imm(unix.PR_CAPBSET_DROP), imm(uint64(cp)), imm(0), imm(0), imm(0)},
			initproc.OkOn(unix.EINVAL), initproc.ErrTo(bset, secbits))
	}
	c.b.Mark(secbits)
	c.b.Sys("prctl(PR_SET_SECUREBITS)", unix.SYS_PRCTL, []initproc.Arg{imm(unix.PR_SET_SECUREBITS), imm(sandboxSecurebits), imm(0), imm(0), imm(0)},
		initproc.ErrTo(sec, ambient))
	c.b.Mark(ambient)
	c.b.Sys("prctl(PR_CAP_AMBIENT_CLEAR_ALL)", unix.SYS_PRCTL, []initproc.Arg{imm(unix.PR_CAP_AMBIENT), imm(unix.PR_CAP_AMBIENT_CLEAR_ALL), imm(0), imm(0), imm(0)},
		initproc.IgnoreErrors())
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	hd := initproc.Struct(c.b, &hdr)
	var caps [2]unix.CapUserData
	cd := initproc.Struct(c.b, &caps)
	c.b.Sys("capset", unix.SYS_CAPSET, []initproc.Arg{initproc.Ref(hd), initproc.Ref(cd)})
	// Only acceptable if nothing is held.
	done := c.b.NewLabel()
	c.b.Or(bset, reg(bset), reg(sec))
	c.b.SkipIf(initproc.Eq, reg(bset), imm(0), done)
	c.b.Sys("capget", unix.SYS_CAPGET, []initproc.Arg{initproc.Ref(hd), initproc.Ref(cd)})
	held := c.tmp
	c.b.Store(c.statBuf, 8, imm(0))
	c.b.Load(held, c.statBuf, 8)
	for i := range caps {
		for _, off := range []uintptr{unsafe.Offsetof(caps[0].Permitted), unsafe.Offsetof(caps[0].Effective)} {
			c.b.Load(c.tmp2, cd+initproc.Data(uintptr(i)*unsafe.Sizeof(caps[0])+off), 4)
			c.b.Or(held, reg(held), reg(c.tmp2))
		}
	}
	c.b.Assert("the bounding set or securebits could not be set while capabilities are held", initproc.Eq, reg(held), imm(0), false)
	c.b.Mark(done)
}

// installSeccomp loads the seccomp filter on the init process; execve and
// fork keep it (the init process, single-threaded, is under it whole). It needs
// no_new_privs (or CAP_SYS_ADMIN), so it comes after setNoNewPrivs. The
// filter depends on the namespaces that took effect (seccomp.Policy):
// which the init process finds at run time, for the mount and network
// namespaces that can go missing after clone(2) (AllowDegraded), so it
// loads the filter made for what it has.
//
// A failure means the layer is not offered when the kernel has no seccomp
// filter (ENOSYS, or EINVAL from a kernel built without
// CONFIG_SECCOMP_FILTER) or when EACCES follows from no_new_privs missing;
// any other (ENOMEM, E2BIG, EACCES with no_new_privs set) refuses the run.
func (c *compiler) installSeccomp() {
	cfg := c.cfg
	if !stageconfig.Has(cfg.Layers, stageconfig.LayerSeccomp) {
		return
	}
	has := func(l stageconfig.Layer) bool { return stageconfig.Has(cfg.Namespaces, l) }
	pol := func(mountNS, netNS bool) seccomp.Policy {
		return seccomp.Policy{
			HostNet:     !netNS && !cfg.AllowNetwork,
			SharedNet:   !netNS,
			NoMount:     !mountNS,
			NoIPC:       !has(stageconfig.LayerIPCNS),
			NoPID:       !has(stageconfig.LayerPIDNS),
			NoMemCgroup: !cfg.MemoryCgroup,
			NoQuotas:    !c.quotasOffered(),
			// The listener goes to the supervisor (handOverListener).
			NotifyEpollAdd: cfg.EpollBudget > 0,
		}
	}
	// The variants: each namespace clone(2) made may still be missing.
	type variant struct {
		need uint32 // layers that must be applied
		pol  seccomp.Policy
	}
	mnt, net := bit(stageconfig.LayerMountNS), bit(stageconfig.LayerNetNS)
	var vs []variant
	for _, v := range []struct{ m, n bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		if v.m && !has(stageconfig.LayerMountNS) || v.n && !has(stageconfig.LayerNetNS) {
			continue
		}
		if len(vs) > 0 && !c.in.MayRunDegraded {
			// A namespace missing refuses the run, which waits for
			// the go-ahead: no script runs under another variant.
			break
		}
		var need uint32
		if v.m {
			need |= mnt
		}
		if v.n {
			need |= net
		}
		vs = append(vs, variant{need, pol(v.m, v.n)})
	}
	c.b.Begin(bit(stageconfig.LayerSeccomp))
	c.noteLayer = string(stageconfig.LayerSeccomp)
	done := c.b.NewLabel()
	for i, v := range vs {
		filter, err := seccomp.Filter(v.pol)
		if err != nil {
			c.b.Fail(fmt.Sprintf("seccomp filter: %v", err), unix.ENOSYS, initproc.Unavailable(unix.ENOSYS))
			break
		}
		next := c.b.NewLabel()
		if i < len(vs)-1 {
			c.b.SkipUnlessApplied(v.need, next)
		}
		if c.listing {
			c.noteSeccomp(v.pol, v.need, i, len(vs))
		}
		fd := c.b.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&filter[0])), len(filter)*int(unsafe.Sizeof(filter[0]))))
		prog := c.b.Zero(int(unsafe.Sizeof(unix.SockFprog{})))
		c.b.Store(prog, 2, imm(uint64(len(filter))))
		c.b.SetPointer(prog+initproc.Data(unsafe.Offsetof(unix.SockFprog{}.Filter)), fd)
		var flags uint64
		opts := []initproc.Opt{initproc.Unavailable(unix.ENOSYS, unix.EINVAL), initproc.UnavailableUnless(bit(stageconfig.LayerNoNewPrivs), unix.EACCES)}
		if cfg.EpollBudget > 0 {
			// The listener, for handOverListener. A filter with a
			// listener above (EBUSY) refuses the run.
			flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
			opts = append(opts, initproc.Into(c.fd))
		}
		c.b.Sys("seccomp(SECCOMP_SET_MODE_FILTER)", unix.SYS_SECCOMP, []initproc.Arg{imm(unix.SECCOMP_SET_MODE_FILTER), imm(flags), initproc.Ref(prog)}, opts...)
		if i < len(vs)-1 {
			c.b.Jump(done)
		}
		c.b.Mark(next)
	}
	c.b.Mark(done)
	if cfg.EpollBudget > 0 {
		c.handOverListener()
	}
	c.noteLayer = ""
	c.b.End()
}

// handOverListener sends the seccomp filter's listener (in c.fd, from
// installSeccomp) to the supervisor over NotifyFD ('N') and closes both:
// the script never holds the listener, and a filter whose listener is
// gone answers every EPOLL_CTL_ADD with ENOSYS, so a listener the
// supervisor never got leaves the run no watch at all. Inside the
// seccomp layer's block: a filter not offered sends nothing, and a send
// that fails refuses the run (the layer built part-way).
func (c *compiler) handOverListener() {
	if c.listing {
		c.notef("seccomp listener handed to the supervisor: it counts epoll_ctl(EPOLL_CTL_ADD), %d at most", c.cfg.EpollBudget)
	}
	_, cmsg, msg := c.fdMessage('N')
	c.b.Store(cmsg+initproc.Data(unix.CmsgLen(0)), 4, reg(c.fd))
	c.b.Sys("seccomp listener: handing over", unix.SYS_SENDMSG, []initproc.Arg{num(c.cfg.NotifyFD), initproc.Ref(msg), imm(0)})
	c.closeReg(c.fd)
	c.b.Sys("close", unix.SYS_CLOSE, []initproc.Arg{num(c.cfg.NotifyFD)}, initproc.IgnoreErrors())
}
