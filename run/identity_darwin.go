package run

import "github.com/skill-sandbox/skill-sandbox/internal/identity"

// sandboxIdentity returns the host uid and gid the script runs as
// (identity.Sandbox).
func sandboxIdentity() (int, int) { return identity.Sandbox() }
