//go:build linux && !amd64 && !arm64

package native

import (
	"bufio"
	"fmt"
	"github.com/skill-sandbox/skill-sandbox/run/internal/backend"
	"io"

	"github.com/skill-sandbox/skill-sandbox/run/internal/backend/posix"
	"github.com/skill-sandbox/skill-sandbox/run/internal/initproc"
	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// The init process (run/internal/initproc) is written for amd64 and
// arm64: on other architectures a run is refused with backend.ErrUnsupported.

// initProgram is nothing here: there is no program to compile.
type initProgram struct{}

// startCompile has nothing to compile for.
func startCompile(*Launch, bool) {}

// startInit refuses: there is no init process for this architecture.
func startInit(*launchSpec, *Launch) (*started, error) {
	return nil, fmt.Errorf("%w: %v", backend.ErrUnsupported, initproc.ErrUnsupported)
}

// startPooledProcess refuses, as startInit does.
func startPooledProcess(*launchSpec, Shape, io.Writer) (*posix.Process, initProgram, string, error) {
	return nil, initProgram{}, "", fmt.Errorf("%w: %v", backend.ErrUnsupported, initproc.ErrUnsupported)
}

// stageReady is never reached: startPooledProcess refused.
func stageReady(io.Reader) bool { return false }

// sendStage, readStageReport and readStageAfter are never reached:
// startInit refused.
func sendStage(io.Writer, *Launch) error { return initproc.ErrUnsupported }

func readStageReport(*bufio.Reader, *Launch) (stageconfig.Report, bool, error) {
	return stageconfig.Report{}, false, initproc.ErrUnsupported
}

func readStageAfter(*bufio.Reader, *Launch) (bool, string, error) {
	return false, "", initproc.ErrUnsupported
}

// InitName is the name of a run's init process (see initproc_linux.go).
func InitName(id string) string {
	if len(id) > 12 {
		id = id[:12]
	}
	return "ss-" + id
}
