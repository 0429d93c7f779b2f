//go:build !linux

package grants

import (
	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// DenyAliases finds nothing here: the deny list is checked by path only
// (see alias_linux.go).
type DenyAliases struct{}

// FindDenyAliases finds nothing here.
func FindDenyAliases(*denylist.List, map[string]bool) DenyAliases { return DenyAliases{} }

// Check has no other mount to check.
func (DenyAliases) Check(string, string, bool, map[string]bool) error { return nil }

// Inside finds nothing.
func (DenyAliases) Inside(string) []string { return nil }

// PlanBelow knows of no mount.
func (DenyAliases) PlanBelow([]stageconfig.GrantMount) error { return nil }

// CheckSubmounts has no mount table to check.
func (DenyAliases) CheckSubmounts(_, _, _ []string) error { return nil }

// CheckSkill has no mount table to check.
func (DenyAliases) CheckSkill(string) error { return nil }

// CheckSkillMounts has no mount table to check.
func CheckSkillMounts(string) error { return nil }
