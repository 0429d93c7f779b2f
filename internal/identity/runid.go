package identity

import "fmt"

// Nobody is the host identity (uid and gid) of the sandbox when the
// caller is root and runs have no ids of their own. Mapping the
// namespace's uid 0 to host root would keep host privileges that no
// namespace removes: root's user_struct is exempt from RLIMIT_NPROC (a
// fork bomb would not be contained), and permission checks on host files
// compare host uids, so files owned by root with owner-only access
// (/etc/shadow's owner bits, 0600 keys under /root) would be readable
// wherever Landlock is missing. So for a root caller the namespace's
// uid 0 is host nobody (or a run id, see Take), and the skill folder
// must be readable by it (FirstUnreachable says so clearly when it is
// not).
const Nobody = 65534

// The host ids a root caller's runs get, one each (see Take): a block
// above systemd's container range (524288-1879048191) and its dynamic
// users (61184-65519), below its foreign range (2147352576-) and below
// 2^31, so that the ids fit Go's int on 32-bit systems. No distribution
// gives accounts there; ids of /etc/passwd, /etc/group, /etc/subuid and
// /etc/subgid that fall in it are skipped all the same. docs/run.md,
// "Host identity", documents the block.
const (
	// RunIDFirst is the first host uid (and gid) of the block.
	RunIDFirst = 0x7F000000 // 2130706432
	// RunIDCount is how many ids the block holds.
	RunIDCount = 1 << 16 // up to 2130771967
)

// IsRunID reports whether the host uid or gid id lies in the block.
func IsRunID(id uint32) bool {
	return id >= RunIDFirst && id-RunIDFirst < RunIDCount
}

// SandboxOwner reports whether a file of owner was made by a sandboxed
// script as far as the planted-symlink checks go: owner is uid, the
// sandbox identity the caller names (nobody for a root caller), or, when
// that is nobody, any id of the block, as a root caller's runs have one
// each.
func SandboxOwner(owner uint32, uid int) bool {
	return int(owner) == uid || uid == Nobody && IsRunID(owner)
}

// Name names the host identity uid for an error message.
func Name(uid int) string {
	if uid >= 0 && IsRunID(uint32(uid)) {
		return fmt.Sprintf("uid %d, the run's own host id, which owns no file (only the permission bits for others apply),", uid)
	}
	return fmt.Sprintf("uid %d,", uid)
}
