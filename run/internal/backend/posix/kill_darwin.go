package posix

import (
	"errors"
	"syscall"

	"github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

	"golang.org/x/sys/unix"
)

// KillAll kills the run's processes. Without a PID namespace nothing
// ends the tree with its first process, so the tree is found by parent
// chain (processTable, Descendants): the init process (or the script that
// replaced it) is stopped, then every descendant, rescanning until no new
// one appears (a stopped process cannot fork), then all are killed along
// with the process group. The sweep runs only while the first process is
// not yet reaped: after that its pid may name another program. A
// descendant that was orphaned before the sweep (a daemon that left the
// session) is out of reach; docs/platforms.md says so.
func KillAll(c *Process, _ bool) {
	proc := c.proc
	if proc.Signal(syscall.Signal(0)) == nil {
		proc.Signal(syscall.SIGSTOP)
		seen := map[int]bool{}
		for round := 0; round < 16; round++ {
			table, err := processTable()
			if err != nil {
				break
			}
			fresh := 0
			for _, pid := range Descendants(table, proc.Pid) {
				if !seen[pid] {
					seen[pid] = true
					fresh++
					unix.Kill(pid, unix.SIGSTOP)
				}
			}
			if fresh == 0 {
				break
			}
		}
		for pid := range seen {
			unix.Kill(pid, unix.SIGKILL)
		}
	}
	proc.Kill()
	unix.Kill(-proc.Pid, unix.SIGKILL)
}

// processTable maps every process of the host to its parent
// (sysctl kern.proc.all).
func processTable() (map[int]int, error) {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	if len(procs) == 0 {
		return nil, errors.New("kern.proc.all listed no process")
	}
	table := make(map[int]int, len(procs))
	for _, kp := range procs {
		table[int(kp.Proc.P_pid)] = int(kp.Eproc.Ppid)
	}
	return table, nil
}

// CountProcs counts the host processes whose real uid is uid: macOS's
// RLIMIT_NPROC counts every process of the user, so launch adds this to
// MaxProcs (as Linux does without a user namespace), and the run can start
// MaxProcs more. 0 when the table cannot be read.
func CountProcs(uid int) int {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return 0
	}
	n := 0
	for _, kp := range procs {
		if int(kp.Eproc.Pcred.P_ruid) == uid {
			n++
		}
	}
	return n
}

// ExplainMissing has nothing to add here: each reason is the whole cause.
func ExplainMissing(missing []stageconfig.Missing) []stageconfig.Missing { return missing }

// ExplainIncomplete is the Linux explanation of a refused /proc: macOS
// mounts none.
func ExplainIncomplete(incomplete []stageconfig.Missing) []stageconfig.Missing { return incomplete }
