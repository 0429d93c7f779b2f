//go:build linux && (amd64 || arm64)

package initplan

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"slices"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// etcReadable lists (as globs) the parts of /etc the script may read: what
// the C library, TLS, interpreters and common programs (fontconfig,
// LibreOffice, file(1), locales) need to run. It is the one list behind
// both the mount layout (buildRoot builds /etc from it) and the Landlock
// rules (applyLandlock: one rule on the /etc so built, one per entry of
// the host's /etc where the run has no root of its own), so the two layers
// agree.
//
// Left out on purpose, because they describe the host or hold secrets:
// passwd, group, shadow, gshadow, sudoers*, ssh/ (host keys), ssl/private,
// hostname, machine-id, fstab, crontab, the package manager's state and
// any credentials folder. New entries must be neither.
func etcReadable() []string {
	return []string{
		// dynamic loader and C library
		"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
		"/etc/nsswitch.conf", "/etc/host.conf", "/etc/gai.conf",
		"/etc/protocols", "/etc/services",
		// time and locale
		"/etc/localtime", "/etc/timezone", "/etc/locale.alias", "/etc/locale.conf",
		// TLS: the certificates, never ssl/private
		"/etc/ssl/certs", "/etc/ssl/openssl.cnf", "/etc/ca-certificates", "/etc/ca-certificates.conf",
		// program selection and file types
		"/etc/alternatives", "/etc/mime.types", "/etc/magic", "/etc/magic.mime", "/etc/mailcap",
		// interpreters and shells
		"/etc/python3", "/etc/python3.*", "/etc/perl", "/etc/bash.bashrc", "/etc/inputrc",
		// fonts and office programs
		"/etc/fonts", "/etc/libreoffice", "/etc/papersize", "/etc/ImageMagick-*",
		// distribution name (os-release points into /usr)
		"/etc/os-release",
	}
}

// sharedCaches lists the system caches outside /etc the script may read,
// shown read-only like /etc's entries (etcEntries, and the Landlock read
// rules of applyLandlock) when they exist: /var/cache/fontconfig, without
// which fontconfig (LibreOffice, matplotlib, ImageMagick) rebuilds its
// cache into $HOME on every run, seconds with many fonts. Only caches
// built from what the sandbox shows anyway (the fonts under /usr/share)
// belong here: no secrets, nothing that describes the host.
func sharedCaches() []string {
	return []string{"/var/cache/fontconfig"}
}

// etcNetwork are added to etcReadable with AllowNetwork: name resolution.
func etcNetwork() []string {
	return []string{"/etc/resolv.conf", "/etc/hosts"}
}

// etcOwnHosts is the /etc/hosts the sandbox gets when the host's is not
// shown (etcNetwork): only the loopback names, so that a local server a
// script starts and tests ("http://localhost:8080", webapp testing) is
// found. Without it glibc falls through to DNS for "localhost" and fails.
// It names nothing of the host: localhost is the run's own loopback (in
// its network namespace), and the host name is the UTS namespace's.
const etcOwnHosts = "127.0.0.1\tlocalhost\n127.0.1.1\t" + sandboxHostname + "\n::1\tlocalhost ip6-localhost ip6-loopback\n"

// etcOwn returns the files the sandbox's /etc holds that are written by
// the init stage (buildRoot) rather than bound from the host's, by path:
// /etc/hosts unless allowNetwork shows the host's.
func etcOwn(allowNetwork bool) map[string]string {
	if allowNetwork {
		return nil
	}
	return map[string]string{"/etc/hosts": etcOwnHosts}
}

// etcPatterns is etcReadable, plus etcNetwork with allowNetwork.
func etcPatterns(allowNetwork bool) []string {
	if allowNetwork {
		return append(etcReadable(), etcNetwork()...)
	}
	return etcReadable()
}

// etcEntries returns the entries of matches (etcMatches) found on the host, as
// they are shown in the sandbox's /etc (see buildRoot): folders and files
// to be bind-mounted read-only, symlinks by their target, to be
// re-created, unless the link leads outside what the sandbox shows (see
// etcLink). Without Landlock the secrets of /etc are then still out of
// sight. The folders of sharedCaches follow, shown the same way (a
// symlink among them is left out).
func etcEntries(matches []etcMatch) []hostEntry {
	var entries []hostEntry
	for _, m := range matches {
		if e, ok := m.hostEntry(); ok {
			if e.link != "" {
				e = etcLink(e)
			}
			entries = append(entries, e)
		}
	}
	for _, p := range sharedCaches() {
		if e, ok := lookHostEntry(p); ok && e.folder {
			entries = append(entries, e)
		}
	}
	return entries
}

