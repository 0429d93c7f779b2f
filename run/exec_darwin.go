//go:build darwin

package run

import (
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe is the binary re-executed as the init stage.
func selfExe() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// startInit starts the init stage in its own session and process group.
// This platform has none of the Linux namespaces; they are reported
// missing, and the baseline (environment, working directory, time limit,
// process-group kill, resource limits) still applies.
func startInit(newCmd func() *exec.Cmd, p *plan) (*started, error) {
	st := &started{}
	for _, l := range p.wantNS {
		st.missing = append(st.missing, Missing{Layer: l, Reason: "not available on " + runtime.GOOS})
	}
	cmd := newCmd()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(p.hostUID), Gid: uint32(p.hostGID), Groups: []uint32{}}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	st.cmd = cmd
	return st, nil
}

// killSandbox kills the init stage and its process group. Without a PID
// namespace or a subreaper, a descendant that started its own session
// escapes; this is a documented limit of this platform.
func killSandbox(proc *os.Process, _ bool) {
	proc.Kill()
	unix.Kill(-proc.Pid, unix.SIGKILL)
}

// sandboxIdentity returns the host uid and gid the script runs as: the
// caller's, or nobody's when the caller is root.
func sandboxIdentity() (int, int) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid()
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		return 0xfffffffe, 0xfffffffe
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// countProcs is not needed here: RLIMIT_NPROC is not applied (see
// nprocIsPerRun).
func countProcs(int) int { return 0 }

// explainMissing has nothing to add here: "not available on darwin" is
// the whole cause.
func explainMissing(missing []Missing) []Missing { return missing }
