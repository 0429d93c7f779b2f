// Package outfile opens the files a caller names for its own output (an
// audit log, a SARIF report) without following a symlink a sandboxed
// script could have planted on the way.
//
// For most uses, Open is os.OpenFile for such a path: it refuses a
// symlink that belongs to the identity sandboxed scripts run as with a
// *PlantedSymlinkError, and opens the real path found without following
// any symlink, so that one swapped in after the check makes the open fail
// rather than redirect it.
//
// It runs in the supervisor (the CLI and the MCP server: audit's
// --audit-log, scan's report), with the caller's privileges, often root's.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// PlantedSymlinkError is Open's refusal of a path that goes through
// a symlink belonging to the identity sandboxed scripts run as, when that
// is not the caller's own (uid 65534 for a root caller). A script with a
// write grant can leave such a symlink behind for a later call to follow
// as root: an --audit-log file named in a folder a skill once wrote to,
// made a link to /etc/sudoers, had the record appended there. Grants are
// checked this way by Run itself.
type PlantedSymlinkError struct {
	Path string // the path as the caller named it
	Link string // the symlink met on the way
}

// Error names the link and why it is refused.
func (e *PlantedSymlinkError) Error() string {
	return fmt.Sprintf("%s goes through the symlink %s, which belongs to the identity sandboxed scripts run as: a script may have planted it to have the file written elsewhere; name the real path", e.Path, e.Link)
}

// Open opens path, a file the caller names for its own output (an
// audit log, a SARIF report), as os.OpenFile(path, flag, perm) would,
// without following a symlink a sandboxed script could have planted on
// the way. The path is resolved once, refusing such a symlink with a
// *PlantedSymlinkError; the real path found is then opened without
// following any symlink (openat2 RESOLVE_NO_SYMLINKS on Linux, one
// O_NOFOLLOW name at a time on macOS). A script running meanwhile that
// swaps a folder on the way for a link after the check thus makes the
// open fail rather than redirect it: checking and then opening the path
// by name would follow it. The caller's own symlinks (a log named through
// a link in /var/log) are followed by the resolution. The kernel's names
// of this process's descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N) are opened as named: they lie where no script writes,
// and what they point at is the caller's redirection.
func Open(path string, flag int, perm fs.FileMode) (*os.File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if descriptorName(abs) {
		return os.OpenFile(path, flag, perm)
	}
	uid, _ := identity.Sandbox()
	if uid == os.Geteuid() {
		uid = -1 // the caller's own links cannot be told from a script's
	}
	real, link := resolveOutput(abs, uid)
	if link != "" {
		return nil, &PlantedSymlinkError{Path: path, Link: link}
	}
	f, err := openResolved(real, path, flag, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s: a symlink appeared on the way to %s after it was checked (a sandboxed script may be planting it): refused (%w)", path, real, err)
	}
	return f, err
}

// descriptorName tells whether the absolute path is one of the kernel's
// names of a descriptor of this process.
func descriptorName(abs string) bool {
	switch abs {
	case "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	dir, name := filepath.Split(abs)
	if _, err := strconv.ParseUint(name, 10, 31); err != nil {
		return false
	}
	switch dir {
	case "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/":
		return true
	}
	return false
}
