package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// catchSignals starts catching SIGINT and SIGTERM and ignores SIGPIPE.
// main calls it before anything else in run, audit and mcp, so that a
// signal arriving right after start cannot kill skill-sandbox before the
// record is written: the signal waits in the returned channel until
// interruptContext takes it. The window that is left is the Go runtime's
// own start-up, before main runs.
//
// SIGPIPE is ignored rather than caught, so that a closed stdout or stderr
// pipe (| head) gives write errors instead of killing skill-sandbox before
// its record is written: the effect is the same, and ignoring costs one
// sigaction where catching costs a round trip to the runtime's signal
// thread (about 0.07 ms of each start). An ignored signal stays ignored
// across execve, but the only program run or mcp starts is the init
// process, this Go binary, which installs its own SIGPIPE handler at start:
// the script gets the default action back when it is executed (checked:
// SigIgn of a script is the same as before).
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Ignore(syscall.SIGPIPE)
	return sigs
}

// releaseSignals gives a command that writes no record (validate, list,
// version) the default handling back: a SIGINT or SIGTERM caught before
// is raised again, so it ends the process as it would have.
func releaseSignals(sigs chan os.Signal) {
	stopSignals(sigs)
	for {
		select {
		case s := <-sigs:
			signal.Reset(s)
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				self.Signal(s)
			}
		default:
			return
		}
	}
}

// stopSignals undoes catchSignals: SIGINT and SIGTERM are no longer
// delivered to sigs, and SIGPIPE gets the runtime's own handling back.
func stopSignals(sigs chan os.Signal) {
	signal.Stop(sigs)
	// signal.Reset does not undo Ignore; a Notify clears it and the Stop
	// that follows leaves the runtime's handler in place.
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	signal.Stop(pipe)
}

// interruptContext returns a context canceled by SIGINT or SIGTERM (which
// makes Run kill the sandbox), a function that reports the first such
// signal (nil if none came), and a stop function. sigs is the channel of
// catchSignals; a signal already waiting in it cancels the context at
// once. With sigs nil, interruptContext catches the signals itself and
// stop gives them back (stopSignals). A channel given by main stays
// registered: the process exits right after the command, and giving the
// signals back would cost a round trip to the runtime's signal thread per
// signal (about 0.15 ms in all) for nothing. Caught signals are reset to
// their defaults in the script by execve.
func interruptContext(sigs chan os.Signal) (context.Context, func() os.Signal, func()) {
	own := sigs == nil
	if own {
		sigs = catchSignals()
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var first os.Signal
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				mu.Lock()
				if first == nil {
					first = s
				}
				mu.Unlock()
				cancel()
			case <-done:
				return
			}
		}
	}()
	interrupted := func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	stop := func() {
		if own {
			stopSignals(sigs)
		}
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}
