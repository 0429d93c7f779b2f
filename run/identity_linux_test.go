package run

import (
	"github.com/skill-sandbox/skill-sandbox/internal/identity"
)

// sandboxIDWords is what an error names a root caller's sandbox identity
// by: its own id's description, or uid 65534 in a nested namespace.
func sandboxIDWords() string {
	if identity.OwnRunIDs() {
		return "the run's own host id"
	}
	return "uid 65534"
}
