//go:build linux || darwin

package run

import (
	"os"

	"github.com/skill-sandbox/skill-sandbox/run/internal/walk"

	"golang.org/x/sys/unix"
)

// walkStep and its values name walk.Step for the walks in this package
// (the sweep, the autorun grants).
type walkStep = walk.Step

// Steps of walkNoFollowAt.
const (
	walkOn   = walk.On
	walkSkip = walk.Skip
	walkStop = walk.Stop
)

// walkNoFollow is walk.NoFollow.
func walkNoFollow(root string, visit func(p string, st *unix.Stat_t) bool) error {
	return walk.NoFollow(root, visit)
}

// walkNoFollowAt is walk.NoFollowAt.
func walkNoFollowAt(root string, visit func(parent int, name, p string, st *unix.Stat_t) walkStep) error {
	return walk.NoFollowAt(root, visit)
}

// openNoFollow is walk.OpenNoFollow.
func openNoFollow(p string) (*os.File, error) { return walk.OpenNoFollow(p) }

// openParentNoFollow is walk.OpenParent.
func openParentNoFollow(p string) (int, string, error) { return walk.OpenParent(p) }
