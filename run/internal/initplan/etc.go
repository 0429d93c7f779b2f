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

// etcReadable lists (as globs) the parts of the host's /etc the script
// may read where the run has no root of its own (no mount namespace): the
// Landlock rules there are one per entry of the host's /etc
// (applyLandlock), and a rule cannot say "what anyone may read, minus a
// deny list" of entries that do not exist yet, so this list of what the C
// library, TLS, interpreters and common programs (fontconfig, LibreOffice,
// matplotlib, file(1), locales) need stays for that case. With the mount
// namespace the sandbox's /etc is the host's by a rule instead (see
// etc_rule.go).
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
		// distribution name (os-release points into /usr), plotting
		"/etc/os-release", "/etc/matplotlibrc",
	}
}

// sharedCaches lists the system caches outside /etc the script may read,
// shown read-only like /etc (buildEtc, and the Landlock read rules of
// applyLandlock) when they exist: /var/cache/fontconfig, without
// which fontconfig (LibreOffice, matplotlib, ImageMagick) rebuilds its
// cache into $HOME on every run, seconds with many fonts. Only caches
// built from what the sandbox shows anyway (the fonts under /usr/share)
// belong here: no secrets, nothing that describes the host.
func sharedCaches() []string {
	return []string{"/var/cache/fontconfig"}
}

// etcNetwork are added to etcReadable with AllowNetwork: name resolution.
// With the mount namespace they are the host's /etc's anyway, and a
// symlink among them that leads outside what the sandbox shows has its
// file shown at its own path (etcLinkTargets).
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
// the init process (buildEtc) and mounted over the host's, by path:
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

// etcLinkTargets returns the files the symlinks of etcNetwork lead to
// that the sandbox shows at their own paths, so that the links, which are
// the host's /etc's, resolve in the sandbox (see etcLink): none without
// allowNetwork.
func etcLinkTargets(allowNetwork bool) []string {
	if !allowNetwork {
		return nil
	}
	var out []string
	for _, p := range etcNetwork() {
		if e, ok := lookHostEntry(p); ok && e.link != "" {
			if t := etcLink(e).target; t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// etcLink returns e, a symlink of /etc, as the sandbox shows it. The
// sandbox's /etc is the host's, so the link is there as it is: one into
// what the sandbox shows anyway (the system folders, /etc, its own /proc
// and /dev, as /etc/localtime -> /usr/share/zoneinfo/... or /etc/mtab ->
// ../proc/self/mounts) works. One elsewhere would dangle:
// systemd-resolved's /etc/resolv.conf ->
// ../run/systemd/resolve/stub-resolv.conf, and DNS with it. The file it
// leads to (target) is then shown at its own path (see etcLinkTargets;
// read-only, as all of /etc), when it is a regular file anyone may read
// and lies outside the places that hold a user's or a session's data or
// the deny list's entries (etcLinkTargetOK); else the link dangles and
// nothing more is shown. The init process opens the target without
// following symlinks and checks it is a regular file again, so the file
// checked is the file bound.
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

// etcLinkTargetOK reports whether target, where a symlink of /etc
// (etcNetwork) leads (resolved), may be shown at its own path. Not what the sandbox shows
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

// etcMatches returns the paths etcPatterns(allowNetwork) name in /etc,
// whose names and types listed holds (listDir), as filepath.Glob would
// for each pattern, except that a nested path (/etc/ssl/certs) is returned
// when its first component exists: callers open each path and skip the
// missing ones anyway. Each pattern's first component is looked up in the
// one listing, instead of one Glob (a stat or a listing) per pattern: this
// runs on every start, for the Landlock rules of a run without a mount
// namespace.
func etcMatches(listed map[string]uint8, allowNetwork bool) []string {
	var out []string
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
			if nested {
				n += "/" + rest
			}
			out = append(out, "/etc/"+n)
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
