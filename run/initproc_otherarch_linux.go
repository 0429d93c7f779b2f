//go:build linux && !amd64 && !arm64

package run

import (
	"bufio"
	"fmt"
	"io"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The init process (run/internal/initproc) is written for amd64 and
// arm64: on other architectures a run is refused with ErrUnsupported.

// initProgram is nothing here: there is no program to compile.
type initProgram struct{}

// startCompile has nothing to compile for.
func startCompile(*launchState, bool) {}

// startInit refuses: there is no init process for this architecture.
func startInit(*launchSpec, *launchState) (*started, error) {
	return nil, fmt.Errorf("%w: %v", ErrUnsupported, initproc.ErrUnsupported)
}

// startPooledProcess refuses, as startInit does.
func startPooledProcess(*launchSpec, poolShape, io.Writer) (*posix.Process, initProgram, string, error) {
	return nil, initProgram{}, "", fmt.Errorf("%w: %v", ErrUnsupported, initproc.ErrUnsupported)
}

// stageReady is never reached: startPooledProcess refused.
func stageReady(io.Reader) bool { return false }

// sendStage, readStageReport and readStageAfter are never reached:
// startInit refused.
func sendStage(io.Writer, *launchState) error { return initproc.ErrUnsupported }

func readStageReport(*bufio.Reader, *launchState) (stageconfig.Report, bool, error) {
	return stageconfig.Report{}, false, initproc.ErrUnsupported
}

func readStageAfter(*bufio.Reader, *launchState) (bool, string, error) {
	return false, "", initproc.ErrUnsupported
}

// initName is the name of a run's init process (see initproc_linux.go).
func initName(id string) string {
	if len(id) > 12 {
		id = id[:12]
	}
	return "ss-" + id
}
