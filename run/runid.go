package run

import "fmt"

// The host ids a root caller's runs get, one each (see takeRunID): a
// block above systemd's container range (524288-1879048191) and its
// dynamic users (61184-65519), below its foreign range (2147352576-) and
// below 2^31, so that the ids fit Go's int on 32-bit systems. No distribution
// gives accounts there; ids of /etc/passwd, /etc/group, /etc/subuid and
// /etc/subgid that fall in it are skipped all the same. docs/run.md,
// "Host identity", documents the block.
const (
	// RunIDFirst is the first host uid (and gid) of the block.
	RunIDFirst = 0x7F000000 // 2130706432
	// RunIDCount is how many ids the block holds.
	RunIDCount = 1 << 16 // up to 2130771967
)

// inRunIDs reports whether the host uid or gid id lies in the block.
func inRunIDs(id uint32) bool {
	return id >= RunIDFirst && id-RunIDFirst < RunIDCount
}

// sandboxOwner reports whether a file of owner was made by a sandboxed
// script as far as the planted-symlink checks go (resolveUnplanted): owner
// is uid, the sandbox identity the caller names (nobody for a root
// caller), or, when that is nobody, any id of the block, as a root
// caller's runs have one each.
func sandboxOwner(owner uint32, uid int) bool {
	return int(owner) == uid || uid == nobodyUID && inRunIDs(owner)
}

// identityName names the host identity uid for an error message.
func identityName(uid int) string {
	if uid >= 0 && inRunIDs(uint32(uid)) {
		return fmt.Sprintf("uid %d, the run's own host id, which owns no file (only the permission bits for others apply),", uid)
	}
	return fmt.Sprintf("uid %d,", uid)
}
