package run

import "github.com/skill-sandbox/skill-sandbox/internal/identity"

// The block of host ids a root caller's runs get, one each: see
// identity.RunIDFirst.
const (
	// RunIDFirst is the first host uid (and gid) of the block.
	RunIDFirst = identity.RunIDFirst
	// RunIDCount is how many ids the block holds.
	RunIDCount = identity.RunIDCount
)
