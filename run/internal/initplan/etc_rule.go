//go:build linux && (amd64 || arm64)

package initplan

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// The sandbox's /etc follows a rule rather than a list of names, so that
// the configuration of a package nobody has looked at yet (matplotlib's
// /etc/matplotlibrc, an /etc/foo.d of a new library) is there: the host's
// /etc is bound whole, read-only and not id-mapped, so the kernel shows
// the script what its identity on the host may read (a root caller's
// script has a host id of its own there, which owns nothing, or uid 65534
// in a nested user namespace; an unprivileged caller's is the caller) and
// refuses the rest; the entries of the deny list (etcDenied) that this
// identity could read are masked (etcMasks), and the sandbox's own files
// (etcOwn) are mounted over the host's.

// etcDenied lists, relative to /etc, the entries masked whatever their
// mode: they hold secrets (keys, passwords, tokens), describe the host
// and its accounts, or configure privilege. An entry may hold
// filepath.Match wildcards. Most of these are also unreadable for others
// on a well-kept host (shadow, ssl/private, krb5.keytab); the list keeps
// them out where a host got a mode wrong, and from a caller whose groups
// may read them (ssl-cert and /etc/ssl/private). The keys and credentials
// (stageconfig.EtcSecrets) are on the deny list of grants too.
func etcDenied() []string {
	return append([]string{
		// Accounts and the files that change them.
		"passwd", "passwd-", "group", "group-", "shadow", "shadow-", "gshadow", "gshadow-",
		"subuid", "subuid-", "subgid", "subgid-", ".pwd.lock", "opasswd",
		// Privilege and login configuration.
		"sudoers", "sudoers.d", "sudo.conf", "sudo_logsrvd.conf", "doas.conf", "security",
		"pam.d", "pam.conf", "polkit-1",
		// The host's identity, disks, network and jobs (the sandbox has
		// its own host name and, without --allow-network, its own hosts).
		"hostname", "machine-id", "mailname", "fstab", "crypttab", "exports", "adjtime",
		"network", "networks", "netplan", "NetworkManager", "cron*", "anacrontab",
		"environment",
	}, stageconfig.EtcSecrets()...)
}

// etcNetworkOnly are masked without the host's network (AllowNetwork):
// name resolution. Without it the sandbox has its own hosts (etcOwn) and
// no resolver to name.
func etcNetworkOnly() []string {
	return []string{"resolv.conf"}
}

// etcReader is the identity the run's processes have on the host, as far
// as reading /etc goes: the bind of /etc is not id-mapped, so the kernel
// checks this identity against the host's owners and modes.
type etcReader struct {
	// rootCaller: the identity is uid and gid (nobody), without
	// supplementary groups. Otherwise it is the caller's, uid and gid
	// with the caller's groups, which stay in its user namespace.
	rootCaller bool
	uid, gid   int
}

// mayRead reports whether the identity could read the entry at path (a
// file) or list or enter it (a folder), whose lstat(2) is st. Conservative
// where the answer is not the mode's alone: an entry of the identity's own
// uid or gid counts as readable (in its user namespace a capability could
// override the mode), and for a root caller a group class that could
// read through a POSIX ACL (a named user or group) counts too.
func (r etcReader) mayRead(path string, st *unix.Stat_t) bool {
	if int(st.Uid) == r.uid || int(st.Gid) == r.gid {
		return true
	}
	folder := st.Mode&unix.S_IFMT == unix.S_IFDIR
	if !r.rootCaller {
		// The supervisor runs as the caller: access(2) checks the
		// real uid, gid and groups, ACLs included, and every folder
		// on the way.
		if unix.Faccessat(unix.AT_FDCWD, path, unix.R_OK, 0) == nil {
			return true
		}
		return folder && unix.Faccessat(unix.AT_FDCWD, path, unix.X_OK, 0) == nil
	}
	other, group := uint32(unix.S_IROTH), uint32(unix.S_IRGRP)
	if folder {
		other |= unix.S_IXOTH
		group |= unix.S_IXGRP
	}
	if st.Mode&other != 0 {
		return true
	}
	return st.Mode&group != 0 && hasACL(path)
}

