package proc

import (
	"strconv"
	"strings"
)

// SelfMountinfo lists this process's mounts, and MaxMountinfo bounds its
// read: a host may have thousands of mounts.
const (
	SelfMountinfo = "/proc/self/mountinfo"
	MaxMountinfo  = 16 << 20
)

// UnescapeMount decodes the octal escapes (\040 for a space) of a path in
// mountinfo.
func UnescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
