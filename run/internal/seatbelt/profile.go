package seatbelt

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Network is how much network a profile gives.
type Network int

// The amounts of network a profile can give.
const (
	NoNetwork   Network = iota // nothing, not even DNS
	FullNetwork                // AllowNetwork
	ProxyOnly                  // AllowHosts: TCP to the proxy's loopback port only
)

// Policy is the resolved configuration of one run, as the profile
// sees it. Every path is absolute, clean and symlink-free.
type Policy struct {
	Skill   string   // read and execute
	WorkDir string   // read and write, no execute
	System  []string // trees to read and execute: the system and the interpreter
	Read    []string // read grants (files or folders)
	Write   []string // write grants (folders)
	// Deny are the deny-list entries (DefaultDenyPaths expanded against
	// the home folders, plus Sandbox.DenyPaths, minus AllowDenied), with
	// wildcards already expanded to the paths that exist.
	Deny      []string
	Network   Network
	ProxyPort int // ProxyOnly: the proxy's port on 127.0.0.1
}

// SystemTrees are read and executed by every run: the system's
// programs, libraries and frameworks, and the usual homes of interpreters
// (Homebrew under /opt/homebrew and /usr/local, python.org's framework
// under /Library/Frameworks, the Command Line Tools that /usr/bin/python3
// forwards to).
func SystemTrees() []string {
	return []string{
		"/bin", "/sbin", "/usr", "/System", "/opt/homebrew",
		"/Library/Frameworks", "/Library/Developer/CommandLineTools",
		"/Applications/Xcode.app/Contents/Developer",
	}
}

// systemFiles are read only, file by file: the parts of /etc and
// /var that programs need (time zone, TLS roots, protocol tables, the
// Command Line Tools selection); the rest of /private/etc (passwd, ssh,
// sudoers) describes the host and stays denied.
func systemFiles() []string {
	return []string{
		"/private/etc/localtime", "/private/etc/ssl", "/private/etc/services",
		"/private/etc/protocols", "/private/var/db/timezone",
		"/private/var/db/xcode_select_link",
		"/dev/random", "/dev/urandom",
	}
}

// devices are read and written: devices that reach nothing, and
// /dev/fd, whose entries are the process's own descriptors.
func devices() []string { return []string{"/dev/null", "/dev/zero", "/dev/fd"} }

// sysctlNames are the sysctl names (or prefixes, ending in ".") that
// interpreters read at start: CPU count and features, page and memory
// size, OS name and version, limits. kern.proc.* is not among them: it
// lists every process of the host.
func sysctlNames() []string {
	return []string{
		"hw.", "machdep.cpu.", "kern.ostype", "kern.osrelease", "kern.osversion",
		"kern.osproductversion", "kern.version", "kern.argmax", "kern.maxfilesperproc",
		"kern.usrstack64", "kern.boottime", "kern.secure_kernel", "sysctl.proc_translated",
		"vm.pagesize",
	}
}

// machServices are the only Mach services a script may look up.
// Every other lookup (the window server, pasteboard, keychain, launch
// services, other users' agents) is denied:
//   - com.apple.system.opendirectoryd.libinfo: getpwuid and getgrgid
//     (Python's pwd and getpass, node's os.userInfo, id(1));
//   - com.apple.system.notification_center: libnotify, which libc uses
//     for time zone changes and which many programs poll at start.
//
// With network (full or through the proxy) also:
//   - com.apple.trustd.agent and com.apple.trustd: certificate checks of
//     programs that use the system's TLS (curl, Security.framework).
func machServices(network bool) []string {
	s := []string{"com.apple.system.opendirectoryd.libinfo", "com.apple.system.notification_center"}
	if network {
		s = append(s, "com.apple.trustd.agent", "com.apple.trustd")
	}
	return s
}

