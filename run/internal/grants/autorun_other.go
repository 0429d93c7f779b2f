//go:build !linux

package grants

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// AutorunEntry is an existing auto-run entry of a write grant (see
// autorun_linux.go).
type AutorunEntry struct {
	stageconfig.GrantMount
	Mount bool
}

// FindAutorun: read-only parts of write grants are kept by a Linux mount
// namespace only.
func FindAutorun(string, int) ([]AutorunEntry, error) { return nil, nil }