// hasACL reports whether path (not followed) has a POSIX access ACL, or
// may have one (an error other than "none").
func hasACL(path string) bool {
	_, err := unix.Lgetxattr(path, "system.posix_acl_access", nil)
	return err != unix.ENODATA && err != unix.EOPNOTSUPP
}

// etcMask is an entry of /etc masked in the sandbox: a folder by an empty
// folder, a file by an empty file.
type etcMask struct {
	path   string // as the sandbox shows it, /etc/...
	folder bool
}

// etcMasks returns the entries of etcDenied (and etcNetworkOnly without
// allowNetwork) found in dir (the host's /etc, whose names and types
// listed holds) that who could read, in path order, as the sandbox shows
// them (/etc/...). Only folders and regular files are masked: a symlink
// resolves in the sandbox's own root, and a device, FIFO or socket has
// nothing to read. An entry below a folder that is a symlink is left too:
// it lies where the symlink leads, outside /etc. An entry below another
// masked one needs no mask of its own. keep are the paths of the run's own
// parts (grants, skill and work folders): an entry that holds one is not
// masked, since the run's part must stay reachable, which only its
// Landlock rule then keeps narrow.
func etcMasks(dir string, listed map[string]uint8, allowNetwork bool, who etcReader, keep []string) []etcMask {
	patterns := etcDenied()
	if !allowNetwork {
		patterns = append(patterns, etcNetworkOnly()...)
	}
	var rels []string
	for _, p := range patterns {
		first, rest, deep := strings.Cut(p, "/")
		var names []string
		if strings.ContainsAny(first, `*?[\`) {
			// The literal ends narrow the names to match: Match on each
			// of /etc's some 150 names was a third of this function.
			i, j := strings.IndexAny(first, `*?[\`), strings.LastIndexAny(first, `*?]`)
			pre, suf := first[:i], first[j+1:]
			for n := range listed {
				if !strings.HasPrefix(n, pre) || !strings.HasSuffix(n, suf) {
					continue
				}
				if ok, _ := filepath.Match(first, n); ok {
					names = append(names, n)
				}
			}
		} else if _, ok := listed[first]; ok {
			names = []string{first}
		}
		for _, n := range names {
			if !deep {
				rels = append(rels, n)
				continue
			}
			// Rare: only the packages that own these folders have
			// them, so the glob's listings come only there.
			found, _ := filepath.Glob(filepath.Join(dir, n, rest))
			for _, f := range found {
				rels = append(rels, strings.TrimPrefix(f, dir+"/"))
			}
		}
	}
	slices.Sort(rels)
	rels = slices.Compact(rels)
	var out []etcMask
	for _, rel := range rels {
		path := "/etc/" + rel
		if len(out) > 0 && strings.HasPrefix(path, out[len(out)-1].path+"/") {
			continue
		}
		if holdsAny(path, keep) || !realFolders(dir, rel) {
			continue
		}
		var st unix.Stat_t
		host := dir + "/" + rel
		if unix.Lstat(host, &st) != nil {
			continue
		}
		typ := st.Mode & unix.S_IFMT
		if (typ != unix.S_IFDIR && typ != unix.S_IFREG) || !who.mayRead(host, &st) {
			continue
		}
		out = append(out, etcMask{path: path, folder: typ == unix.S_IFDIR})
	}
	return out
}

// holdsAny reports whether one of paths is path or lies below it.
func holdsAny(path string, paths []string) bool {
	for _, p := range paths {
		if p == path || strings.HasPrefix(p, path+"/") {
			return true
		}
	}
	return false
}

// realFolders reports whether every folder on the way from dir to rel
// (below it) is a folder, not a symlink.
func realFolders(dir, rel string) bool {
	parts := strings.Split(rel, "/")
	p := dir
	for _, name := range parts[:len(parts)-1] {
		p += "/" + name
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
	}
	return true
}
