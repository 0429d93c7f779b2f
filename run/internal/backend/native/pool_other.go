//go:build !linux

package native

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/identity"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// Pooled is never started on this platform.
type Pooled struct{ born time.Time }

// startPooled fails: pooled init processes need Linux namespaces.
func startPooled(Shape) (*Pooled, error) {
	return nil, errNoUserNS
}

func (*Pooled) alive() bool { return false }
func (*Pooled) kill()       {}

// canHandOver: nothing is ever handed over here.
func canHandOver(*backend.Spec) bool { return false }

// TakeID: pooled init processes have no ids here.
func (*Pooled) TakeID() *identity.RunID { return nil }

// Unreserve has nothing to put back here: pools hold no init processes.
func (*Pool) Unreserve(*Pooled, *identity.RunID) {}