// etcLink returns e, a symlink of the /etc list, as the sandbox shows it.
// A link into what the sandbox shows anyway (the system folders, /etc,
// its own /proc and /dev, as /etc/localtime -> /usr/share/zoneinfo/... or
// /etc/mtab -> ../proc/self/mounts) is re-created as it is. A link
// elsewhere would dangle there: systemd-resolved's /etc/resolv.conf ->
// ../run/systemd/resolve/stub-resolv.conf, and DNS with it. The file it
// leads to is then bound at the link's path instead (read-only, as all of
// /etc), when it is a regular file anyone may read and lies outside the
// places that hold a user's or a session's data or the deny list's entries
// (etcLinkTargetOK); else the link is re-created, dangling, and nothing
// more is shown. The init process opens the target without following
// symlinks and checks it is a regular file again, so the file checked is
// the file bound.
func etcLink(e hostEntry) hostEntry {
	target, err := filepath.EvalSymlinks(e.path)
	if err != nil || !etcLinkTargetOK(target) {
		return e
	}
	var st unix.Stat_t
	if unix.Lstat(target, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&unix.S_IROTH == 0 {
		return e
	}
	return hostEntry{path: e.path, target: target}
}

// etcLinkTargetOK reports whether target, where a symlink of the /etc list
// leads (resolved), may be bound in its place. Not what the sandbox shows
// anyway (the link works as it is, and /proc/<pid> or /dev must stay the
// sandbox's own), nor home folders, users' runtime folders (/run/user),
// the shared temporary folders, /sys, nor a deny-list entry: an absolute
// one, or a "~/" one anywhere (a service's home folder elsewhere holds
// .ssh or .pgpass too). The deny list's /var/run stands for the sockets
// of other sessions; only a regular file is ever bound.
func etcLinkTargetOK(target string) bool {
	shown := append(llSystemDirs(), "/etc", "/proc", "/dev")
	private := []string{"/root", "/home", "/run/user", "/tmp", "/var/tmp", "/sys"}
	if Under(target, shown) || Under(target, private) {
		return false
	}
	for _, d := range stageconfig.DefaultDenyPaths() {
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			if strings.HasSuffix(target, "/"+rest) || strings.Contains(target, "/"+rest+"/") {
				return false
			}
			continue
		}
		for q := target; q != "/"; q = filepath.Dir(q) {
			if ok, _ := filepath.Match(d, q); ok {
				return false
			}
		}
	}
	return true
}

// etcMatch is a path of /etc that etcMatches found, with the type /etc's
// listing gave its name (a d_type of getdents(2)): unix.DT_UNKNOWN for a
// nested path (/etc/ssl/certs), whose last component was not listed, or
// where the file system does not say.
type etcMatch struct {
	path  string
	dtype uint8
}

// hostEntry is lookHostEntry(m.path), without its lstat(2) when the
// listing said m is a folder or a regular file: a start looks at some 30
// entries of /etc. What the listing said is what lstat would have said
// then; the init process opens each entry again without following a
// symlink and binds the descriptor, so an entry swapped since fails its
// bind (a folder onto a file's mount point, or the reverse) rather than
// showing something else.
func (m etcMatch) hostEntry() (hostEntry, bool) {
	switch m.dtype {
	case unix.DT_DIR:
		return hostEntry{path: m.path, folder: true}, true
	case unix.DT_REG:
		return hostEntry{path: m.path}, true
	case unix.DT_LNK, unix.DT_UNKNOWN:
		return lookHostEntry(m.path)
	}
	return hostEntry{}, false // a device, FIFO or socket: never shown
}

// etcPaths returns the paths of matches.
func etcPaths(matches []etcMatch) []string {
	paths := make([]string, len(matches))
	for i, m := range matches {
		paths[i] = m.path
	}
	return paths
}

// etcMatches returns the paths etcPatterns(allowNetwork) name in /etc,
// as filepath.Glob would for each pattern, except that a nested path
// (/etc/ssl/certs) is returned when its first component exists: callers
// open each path and skip the missing ones anyway. /etc is listed once
// and each pattern's first component looked up in that list, instead of
// one Glob (a stat or a listing) per pattern: this runs on every start,
// for the mount layout and for the Landlock rules.
func etcMatches(allowNetwork bool) []etcMatch {
	listed := listDir("/etc")
	var out []etcMatch
	for _, pattern := range etcPatterns(allowNetwork) {
		// No pattern has a wildcard below its first component
		// (TestEtcMatchesGlob checks).
		first, rest, nested := strings.Cut(strings.TrimPrefix(pattern, "/etc/"), "/")
		var names []string
		if strings.ContainsAny(first, `*?[\`) {
			// The literal part before the first wildcard narrows the
			// names to match; sorted, as Glob returns them.
			lit := first[:strings.IndexAny(first, `*?[\`)]
			for n := range listed {
				if !strings.HasPrefix(n, lit) {
					continue
				}
				if ok, _ := filepath.Match(first, n); ok {
					names = append(names, n)
				}
			}
			slices.Sort(names)
		} else if _, ok := listed[first]; ok {
			names = []string{first}
		}
		for _, n := range names {
			m := etcMatch{path: "/etc/" + n, dtype: listed[n]}
			if nested {
				m = etcMatch{path: m.path + "/" + rest, dtype: unix.DT_UNKNOWN}
			}
			out = append(out, m)
		}
	}
	return out
}

// listDir returns the names in dir with their types (d_type), none when
// it cannot be read, read with getdents(2) directly: the listing comes on
// every start.
func listDir(dir string) map[string]uint8 {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	names := make(map[string]uint8, 256)
	buf := make([]byte, 16<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return names
		}
		parseDirents(buf[:n], names)
	}
}

// parseDirents adds the names and types of the linux_dirent64 records in
// buf, as getdents(2) filled it, to names, skipping "." and "..". A record
// that does not fit ends the parse.
func parseDirents(buf []byte, names map[string]uint8) {
	const (
		reclenOff = 16 // after d_ino and d_off
		typeOff   = 18
		nameOff   = 19
	)
	for len(buf) >= nameOff {
		reclen := int(binary.NativeEndian.Uint16(buf[reclenOff:]))
		if reclen < nameOff || reclen > len(buf) {
			return
		}
		name := buf[nameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if s := string(name); s != "" && s != "." && s != ".." {
			names[s] = buf[typeOff]
		}
		buf = buf[reclen:]
	}
}

// underEtc reports whether path is /etc or below it.
func underEtc(path string) bool {
	return path == "/etc" || strings.HasPrefix(path, "/etc/")
}
