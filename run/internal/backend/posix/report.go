//go:build linux || darwin

package posix

import (
	"io"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"
)

// ReadStatusReport waits for the init process's report of the script's
// status and for the end of the pipe, which the init process closes right
// after writing it, once every other process of the run is gone. It
// returns what it read and whether that is exactly one report. A process
// of the run that could write to the pipe (possible only when the caller
// disabled layers) wrote before the init process's report, as it was dead
// by then, so a forged report makes the pipe hold more than one and is
// not trusted; it cannot end the read early either. When the init process
// is killed first (timeout, cancellation past ReapGrace), the pipe ends
// before a report.
func ReadStatusReport(r io.Reader) ([]byte, bool) {
	msg, err := io.ReadAll(io.LimitReader(r, 2*stageconfig.ReaperReportLen))
	return msg, err == nil && len(msg) == stageconfig.ReaperReportLen
}
