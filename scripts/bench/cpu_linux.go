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

// reapArg is the hidden first argument that makes the bench binary the
// reaping wrapper of one command (see runTree).
const reapArg = "-internal-reap-cpu"

// fd3Arg, first in the wrapper's argv, opens the file named next as the
// command's fd 3 (bwrap --seccomp 3 reads its filter there).
const fd3Arg = "-fd3"

// treeRun is what runTree measured of one run of a command.
type treeRun struct {
	cpu      time.Duration // user + system of every process of the tree
	returned time.Duration // from the start until the command exited
	gone     time.Duration // from the start until its last process was reaped
}

// runTree runs argv under a copy of the bench binary acting as a child
// subreaper and measures the whole process tree the command started. A
// plain wait cannot be used: bubblewrap's outer process exits without
// reaping its pid-1 child, so the CPU of the program it ran would be
// charged to nobody, and the sandbox's teardown (its pid 1's exit, which
// takes down its namespaces) would go on after the command returned.
// Under a subreaper every orphan is reparented to the wrapper and reaped
// there: RUSAGE_CHILDREN covers the whole tree, and the last reap marks
// when the sandbox is gone. The wrapper's own start is in neither time.
func runTree(argv []string) (treeRun, error) {
	self, err := os.Executable()
	if err != nil {
		return treeRun{}, err
	}
	cmd := exec.Command(self, append([]string{reapArg}, argv...)...)
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	if err != nil {
		return treeRun{}, fmt.Errorf("%v: %s", err, strings.TrimSpace(errBuf.String()))
	}
	var ns [3]int64
	f := strings.Fields(string(out))
	if len(f) != len(ns) {
		return treeRun{}, fmt.Errorf("the reaping wrapper printed %q", out)
	}
	for i := range ns {
		if ns[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return treeRun{}, err
		}
	}
	return treeRun{cpu: time.Duration(ns[0]), returned: time.Duration(ns[1]), gone: time.Duration(ns[2])}, nil
}

// reapMain is the wrapper: it becomes a child subreaper, runs argv, reaps
// every descendant and prints, in nanoseconds, their CPU time, the time
// until argv's process exited and the time until the last was reaped.
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
	files := []*os.File{devnull, devnull, devnull}
	if len(argv) > 2 && argv[0] == fd3Arg {
		f, err := os.Open(argv[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		files, argv = append(files, f), argv[2:]
	}
	start := time.Now()
	p, err := os.StartProcess(argv[0], argv, &os.ProcAttr{Files: files})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	status := -1
	var returned time.Duration
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
			status, returned = ws.ExitStatus(), time.Since(start)
		}
	}
	gone := time.Since(start)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	if status != 0 {
		fmt.Fprintf(os.Stderr, "bench: %s exited with status %d\n", argv[0], status)
		return 1
	}
	fmt.Println(ru.Utime.Nano()+ru.Stime.Nano(), returned.Nanoseconds(), gone.Nanoseconds())
	return 0
}
