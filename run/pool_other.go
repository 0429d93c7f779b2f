//go:build !linux

package run

import (
	"time"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// pooledInit is never started on this platform.
type pooledInit struct{ born time.Time }

// startPooled fails: pooled init processes need Linux namespaces.
func startPooled(poolShape) (*pooledInit, error) {
	return nil, errNoUserNS
}

func (*pooledInit) alive() bool { return false }
func (*pooledInit) kill()       {}

// canHandOver: nothing is ever handed over here.
func canHandOver(*backend.Spec) bool { return false }
