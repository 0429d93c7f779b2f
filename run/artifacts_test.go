package run

import (
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run/internal/artifacts"
)

// TestArtifactValuesAgree: run's exported bounds and actions are stated
// as literals (go doc shows them), and listing copies the artifacts
// package's strings as they are: both must say the same.
func TestArtifactValuesAgree(t *testing.T) {
	for _, c := range []struct {
		name     string
		run, pkg any
	}{
		{"MaxArtifacts", MaxArtifacts, artifacts.MaxFiles},
		{"MaxArtifactBytes", MaxArtifactBytes, artifacts.MaxBytes},
		{"ArtifactCreated", ArtifactCreated, artifacts.Created},
		{"ArtifactModified", ArtifactModified, artifacts.Modified},
		{"ArtifactDeleted", ArtifactDeleted, artifacts.Deleted},
		{"NeutralisedRemoved", NeutralisedRemoved, artifacts.Removed},
		{"NeutralisedQuarantined", NeutralisedQuarantined, artifacts.Quarantined},
		{"NeutralisedFailed", NeutralisedFailed, artifacts.Failed},
	} {
		if c.run != c.pkg {
			t.Errorf("%s = %v, the artifacts package's %v", c.name, c.run, c.pkg)
		}
	}
}
