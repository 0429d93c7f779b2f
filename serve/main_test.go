package serve

import (
	"os"
	"testing"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// TestMain lets the test binary be the waiting process of a
// pre-started gVisor sandbox (run.Pool), as a program's main does.
func TestMain(m *testing.M) {
	run.ExecInitIfRequested()
	os.Exit(m.Run())
}
