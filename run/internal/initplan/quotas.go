//go:build linux && (amd64 || arm64)

package initplan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// The kernel charges inotify instances and watches, fanotify groups and
// marks, and every kind of namespace to the user that made them, counted
// per user namespace (ucounts, Linux 5.11 and 5.13): a run's charge counts
// in its own namespace and in every namespace above it, up to the
// caller's, against each level's limit in /proc/sys/user. Neither an
// rlimit nor the cgroup bounds them, and a new namespace's limits are
// unlimited, so a run could take all the caller's (for a root caller, all
// of host root's: the run's user namespace belongs to its creator). The
// init process sets its own namespace's limits, which a write to
// /proc/sys/user sets for the writer's user namespace whichever /proc it
// goes through, with the CAP_SYS_RESOURCE it holds there until it drops
// its capabilities; the script, without it, can only read them.

// quotaShare is the part of the caller's own limit a run may take at most:
// an eighth, so that MCP's default four runs at once leave half.
const quotaShare = 8

// userQuota is one counter of /proc/sys/user and the most a run gets.
type userQuota struct {
	name string
	max  int64
}

// runQuotas are the limits the init process sets in its user namespace,
// each lowered to quotaShare of the caller's where that is less. The
// script's own inotify and fanotify use is that of a build watcher at
// most; the namespaces the seccomp filter refuses anyway, a few are left
// where it is disabled.
func runQuotas() []userQuota {
	return []userQuota{
		{"max_inotify_instances", 16},
		{"max_inotify_watches", 8192},
		{"max_fanotify_groups", 4},
		{"max_fanotify_marks", 1024},
		{"max_user_namespaces", 16},
		{"max_mnt_namespaces", 16},
		{"max_pid_namespaces", 16},
		{"max_net_namespaces", 16},
		{"max_ipc_namespaces", 16},
		{"max_uts_namespaces", 16},
		{"max_cgroup_namespaces", 16},
		{"max_time_namespaces", 16},
	}
}

// quotaMajor.quotaMinor is the first kernel that counts every one of
// runQuotas per user namespace (fanotify's came last, in 5.13; inotify's
// in 5.11).
const quotaMajor, quotaMinor = 5, 13

// quotaValue is what a run gets of q when the caller's own limit is
// caller (-1: unknown).
func quotaValue(q userQuota, caller int64) int64 {
	if caller >= 0 && caller/quotaShare < q.max {
		return caller / quotaShare
	}
	return q.max
}

// readUserLimits reads the limits of /proc/sys/user of this process's user
// namespace; an entry the kernel lacks (built without inotify or
// fanotify) is absent.
func readUserLimits() map[string]int64 {
	out := map[string]int64{}
	for _, q := range runQuotas() {
		b, err := proc.ReadFile("/proc/sys/user/"+q.name, 32)
		if err != nil {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil {
			out[q.name] = n
		}
	}
	return out
}

// kernelAtLeast reports whether the running kernel's release is want or
// later; false when it cannot be read.
func kernelAtLeast(wantMajor, wantMinor int) bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	rel := unix.ByteSliceToString(u.Release[:])
	parts := strings.SplitN(rel, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return false
	}
	return major > wantMajor || major == wantMajor && minor >= wantMinor
}

// hasUserNS reports whether the init process is in a user namespace of
// its own.
func (c *compiler) hasUserNS() bool {
	return stageconfig.Has(c.cfg.Namespaces, stageconfig.LayerUserNS)
}

// quotasOffered reports whether capQuotas can cap the counters here
// (whatever the config asks): else the seccomp filter refuses new
// inotify instances and fanotify groups (seccomp.Policy.NoQuotas).
func (c *compiler) quotasOffered() bool { return c.hasUserNS() && c.pf.quotaKernel }