// quote quotes s as an SBPL string literal. Backslash and double quote
// are escaped; control characters (newline, NUL, ...), DEL and
// invalid UTF-8 are refused: a path holding one cannot be named in a
// profile whose parser this project cannot test, so the run is refused
// instead.
func quote(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("%q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return "", fmt.Errorf("%q holds the control character %U", s, r)
		case r == '"' || r == '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String(), nil
}

// writer accumulates profile text and the first quoting error.
type writer struct {
	b   strings.Builder
	err error
}

func (w *writer) line(s string) { w.b.WriteString(s + "\n") }

// rule writes "(ACTION OPS (FILTER "P") ...)" for each path, one filter a
// line; nothing when paths is empty.
func (w *writer) rule(action, ops, filter string, paths []string) {
	if len(paths) == 0 {
		return
	}
	w.b.WriteString("(" + action + " " + ops)
	for _, p := range paths {
		q, err := quote(p)
		if err != nil && w.err == nil {
			w.err = err
		}
		w.b.WriteString("\n  (" + filter + " " + q + ")")
	}
	w.b.WriteString(")\n")
}

// Profile generates the profile of one run. It fails only on a
// path it cannot quote safely (see quote) or a policy that is not
// absolute and clean.
func Profile(pol Policy) (string, error) {
	if err := pol.check(); err != nil {
		return "", err
	}
	exec := append(append([]string(nil), pol.System...), pol.Skill)
	read := append(append([]string(nil), exec...), pol.Read...)
	write := append([]string{pol.WorkDir}, pol.Write...)
	network := pol.Network != NoNetwork

	w := &writer{}
	w.line("(version 1)")
	w.line(";; Generated by skill-sandbox for one run. Deny by default; the last matching rule wins.")
	w.line("(deny default)")
	w.line("")
	w.line(";; Processes: fork, and exec of the system's programs, the interpreter and the skill.")
	w.line(";; No information about processes but itself, no signal outside this sandbox.")
	w.line("(allow process-fork)")
	w.rule("allow", "process-exec", "subpath", exec)
	w.line("(allow process-info* (target self))")
	w.line("(allow signal (target same-sandbox))")
	var sysctls []string
	for _, s := range sysctlNames() {
		kind := "sysctl-name"
		if strings.HasSuffix(s, ".") {
			kind = "sysctl-name-prefix"
		}
		sysctls = append(sysctls, "("+kind+" "+strconv.Quote(s)+")")
	}
	w.line("(allow sysctl-read\n  " + strings.Join(sysctls, "\n  ") + ")")
	w.rule("allow", "mach-lookup", "global-name", machServices(network))
	w.line("")
	w.line(";; Files. The root node itself: dyld reads it on macOS 26 before main.")
	w.line("(allow file-read* (literal \"/\"))")
	w.line(";; stat (not list or read) of the folders above each granted tree, for path lookups.")
	w.rule("allow", "file-read-metadata", "literal", ancestors(append(append(read, write...), systemFiles()...)))
	w.rule("allow", "file-read*", "subpath", read)
	w.rule("allow", "file-read*", "subpath", systemFiles())
	w.rule("allow", "file-read* file-write*", "subpath", write)
	w.rule("allow", "file-read* file-write-data file-ioctl", "subpath", devices())

	// The deny list wins over everything above, except a grant that
	// AllowDenied exempted by its exact path (the planner refused every
	// other grant inside a deny entry); entries inside such a grant are
	// denied again after it.
	w.line("")
	w.line(";; The deny list (credentials, keys, history) wins over the grants above.")
	var deny []string // entries elsewhere are denied by default already
	for _, d := range pol.Deny {
		if slices.ContainsFunc(append(read, write...), func(t string) bool { return d == t || under(d, t) }) {
			deny = append(deny, d)
		}
	}
	w.rule("deny", "file-read* file-write*", "subpath", deny)
	readExc, writeExc := exempted(pol.Read, pol.Deny), exempted(pol.Write, pol.Deny)
	if len(readExc)+len(writeExc) > 0 {
		w.line(";; Grants exempted from the deny list by their exact path (AllowDenied).")
		w.rule("allow", "file-read*", "subpath", readExc)
		w.rule("allow", "file-read* file-write*", "subpath", writeExc)
		var inner []string
		for _, d := range pol.Deny {
			for _, g := range append(readExc, writeExc...) {
				if under(d, g) && !slices.Contains(inner, d) {
					inner = append(inner, d)
				}
			}
		}
		w.rule("deny", "file-read* file-write*", "subpath", inner)
	}

	w.line("")
	switch pol.Network {
	case NoNetwork:
		w.line(";; Network: none (no sockets to other hosts, to this host, or to DNS).")
	case FullNetwork:
		w.line(";; Network: the host's whole network (AllowNetwork).")
		w.line("(allow network*)")
		w.line("(allow system-socket)")
	case ProxyOnly:
		w.line(";; Network: TCP to the allowlist proxy on the loopback only.")
		w.line(fmt.Sprintf("(allow network-outbound (remote tcp \"localhost:%d\"))", pol.ProxyPort))
	}
	if w.err != nil {
		return "", w.err
	}
	return w.b.String(), nil
}

// check refuses a policy the profile cannot state exactly. Deny entries
// are checked only when they lie inside a granted tree (see
// Profile): elsewhere the default denies them, and a file any
// local user can create (/tmp/ssh-* with a newline in its name) must not
// stop every run.
func (pol Policy) check() error {
	paths := append([]string{pol.Skill, pol.WorkDir}, pol.System...)
	paths = append(append(paths, pol.Read...), pol.Write...)
	for _, p := range paths {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return fmt.Errorf("seatbelt profile: path %q is not absolute and clean", p)
		}
		if _, err := quote(p); err != nil {
			return fmt.Errorf("seatbelt profile: path %v", err)
		}
	}
	if pol.Network == ProxyOnly && (pol.ProxyPort <= 0 || pol.ProxyPort > 65535) {
		return fmt.Errorf("seatbelt profile: proxy port %d out of range", pol.ProxyPort)
	}
	return nil
}

// exempted returns the grants that lie strictly inside a deny entry: the
// planner lets them through only when AllowDenied names them exactly.
func exempted(grants, deny []string) []string {
	var out []string
	for _, g := range grants {
		for _, d := range deny {
			if under(g, d) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// ancestors returns every proper ancestor of paths but "/",
// sorted and without repeats.
func ancestors(paths []string) []string {
	var out []string
	for _, p := range paths {
		for d := filepath.Dir(p); d != "/" && d != "."; d = filepath.Dir(d) {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	sort.Strings(out)
	return out
}

// under reports whether p lies strictly inside dir.
func under(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
