package native

import "github.com/skill-sandbox/skill-sandbox/internal/identity"

// rootKept is identity.RootKept; macOS has its own in exec_darwin.go.
func rootKept(uid int) string { return identity.RootKept(uid) }
