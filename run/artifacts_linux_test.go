package run

import (
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
)

// TestRestrictedValuesAgree: the kind and action of a narrowed entry, set
// by the artifacts package's sweep, are run's.
func TestRestrictedValuesAgree(t *testing.T) {
	if neutralisedWritable != artifacts.Writable || NeutralisedRestricted != artifacts.Restricted {
		t.Errorf("run says %q/%q, the artifacts package %q/%q", neutralisedWritable, NeutralisedRestricted, artifacts.Writable, artifacts.Restricted)
	}
}
