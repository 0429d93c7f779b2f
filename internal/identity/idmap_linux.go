package identity

import (
	"errors"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/internal/proc"
	"strconv"
	"strings"
)

// idRange is one line of a uid_map or gid_map: count ids from inside map
// to outside ones in the parent user namespace.
type idRange struct{ inside, outside, count uint32 }

// idMap is a parsed uid_map or gid_map.
type idMap []idRange

// maxIDMapLines is the kernel's limit on a map's lines.
const maxIDMapLines = 340

// parseIDMap parses the text of a uid_map or gid_map (see
// user_namespaces(7)): lines of three decimal numbers.
func parseIDMap(s string) (idMap, error) {
	var m idMap
	for i, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		r, err := parseIDMapLine(line, i+1)
		if err != nil {
			return nil, err
		}
		if len(m) == maxIDMapLines {
			return nil, errors.New("id map: more than 340 lines")
		}
		m = append(m, r)
	}
	return m, nil
}

// parseIDMapLine parses line n of a map.
func parseIDMapLine(line string, n int) (idRange, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return idRange{}, fmt.Errorf("id map line %d: %d fields, want 3", n, len(f))
	}
	var v [3]uint32
	for j, x := range f {
		u, err := strconv.ParseUint(x, 10, 32)
		if err != nil {
			return idRange{}, fmt.Errorf("id map line %d: %q is not an id", n, x)
		}
		v[j] = uint32(u)
	}
	if v[2] == 0 || uint64(v[0])+uint64(v[2]) > 1<<32 || uint64(v[1])+uint64(v[2]) > 1<<32 {
		return idRange{}, fmt.Errorf("id map line %d: range %d+%d out of bounds", n, v[0], v[2])
	}
	return idRange{inside: v[0], outside: v[1], count: v[2]}, nil
}

// outside returns the id of the parent namespace that id maps to, and
// whether it is mapped.
func (m idMap) outside(id uint32) (uint32, bool) {
	for _, r := range m {
		if id >= r.inside && uint64(id) < uint64(r.inside)+uint64(r.count) {
			return r.outside + (id - r.inside), true
		}
	}
	return 0, false
}

// UnmappedOwner returns the uid that files of owners outside the
// caller's user namespace show in it (the kernel's overflowuid, 65534
// unless set), or -1 when that uid is a user of the namespace itself
// (mapped, as every uid is in the initial namespace), so that an owner
// shown as it may be a local user. In a container with a user
// namespace, the image's files of an unmapped host owner show as it.
func UnmappedOwner() int {
	overflow := 65534
	if b, err := proc.ReadFile("/proc/sys/kernel/overflowuid", 64); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			overflow = n
		}
	}
	b, err := proc.ReadFile("/proc/self/uid_map", 64<<10)
	if err != nil {
		return -1
	}
	m, err := parseIDMap(string(b))
	if err != nil {
		return -1
	}
	if _, mapped := m.outside(uint32(overflow)); mapped {
		return -1
	}
	return overflow
}
