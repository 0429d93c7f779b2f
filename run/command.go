package run

import (
	"context"
	"fmt"
)

// Command runs argv in the sandbox described by s, with the same layers,
// limits, environment and work folder as Run, but with no script: argv[0]
// is a program (absolute, or looked up on the sandbox's fixed PATH) and
// the rest its arguments. It is for callers that run command lines of
// their own, such as an agent's glue code around skills ("bash -c ...").
//
// SkillDir names the folder the command may read (read-only, as a skill
// folder in Run); it need not be a skill and is not validated. The working
// directory is the per-run work folder (UseWorkDir is implied) unless Cwd
// is set; grants and artifacts work as in Run. Result.Script
// is empty and Result.Interpreter is the resolved argv[0]. Errors and
// cancellation behave as in Run; a missing program wraps ErrNoInterpreter
// and an empty argv ErrBadConfig.
func (s *Sandbox) Command(ctx context.Context, argv []string) (*Result, error) {
	res := &Result{ExitCode: -1}
	if len(argv) == 0 || argv[0] == "" {
		return res, fmt.Errorf("%w: empty command", ErrBadConfig)
	}
	return res, s.start(ctx, "", nil, argv, res)
}
