package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// supervisorPeakKB runs bin with args and returns the peak resident set
// size in KiB of that process alone: its VmHWM, read from /proc while it
// is stopped at exit. The rusage of the exited process cannot be used:
// ru_maxrss of a waited-for child is the largest of its own and every
// descendant it waited for, so it would report python3's peak, not the
// supervisor's. The process is traced (PTRACE_O_TRACEEXIT) only to stop it
// once it has exited its last instruction but before its memory is gone;
// its own children are not traced.
func supervisorPeakKB(bin string, args []string) (int64, error) {
	// Every ptrace request must come from the thread that started it.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd := exec.Command(bin, args...)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, devnull
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer cmd.Process.Release() // reaped below with wait4, not cmd.Wait
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil || !ws.Stopped() {
		cmd.Process.Kill()
		return 0, fmt.Errorf("tracing %s: no stop at exec (%v)", bin, err)
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACEEXIT); err != nil {
		cmd.Process.Kill()
		return 0, fmt.Errorf("tracing %s: %v", bin, err)
	}
	var peak int64
	sig := 0
	for {
		if err := syscall.PtraceCont(pid, sig); err != nil {
			cmd.Process.Kill()
			return 0, fmt.Errorf("tracing %s: %v", bin, err)
		}
		if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
			return 0, err
		}
		switch {
		case ws.Exited():
			if ws.ExitStatus() != 0 {
				return peak, fmt.Errorf("%s exited with status %d", bin, ws.ExitStatus())
			}
			if peak == 0 {
				return 0, fmt.Errorf("%s: no VmHWM read at exit", bin)
			}
			return peak, nil
		case ws.Signaled():
			return peak, fmt.Errorf("%s killed by %v", bin, ws.Signal())
		case ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP && ws.TrapCause() == syscall.PTRACE_EVENT_EXIT:
			peak, sig = vmHWM(pid), 0
		case ws.Stopped() && ws.StopSignal() == syscall.SIGTRAP:
			sig = 0
		case ws.Stopped():
			sig = int(ws.StopSignal()) // a signal for the process: deliver it
		}
	}
}

// vmHWM returns the VmHWM of pid in KiB, or 0.
func vmHWM(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}
