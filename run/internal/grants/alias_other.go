//go:build !linux

package grants

import "github.com/skill-sandbox/skill-sandbox/internal/denylist"

// Aliases finds nothing here: the deny list is checked by path only
// (see alias_linux.go).
type Aliases struct{}

// FindAliases finds nothing here.
func FindAliases(*denylist.List, map[string]bool) Aliases { return Aliases{} }

// Check has no other mount to check.
func (Aliases) Check(string, string, bool, map[string]bool) error { return nil }

// Inside finds nothing.
func (Aliases) Inside(string) []string { return nil }

// CheckSubmounts has no mount table to check.
func (Aliases) CheckSubmounts(_, _, _ []string) error { return nil }
