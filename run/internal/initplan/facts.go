//go:build linux && (amd64 || arm64)

package initplan

import (
	"strconv"
	"strings"
	"sync"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// hostEntry is a host path the sandbox shows at the same path: a folder or
// file bind-mounted in, a symlink re-created from its target (link), or a
// symlink of /etc bound from the file it leads to (target).
type hostEntry struct {
	path   string
	link   string // symlink target, or ""
	target string // the file a symlink of /etc leads to, bound at path (see etcLink)
	folder bool
}

// lookHostEntry looks at path, not following a final symlink. ok is false
// when it is missing or neither a folder, a regular file nor a symlink.
func lookHostEntry(path string) (hostEntry, bool) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return hostEntry{}, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR, unix.S_IFREG:
		return hostEntry{path: path, folder: st.Mode&unix.S_IFMT == unix.S_IFDIR}, true
	case unix.S_IFLNK:
		var buf [unix.PathMax]byte
		n, err := unix.Readlink(path, buf[:])
		return hostEntry{path: path, link: string(buf[:n])}, err == nil && n < len(buf)
	}
	return hostEntry{}, false
}

// systemEntries are the system folders of llSystemDirs the host has.
func systemEntries() []hostEntry {
	var out []hostEntry
	for _, p := range llSystemDirs() {
		if e, ok := lookHostEntry(p); ok {
			out = append(out, e)
		}
	}
	return out
}

// devicesPresent are the devices of llDevices the host has.
func devicesPresent() []string {
	var out []string
	for _, dev := range llDevices() {
		var st unix.Stat_t
		if unix.Stat(dev, &st) == nil {
			out = append(out, dev)
		}
	}
	return out
}

// procFacts are facts of the kernel that do not change while the
// supervisor runs.
type procFacts struct {
	landlockABI int    // 0 when Landlock is missing
	landlockWhy string // why it is missing
	lastCap     int    // the highest capability number the kernel knows
	// quotaKernel: the kernel counts every one of runQuotas per user
	// namespace; userLimits are the supervisor's own namespace's limits
	// of /proc/sys/user, by name (see capQuotas).
	quotaKernel bool
	userLimits  map[string]int64
}

// processFacts reads the kernel's facts once per process: a lazily
// computed constant, the same for every run.
var processFacts = sync.OnceValue(func() *procFacts {
	pf := &procFacts{lastCap: readLastCap(), quotaKernel: kernelAtLeast(quotaMajor, quotaMinor), userLimits: readUserLimits()}
	pf.landlockABI, pf.landlockWhy = landlockABI()
	return pf
})

// readLastCap reads the highest capability number the kernel knows.
func readLastCap() int {
	b, err := proc.ReadFile("/proc/sys/kernel/cap_last_cap", 64)
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			return n
		}
	}
	return 63
}

// llSystemDirs are read and executed: the system's programs and libraries.
func llSystemDirs() []string { return stageconfig.SystemDirs() }

// llDevices are read and written: harmless character devices.
func llDevices() []string {
	return []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
}

// Under reports whether path is one of dirs or below one.
func Under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+"/") {
			return true
		}
	}
	return false
}
