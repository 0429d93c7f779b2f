package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// report prints why the run stopped and what it left, and returns the
// exit status; interrupted tells the signal that interrupted the call.
func (c *call) report(res *run.Result, runErr error, sb *run.Sandbox, f *runFlags, interrupted func() os.Signal) int {
	stderr := c.stderr
	if res.OutputExceeded != "" {
		errorf(stderr, "%s passed --max-output (%d bytes): the rest was not shown and the run was stopped", res.OutputExceeded, f.maxOutput)
	}
	switch res.LimitExceeded {
	case run.LimitWorkDirBytes, run.LimitWorkDirInodes:
		errorf(stderr, "the work folder on the host disk passed --workdir-size (%d MiB, 64 inodes per MiB): the run was stopped", f.workdirMB)
	case run.LimitWriteBytes:
		errorf(stderr, "the --write folders grew by more than --write-size (%d MiB): the run was stopped", sb.WriteMB)
	case run.LimitMemory:
		errorf(stderr, "the run's processes passed --memory (%d MiB), which the watch holds (no cgroup, or gvisor): the run was stopped", res.MemoryLimitMB)
	}
	maxFileMB := sb.MaxFileMB
	if maxFileMB == 0 {
		maxFileMB = run.DefaultMaxFileMB
	}
	if why := stopReason(res, runErr, interrupted(), res.MemoryLimitMB, maxFileMB); why != "" {
		errorf(stderr, "%s", why)
	}
	if note := oomNote(res, res.MemoryLimitMB); note != "" {
		fmt.Fprintln(stderr, note)
	}
	if hint := nodeAddressSpaceHint(res, sb.MemoryMB); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	for _, d := range res.Grants.Created {
		fmt.Fprintf(stderr, "skill-sandbox: created --write folder %s\n", d)
	}
	code := exitCode(res, runErr, interrupted())
	if runErr != nil {
		errorf(stderr, "%v", runErr)
	}
	if res.WorkDir != "" {
		fmt.Fprintf(stderr, "skill-sandbox: work folder kept: %s\n", res.WorkDir)
	}
	return code
}

// exitCode maps the outcome of a run to the exit status of skill-sandbox.
func exitCode(res *run.Result, err error, sig os.Signal) int {
	canceled := res.Canceled || errors.Is(err, context.Canceled)
	switch {
	case sig != nil && canceled:
		if n, ok := sig.(syscall.Signal); ok {
			return exitSignal + int(n)
		}
		return exitSignal + int(syscall.SIGTERM)
	case err != nil:
		return exitRefused
	case res.TimedOut:
		return exitTimeout
	case res.Signal != "":
		if n := signalNumber(res.Signal); n > 0 {
			return exitSignal + n
		}
		return exitSignal + int(syscall.SIGKILL)
	case res.ExitCode < 0:
		return exitRefused
	default:
		return res.ExitCode
	}
}

// absPathOrEmpty is absPath, keeping "" as "".
func absPathOrEmpty(p string) string {
	if p == "" {
		return ""
	}
	return absPath(p)
}

// absPath returns p made absolute, or p itself if that fails.
func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// absPaths is absPath of each of ps; nil for none.
func absPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		out = append(out, absPath(p))
	}
	return out
}
