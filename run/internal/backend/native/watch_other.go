//go:build darwin

package native

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"github.com/skill-sandbox/skill-sandbox/run/internal/cgroup"
	"github.com/skill-sandbox/skill-sandbox/run/internal/watch"
)

// planWatch: the watch reads /proc, which macOS does not have, and the
// layer is not among the macOS ones (backend/layers_darwin.go). A kept work folder
// is bounded per file only there.
func planWatch(*backend.Spec, *started, *cgroup.Cgroup) watch.Plan { return watch.Plan{} }
