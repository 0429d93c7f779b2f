package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reapArg is the hidden first argument that makes the bench binary the CPU
// accounting wrapper of one command (see treeCPU).
const reapArg = "-internal-reap-cpu"

// treeCPU runs argv under a copy of the bench binary acting as a child
// subreaper and returns the CPU time (user + system) of every process the
// command started. A plain wait cannot be used: bubblewrap's outer process
// exits without reaping its pid-1 child, so the CPU of the program it ran
// would be charged to nobody; under a subreaper every orphan is reparented
// to the wrapper and reaped there, so RUSAGE_CHILDREN covers the whole tree.
func treeCPU(argv []string) (time.Duration, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(self, append([]string{reapArg}, argv...)...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(errBuf.String()))
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(ns), nil
}

// reapMain is the wrapper: it becomes a child subreaper, runs argv, reaps
// every descendant and prints their CPU time in nanoseconds.
func reapMain(argv []string) int {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintln(os.Stderr, "bench: PR_SET_CHILD_SUBREAPER:", e)
		return 1
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{Files: []*os.File{devnull, devnull, devnull}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	status := -1
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		if pid == p.Pid {
			status = ws.ExitStatus()
		}
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if status != 0 {
		fmt.Fprintf(os.Stderr, "bench: %s exited with status %d\n", argv[0], status)
		return 1
	}
	fmt.Println(ru.Utime.Nano() + ru.Stime.Nano())
	return 0
}
