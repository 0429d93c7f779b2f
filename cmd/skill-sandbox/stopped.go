package main

import (
	"fmt"
	"os"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run"
)

// stopReason returns the one line that says why a run ended other than by
// the script's own exit, and how to allow more where a limit stopped it;
// "" when the script exited by itself or the reason was printed already
// (a refusal's error, --max-output, a watch's limit).
func stopReason(res *run.Result, runErr error, sig os.Signal, memoryMB, maxFileMB int) string {
	switch {
	case runErr != nil || res.OutputExceeded != "" || res.LimitExceeded != "":
		return ""
	case res.Canceled && sig != nil:
		return fmt.Sprintf("the run was stopped by %s sent to skill-sandbox (exit %d)", signalName(sig), exitCode(res, runErr, sig))
	case res.Canceled:
		return "the run was canceled before the script ended"
	case res.TimedOut:
		return fmt.Sprintf("the script passed its time limit of %v and was stopped (exit %d); --timeout raises it (policy: [resources] timeout)", res.Timeout, exitTimeout)
	case res.OOMKills > 0 && res.Signal != "":
		return fmt.Sprintf("the script used more than its memory limit of %d MiB and the kernel killed it (exit %d); --memory raises it (policy: [resources] memory_mb)", memoryMB, exitCode(res, nil, nil))
	case res.Signal == "SIGXCPU":
		return fmt.Sprintf("a process of the script used up its CPU time limit and was stopped (exit %d); --cpu-time raises it (policy: [resources] cpu_seconds)", exitCode(res, nil, nil))
	case res.Signal == "SIGXFSZ":
		return fmt.Sprintf("the script wrote a file past the size limit of %d MiB and was stopped (exit %d); --max-file-size raises it (policy: [resources] max_file_mb)", maxFileMB, exitCode(res, nil, nil))
	case res.Signal != "":
		return fmt.Sprintf("the script was killed by %s (exit %d)", res.Signal, exitCode(res, nil, nil))
	case !res.Started:
		return "the script did not start"
	}
	return ""
}

// oomNote returns a warning when the kernel killed some of the script's
// processes for the memory limit while the script itself went on to exit
// with a status of its own; "" otherwise.
func oomNote(res *run.Result, memoryMB int) string {
	if res.OOMKills == 0 || res.Signal != "" {
		return ""
	}
	return fmt.Sprintf("skill-sandbox: warning: the kernel killed %d of the script's processes for passing the memory limit of %d MiB; --memory raises it", res.OOMKills, memoryMB)
}

// signalName names a caught signal as the record does ("SIGINT").
func signalName(sig os.Signal) string {
	if n, ok := sig.(syscall.Signal); ok {
		switch n {
		case syscall.SIGINT:
			return "SIGINT"
		case syscall.SIGTERM:
			return "SIGTERM"
		case syscall.SIGHUP:
			return "SIGHUP"
		}
	}
	return sig.String()
}
