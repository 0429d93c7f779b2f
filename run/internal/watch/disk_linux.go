package watch

import (
	"math"

	"github.com/skill-sandbox/skill-sandbox/internal/walk"

	"golang.org/x/sys/unix"
)

// treeUsage adds up the disk blocks and counts the entries under dir, each
// inode once (hard links), and stops early once either passes its cap:
// over is then true. The walk is walk.NoFollow's: the script changes the
// folder as we walk it, and a folder swapped for a symlink to a FIFO once
// blocked the watch for good, and with it every cap. A vanished entry is
// skipped; any other error (a folder the script made unreadable, a tree
// too deep) also sets over, since what it hides cannot be counted.
func treeUsage(dir string, maxBytes, maxInodes int64) (bytes, inodes int64, over bool) {
	type key struct{ dev, ino uint64 }
	seen := map[key]bool{}
	err := walk.NoFollow(dir, func(_ string, st *unix.Stat_t) bool {
		inodes++
		if k := (key{st.Dev, st.Ino}); !seen[k] {
			seen[k] = true
			bytes += st.Blocks * 512
		}
		return bytes <= maxBytes && inodes <= maxInodes
	})
	return bytes, inodes, err != nil || bytes > maxBytes || inodes > maxInodes
}

// GrantsUsage adds up the disk blocks under the write grants, stopping
// once past limit; ok is false past it, or when a grant could not be
// walked (what it hides cannot be counted).
func GrantsUsage(grants []string, limit int64) (used int64, ok bool) {
	for _, g := range grants {
		b, _, over := treeUsage(g, limit-used, math.MaxInt64)
		used += b
		if over {
			return used, false
		}
	}
	return used, true
}
