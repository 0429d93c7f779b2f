package identity

import (
	"strconv"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/proc"
)

// idSet lists ids and ranges of ids.
type idSet []idRange

// has reports whether id is in s.
func (s idSet) has(id uint32) bool {
	_, ok := idMap(s).outside(id)
	return ok
}

// hostIDs lists the ids of the block that the host's account files name:
// users and groups, and the subordinate ranges of /etc/subuid and
// /etc/subgid that overlap it. Files that cannot be read add nothing.
func hostIDs() idSet {
	var s idSet
	for _, f := range []struct {
		path string
		sub  bool
	}{{"/etc/passwd", false}, {"/etc/group", false}, {"/etc/subuid", true}, {"/etc/subgid", true}} {
		b, err := proc.ReadFile(f.path, maxAccountFile)
		if err != nil {
			continue
		}
		s = append(s, parseIDLines(b, f.sub)...)
	}
	return s
}

// maxAccountFile bounds what hostIDs reads of an account file; past it
// the file adds nothing.
const maxAccountFile = 16 << 20

// parseIDLines returns the ids that a passwd or group file (sub false:
// the third field of each line) or an /etc/subuid or /etc/subgid file
// (sub true: name:first:count lines) names in the block, as ranges
// clipped to it; malformed lines are skipped.
func parseIDLines(b []byte, sub bool) idSet {
	var s idSet
	for _, line := range strings.Split(string(b), "\n") {
		first, count, ok := parseIDLine(line, sub)
		if !ok {
			continue
		}
		lo, hi := max(first, RunIDFirst), min(first+count, RunIDFirst+RunIDCount)
		if lo < hi {
			s = append(s, idRange{inside: uint32(lo), count: uint32(hi - lo)})
		}
	}
	return s
}

// parseIDLine returns the first id and the count of ids one line of an
// account file names (see parseIDLines), and false when it is malformed.
func parseIDLine(line string, sub bool) (first, count uint64, ok bool) {
	f := strings.Split(strings.TrimSpace(line), ":")
	count = 1
	var err error
	switch {
	case sub && len(f) == 3:
		if first, err = strconv.ParseUint(f[1], 10, 32); err == nil {
			count, err = strconv.ParseUint(f[2], 10, 32)
		}
	case !sub && len(f) >= 4:
		first, err = strconv.ParseUint(f[2], 10, 32)
	default:
		return 0, 0, false
	}
	return first, count, err == nil
}
