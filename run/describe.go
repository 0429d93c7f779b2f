package run

import "os"

// Describe prepares a run of script with args as Run does (validation,
// interpreter, grants, work folder, limits) and returns, without starting
// anything, the listing of what the init process would set up for it:
// one line a step (a mount, a Landlock rule, the seccomp filter, a
// limit), the layer it builds first and the condition it runs under, as
//
//	mountns       rbind /usr /usr
//	rlimits       rlimit NOFILE 1024
//	landlock      landlock rw /tmp  [if mountns applied]
//
// It lists the run planned with every layer the host is asked for (a
// layer the host turns out not to have would change what runs); the
// steps that come from the host's own files (its system folders, its
// /etc) are one line per group of them. What prepare made for it (a
// work folder, missing write folders) is removed before it returns. It
// is Linux's (amd64 and arm64): elsewhere it returns ErrUnsupported.
//
// The Result is the prepared run's, as far as prepare got (the skill,
// the interpreter, the grants); its script never started. Errors are
// Run's refusals before the start.
func (s *Sandbox) Describe(script string, args []string) (*Result, []string, error) {
	res := &Result{ExitCode: -1, Script: script}
	defer unmakeRefused(res) // after cleanup, as for a refused run
	l, cleanup, err := s.prepare(script, args, nil, res)
	if cleanup != nil {
		defer cleanup()
	}
	if res.WorkDir != "" {
		// A kept work folder is made, empty, by prepare: nothing ran to
		// keep in it.
		defer func() { os.Remove(res.WorkDir); res.WorkDir = "" }()
	}
	if err != nil {
		return res, nil, err
	}
	lines, err := l.Describe()
	return res, lines, err
}
