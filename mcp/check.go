package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// Check refuses a config under which every run would be refused, so that
// such a server does not start and answer ping as if it were healthy. It
// checks the grants of a run_command run (the workspace writable by the
// identity the sandbox runs as, the skills folders readable) with
// run.Sandbox.CheckGrants, the run package's own judgement, so the check
// follows when what a run accepts changes; then it starts one sandbox as
// run_command would and runs true in it, which finds the kernel layers
// that are missing (refused unless the operator allowed degraded runs).
// The error names the reason and the fix as the run package words them.
// Other failures of that run (a host under load, say) are only logged:
// they need not refuse the next run. A gvisor backend without runsc (and
// no fallback allowed) refuses the config too.
func (s *Server) Check(ctx context.Context) error {
	c := s.newRunCall(callInfo{}, ToolRunCommand)
	sb, err := s.commandSandbox(c, nil, nil)
	if err != nil {
		return fmt.Errorf("every run would be refused: %w", err)
	}
	if _, err := sb.CheckGrants(); err != nil {
		return fmt.Errorf("every run would be refused: %w", err)
	}
	sb.Pool = nil
	res, err := sb.Command(ctx, []string{"true"})
	res.WaitCleanup()
	switch {
	case errors.Is(err, run.ErrIsolation), errors.Is(err, run.ErrBadConfig):
		return fmt.Errorf("every run would be refused: %w", err)
	case errors.Is(err, run.ErrUnsupported) && sb.Backend == run.BackendGVisor:
		// No runsc here (without an allowed fallback): every run on
		// the gvisor backend would be refused.
		return fmt.Errorf("every run on the gvisor backend would be refused: %w", err)
	case err != nil:
		s.logf("the start check's run of true failed: %v", err)
	}
	return nil
}
