package policy

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// SandboxFor returns the sandbox of one run of a long-lived server (the
// MCP server, skill-sandbox serve) in dir: template with the policy
// resolved for dir applied (flags, the operator policy op, may be nil,
// and, when request is set, the skill's request file read from
// requestDir, dir itself or a verified copy of it, which may only lower
// limits). A request for more than is granted refuses the run, wrapping
// run.ErrBadConfig. The template's RequireIsolation counts as the
// command line's --require-isolation.
func SandboxFor(template run.Sandbox, flags Flags, op *Policy, dir, requestDir string, request bool) (run.Sandbox, error) {
	sb := template
	var req *Policy
	if request {
		var err error
		if req, err = LoadRequest(requestDir); err != nil {
			return sb, fmt.Errorf("%w: %v", run.ErrBadConfig, err)
		}
	}
	// Resolve makes --require-isolation win over allow_degraded.
	flags.RequireIsolation = flags.RequireIsolation || sb.RequireIsolation
	resolved, err := Resolve(flags, op, req, dir)
	if err != nil {
		return sb, fmt.Errorf("%w: policy: %v", run.ErrBadConfig, err)
	}
	resolved.Apply(&sb, os.LookupEnv)
	return sb, nil
}

// CallTimeout checks the time limit a call asks for, in seconds (nil:
// none), against the run's limit: a call may shorten it, never lengthen
// it. It returns the limit the run gets.
func CallTimeout(sec *float64, limit time.Duration) (time.Duration, error) {
	if sec == nil {
		return limit, nil
	}
	if math.IsNaN(*sec) || *sec <= 0 {
		return 0, fmt.Errorf("timeout_seconds must be positive")
	}
	if *sec > limit.Seconds() {
		return 0, fmt.Errorf("timeout_seconds %g exceeds the server's limit of %g", *sec, limit.Seconds())
	}
	return max(time.Duration(*sec*float64(time.Second)), time.Millisecond), nil
}
