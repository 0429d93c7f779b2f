//go:build !linux

package run

import "github.com/skill-sandbox/skill-sandbox/internal/denylist"

// denyAlias finds nothing here: the deny list is checked by path only
// (see grants_alias_linux.go).
type denyAlias struct{}

func denyAliases(*denylist.List, map[string]bool) denyAlias { return denyAlias{} }

func (denyAlias) check(string, string, bool, map[string]bool) error { return nil }

func (denyAlias) inside(string) []string { return nil }

func (denyAlias) checkSubmounts(_, _, _ []string) error { return nil }
