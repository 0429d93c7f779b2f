package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// catchSignals starts catching SIGINT, SIGTERM and SIGPIPE. main calls it
// before anything else, so that a signal arriving right after start cannot
// kill skill-sandbox before run or audit has written its record: the
// signal waits in the returned channel until interruptContext (run, audit)
// or releaseSignals (every other command) takes it. The window that is
// left is the Go runtime's own start-up, before main runs.
func catchSignals() chan os.Signal {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGPIPE)
	return sigs
}

// releaseSignals gives the commands that write no record (validate, list,
// version) the default handling back: a SIGINT or SIGTERM caught before
// is raised again, so it ends the process as it would have.
func releaseSignals(sigs chan os.Signal) {
	signal.Stop(sigs)
	for {
		select {
		case s := <-sigs:
			if s == syscall.SIGPIPE {
				continue
			}
			signal.Reset(s)
			if self, err := os.FindProcess(os.Getpid()); err == nil {
				self.Signal(s)
			}
		default:
			return
		}
	}
}

// interruptContext returns a context canceled by SIGINT or SIGTERM (which
// makes Run kill the sandbox), a function that reports the first such
// signal (nil if none came), and a stop function that restores the default
// handling. sigs is the channel of catchSignals; a signal already waiting
// in it cancels the context at once. SIGPIPE is caught as well, so that a
// closed stdout or stderr pipe (| head) gives write errors instead of
// killing skill-sandbox before its record is written. Caught signals are
// reset to their defaults in the script by execve.
func interruptContext(sigs chan os.Signal) (context.Context, func() os.Signal, func()) {
	if sigs == nil {
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
				if s == syscall.SIGPIPE {
					continue
				}
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
		signal.Stop(sigs)
		close(done)
		cancel()
	}
	return ctx, interrupted, stop
}
