package run

import (
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/internal/denylist"
)

// The deny list (DefaultDenyPaths) as planGrants applies it: expanded for
// every home folder, and checked against each grant.

// checkGrantable refuses a grant of, or inside, a deny entry or a tree
// that is never granted.
func checkGrantable(p, flag string, deny *denylist.List, allowed map[string]bool) error {
	for _, n := range neverGranted() {
		if pathUnder(p, n) || p == n {
			return fmt.Errorf("%w: %s %s: %s is never granted (kernel interfaces, devices and sockets)", ErrBadConfig, flag, p, n)
		}
	}
	if allowed[p] {
		return nil
	}
	if d, _ := deny.EntryOf(p); d != "" {
		return fmt.Errorf("%w: %s %s: %s is on the deny list (credentials, keys, history); only a policy naming the path exactly can grant it", ErrBadConfig, flag, p, d)
	}
	return nil
}
