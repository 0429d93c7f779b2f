package grants

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// UnreachableError is a path the sandbox identity cannot reach through the
// host's folders (a root caller's sandbox runs as nobody). It wraps
// ErrBadConfig. Run hands such a folder over when it can (HandOver) and
// returns this error when it cannot.
type UnreachableError struct {
	Path string // the first folder or file it cannot reach
	UID  int    // the sandbox identity
}

// Error says which path and why, with the fix.
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("%v: %s is not readable by %s the identity the sandbox runs as (make it and its parent folders world-readable, e.g. chmod o+rx)", stageconfig.ErrBadConfig, e.Path, identity.Name(e.UID))
}

// Unwrap returns stageconfig.ErrBadConfig.
func (e *UnreachableError) Unwrap() error { return stageconfig.ErrBadConfig }
