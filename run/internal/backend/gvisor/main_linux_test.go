//go:build linux

package gvisor

import (
	"os"
	"testing"
)

// TestMain lets the test binary be the waiting process of a pre-started
// sandbox (and the relay), as a program's main must.
func TestMain(m *testing.M) {
	ExecRelayIfRequested()
	os.Exit(m.Run())
}
