package identity

import (
	"os"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"

	"golang.org/x/sys/unix"
)

// initialUserNSIno is the inode number of the initial user namespace
// (the kernel's PROC_USER_INIT_INO, fixed), as stat shows it through
// /proc/self/ns/user.
const initialUserNSIno = 0xEFFFFFFD

// Sandbox returns the host uid and gid the script runs as when the run
// has no id of its own: the caller's own, or nobody when the caller is
// root (see Nobody) and nobody can be had (see nobodyUsable). A root
// caller inside a user namespace that maps only its own id (unshare -r)
// keeps its own: the namespace's uid 0 is then an unprivileged host
// user, or host root, which RootKept reports as a missing user
// namespace.
func Sandbox() (uid, gid int) {
	uid, gid = os.Geteuid(), os.Getegid()
	if uid == 0 && nobodyUsable("/proc/self/") {
		return Nobody, Nobody
	}
	return uid, gid
}

// DropsToNobody reports whether a run as host uid runs as nobody where
// the caller is root: the init process then changes its identity
// (initplan's RootCaller) and may drop its supplementary groups.
func DropsToNobody(uid int) bool { return uid != 0 && os.Geteuid() == 0 }

// inInitialUserNS reports whether the caller is in the initial user
// namespace.
func inInitialUserNS() bool {
	var st unix.Stat_t
	return unix.Stat("/proc/self/ns/user", &st) == nil && st.Ino == initialUserNSIno
}

// nobodyUsable reports whether the process whose /proc folder is dir can
// make a user namespace whose uid 0 is nobody and drop its supplementary
// groups there. In the initial user namespace (one stat, the usual case)
// it can. In another (a rootless container, a pod with hostUsers: false,
// unshare -r) it needs uid and gid 65534 mapped into the namespace and
// setgroups(2) not denied (unshare -r denies it, and a child namespace
// cannot allow it again); when /proc cannot be read it is assumed, as
// before, and the start says what fails.
func nobodyUsable(dir string) bool {
	var st unix.Stat_t
	if err := unix.Stat(dir+"ns/user", &st); err != nil || st.Ino == initialUserNSIno {
		return true
	}
	for _, f := range []string{"uid_map", "gid_map"} {
		b, err := proc.ReadFile(dir+f, 64<<10)
		if err != nil {
			return true
		}
		m, err := parseIDMap(string(b))
		if err != nil {
			return false
		}
		if _, ok := m.outside(Nobody); !ok {
			return false
		}
	}
	b, err := proc.ReadFile(dir+"setgroups", 64)
	return err != nil || strings.TrimSpace(string(b)) != "deny"
}

// RootKept returns why the user namespace layer does not hold for a run
// as host uid, or "" when it does: a root caller whose user namespace has
// no usable nobody (see Sandbox) runs scripts as its own uid 0, and when
// that is host root (mapped to uid 0 of the parent namespace, which
// unshare -r run by root does) the script would own host root's files
// wherever Landlock is missing and escape RLIMIT_NPROC, as without a
// user namespace. A parent namespace that is itself not the initial one
// is not looked through: its uid 0 counts as host root.
func RootKept(uid int) string {
	if uid != 0 || os.Geteuid() != 0 {
		return ""
	}
	return rootKeptIn("/proc/self/")
}

// rootKeptIn is RootKept for the process whose /proc folder is dir.
func rootKeptIn(dir string) string {
	b, err := proc.ReadFile(dir+"uid_map", 64<<10)
	if err != nil {
		return "uid 0 may be host root: " + dir + "uid_map: " + err.Error()
	}
	m, err := parseIDMap(string(b))
	if err != nil {
		return "uid 0 may be host root: " + err.Error()
	}
	if out, ok := m.outside(0); ok && out != 0 {
		return ""
	}
	return "uid 0 of the caller's user namespace is root of its parent and uid 65534 is not mapped in it (or setgroups is denied): " +
		"the script would run as host root; map a range of ids into it (unshare --map-auto, a container's subuids) or run as an unprivileged user"
}
