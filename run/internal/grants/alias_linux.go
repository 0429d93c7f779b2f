package grants

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The deny list names paths, but a folder can be reached through more
// than one: a bind mount of /home at /mnt/home, a btrfs file system whose
// top level is also mounted (for snapshots), the root file system mounted
// again for a backup tool. A grant of /mnt/home/ann would then hold
// /home/ann/.ssh under another name. FindDenyAliases finds those names from
// /proc/self/mountinfo: two paths are the same folder when their mounts
// show the same file system (device) and their paths from that file
// system's root are equal.

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	id    uint64 // the mount's id (statx(2) STATX_MNT_ID)
	dev   string // major:minor of the file system
	root  string // the folder of the file system mounted
	point string // where
}

// fsPath is a folder or file as its file system knows it.
type fsPath struct {
	dev, path string
}

// DenyAliases holds the mount table and where each existing deny entry lies
// in its file system.
type DenyAliases struct {
	mounts []mountEntry
	deny   map[string]fsPath // deny entry -> its place in its file system
}

// FindDenyAliases reads the mount table once for one plan (allowed: the
// AllowDenied paths, as given and resolved); entries with
// wildcards and entries that do not exist are left to the path checks.
// Without a readable mount table it finds nothing.
func FindDenyAliases(deny *denylist.List, allowed map[string]bool) DenyAliases {
	a := DenyAliases{deny: map[string]fsPath{}, mounts: readMountTable()}
	for _, d := range deny.Entries() {
		if denylist.HasMeta(d) || allowed[d] || !deny.Exists(d) {
			continue
		}
		if fp, ok := a.fsPathOf(d); ok {
			a.deny[d] = fp
		}
	}
	return a
}

// readMountTable reads /proc/self/mountinfo; nil when it cannot. The
// file is read with plain system calls (proc.ReadFile): os.Open would
// register it with the poller (four more system calls) and a
// bufio.Scanner's 64 KiB buffer is 16 fresh pages, each a page fault, in
// the short-lived CLI where this runs once a call.
func readMountTable() []mountEntry {
	b, err := proc.ReadFile(proc.SelfMountinfo, proc.MaxMountinfo)
	if err != nil {
		return nil
	}
	return parseMountTable(b)
}

// parseMountTable parses the lines of a mountinfo file; lines with fewer
// than five fields are skipped.
func parseMountTable(b []byte) []mountEntry {
	mounts := make([]mountEntry, 0, bytes.Count(b, []byte{'\n'})+1)
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		// id parent major:minor root mountpoint options ...
		var fields [5][]byte
		n := 0
		for rest := line; n < len(fields); n++ {
			rest = bytes.TrimLeft(rest, " \t")
			if len(rest) == 0 {
				break
			}
			end := bytes.IndexAny(rest, " \t")
			if end < 0 {
				end = len(rest)
			}
			fields[n], rest = rest[:end], rest[end:]
		}
		if n < len(fields) {
			continue
		}
		id, _ := strconv.ParseUint(string(fields[0]), 10, 64)
		mounts = append(mounts, mountEntry{id: id, dev: string(fields[2]), root: proc.UnescapeMount(string(fields[3])), point: proc.UnescapeMount(string(fields[4]))})
	}
	return mounts
}

// fsPathOf returns where p (absolute, symlinks resolved) lies in its file
// system, through the last mount holding it (the one on top).
func (a DenyAliases) fsPathOf(p string) (fsPath, bool) {
	best := -1
	for i, m := range a.mounts {
		if p == m.point || PathUnder(p, m.point) || m.point == "/" {
			if best < 0 || len(m.point) >= len(a.mounts[best].point) {
				best = i
			}
		}
	}
	if best < 0 {
		return fsPath{}, false
	}
	m := a.mounts[best]
	rel := strings.TrimPrefix(p, m.point)
	if m.point == "/" {
		rel = p
	}
	path := strings.TrimSuffix(m.root, "/") + rel
	if path == "" {
		path = "/"
	}
	return fsPath{dev: m.dev, path: path}, true
}

// Check refuses grant g when it is, or lies inside, a deny entry reached
// through another mount, and (write grants) when it holds one: the path
// checks (CheckGrantable) cannot see either.
func (a DenyAliases) Check(g, flag string, write bool, allowed map[string]bool) error {
	if len(a.deny) == 0 || allowed[g] {
		return nil
	}
	gp, ok := a.fsPathOf(g)
	if !ok {
		return nil
	}
	for d, dp := range a.deny {
		if dp.dev != gp.dev || g == d || PathUnder(g, d) || PathUnder(d, g) {
			continue // another file system, or the path checks' business
		}
		if gp.path == dp.path || PathUnder(gp.path, dp.path) {
			return fmt.Errorf("%w: %s %s is %s on the deny list, reached through another mount of its file system", stageconfig.ErrBadConfig, flag, g, d)
		}
		if write && PathUnder(dp.path, gp.path) {
			return fmt.Errorf("%w: --write %s holds %s, which is on the deny list, through another mount of its file system; grant a folder that holds no home folder or credential path", stageconfig.ErrBadConfig, g, d)
		}
	}
	return nil
}

// Inside returns the paths under read grant r at which deny entries
// appear through another mount, to be masked like those found by path.
func (a DenyAliases) Inside(r string) []string {
	rp, ok := a.fsPathOf(r)
	if !ok {
		return nil
	}
	var out []string
	for d, dp := range a.deny {
		if dp.dev != rp.dev || !PathUnder(dp.path, rp.path) {
			continue
		}
		alias := r + strings.TrimPrefix(dp.path, strings.TrimSuffix(rp.path, "/"))
		if alias == d {
			continue
		}
		if _, err := os.Lstat(alias); err == nil {
			out = append(out, alias)
		}
	}
	return out
}