// capQuotas writes runQuotas into the run's user namespace, first thing
// after its identity, through the /proc the init process has then (the
// host's; the values are the namespace's all the same). Without a user
// namespace there is nothing of the run's own to set (writing would set
// the caller's), and on a kernel before quotaMajor.quotaMinor some counters are
// per user, not per namespace: the layer is then missing. A /proc that
// refuses the first write (read-only, as in some containers, or no
// CAP_SYS_RESOURCE) makes it missing too; a refusal after a limit was
// set leaves it part-way, which refuses the run.
func (c *compiler) capQuotas() {
	if !c.wants(stageconfig.LayerQuotas) {
		return
	}
	missing := func(reason string) {
		c.missing = append(c.missing, stageconfig.Missing{Layer: stageconfig.LayerQuotas, Reason: reason})
	}
	switch {
	case !c.hasUserNS():
		missing("needs the user namespace: inotify, fanotify and namespace counts are the caller's own")
		return
	case !c.pf.quotaKernel:
		missing(fmt.Sprintf("needs Linux %d.%d: before it the kernel counts inotify and fanotify per user, not per user namespace", quotaMajor, quotaMinor))
		return
	}
	c.b.Begin(bit(stageconfig.LayerQuotas))
	c.noteLayer = string(stageconfig.LayerQuotas)
	done := c.b.NewLabel()
	if pre := c.in.Prefix; pre != nil && pre.quotas {
		c.b.SkipIf(initproc.Eq, reg(regQuotas), imm(1), done)
	}
	c.quotaWrites(func(first bool) []initproc.Opt {
		if first {
			return []initproc.Opt{initproc.Unavailable(unix.EPERM, unix.EACCES, unix.EROFS, unix.ENOENT)}
		}
		return nil
	}, nil)
	c.b.Mark(done)
	c.noteLayer = ""
	c.b.End()
}

// prefixQuotas sets the quotas in a pooled init process's prefix, where
// a start costs nothing (a dozen files of /proc/sys/user: tens of
// microseconds): regQuotas is then 1, and the run's program skips its
// own writes. A failure leaves it 0, for the run's program to meet and
// report as its own. It reports whether it emitted anything.
func (c *compiler) prefixQuotas() bool {
	if !c.quotasOffered() {
		return false
	}
	failed, closeFD, done := c.b.NewLabel(), c.b.NewLabel(), c.b.NewLabel()
	c.b.Or(regQuotas, imm(0), imm(0))
	// An open that fails leaves its register as it was (ErrTo would
	// take the register Into sets): -1 before, tested after.
	c.quotaWrites(func(bool) []initproc.Opt {
		c.b.Or(c.fd, num(-1), imm(0))
		return []initproc.Opt{initproc.IgnoreErrors()}
	}, []initproc.Opt{initproc.ErrTo(c.tmp, closeFD)}, func() {
		c.b.SkipIf(initproc.Eq, reg(c.fd), num(-1), failed)
	})
	c.b.Or(regQuotas, imm(1), imm(0))
	c.b.Jump(done)
	c.b.Mark(closeFD)
	c.closeReg(c.fd)
	c.b.Mark(failed)
	c.b.Mark(done)
	return true
}

// quotaWrites emits, for each of runQuotas this kernel has, the open of
// its /proc/sys/user file with the options open gives (first: the first
// file's; it may emit operations before the open), then afterOpen's
// operations, the write of its value with writeOpts, and the close.
func (c *compiler) quotaWrites(open func(first bool) []initproc.Opt, writeOpts []initproc.Opt, afterOpen ...func()) {
	first := true
	for _, q := range runQuotas() {
		caller, ok := c.pf.userLimits[q.name]
		if !ok {
			continue // a counter this kernel does not have
		}
		path := "/proc/sys/user/" + q.name
		opts := append([]initproc.Opt{initproc.Into(c.fd)}, open(first)...)
		c.b.Sys("open "+path, unix.SYS_OPENAT, []initproc.Arg{num(unix.AT_FDCWD), c.ref(path), imm(unix.O_WRONLY | unix.O_CLOEXEC)}, opts...)
		for _, f := range afterOpen {
			f()
		}
		first = false
		v := strconv.FormatInt(quotaValue(q, caller), 10)
		c.note("quota", path, v)
		c.b.Sys(fmt.Sprintf("write %s to %s", v, path), unix.SYS_WRITE, []initproc.Arg{reg(c.fd), c.ref(v), imm(uint64(len(v)))}, writeOpts...)
		c.closeReg(c.fd)
	}
}
