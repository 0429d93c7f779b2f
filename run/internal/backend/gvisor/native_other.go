//go:build !linux || (!amd64 && !arm64)

package gvisor

import (
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
)

// etcMaskOf and etcFileOf stand for initplan's types where there is no
// native backend.
type (
	etcMaskOf = struct {
		Path   string
		Folder bool
	}
	etcFileOf = struct{ Path, Data string }
)

// etcView is empty where there is no native backend; Check refuses the
// run (seccompSection).
func etcView(*backend.Spec) ([]etcMaskOf, []etcFileOf) { return nil, nil }

// seccompSection is nil where the native backend has no filter: Check
// refuses the run.
func seccompSection(*backend.Spec) *ociSeccomp { return nil }
