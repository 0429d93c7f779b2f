package gvisor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"
)

// poolArg0 is the waiting process of a pre-started sandbox (this
// program, bound read-only): the sandbox's first process, which reads
// its run's config from its stdin and executes the script in place.
const poolArg0 = "/.skill-sandbox-gvisor-pool"

// poolReady is the byte the waiting process writes to its stdout once
// it waits for its config: the supervisor reads it before the stdout is
// the script's.
const poolReady = 'R'

// poolGo is the byte the waiting process writes to its stdout once its
// run's work folder, working folder and limits are set, right before it
// executes the script: the supervisor reads it before the stdout is the
// script's, and a run without it did not start (backend.ErrStart).
const poolGo = 'G'

// poolFail reports why the waiting process could not run the script;
// its status.
func poolFail(err error) int {
	fmt.Fprintf(os.Stderr, "skill-sandbox: gvisor pre-started sandbox: %v\n", err)
	return 125
}

// poolWait is the waiting process: it tells the supervisor it is up,
// reads one config from stdin (nothing past it: the rest is the script's
// stdin), and executes the script with the config's arguments,
// environment, working folder and limits. Its status when that fails
// (125, the script not run).
func poolWait() int {
	if _, err := os.Stdout.Write([]byte{poolReady}); err != nil {
		return poolFail(err)
	}
	c, err := readPoolConfig(os.Stdin)
	if err != nil {
		return poolFail(err)
	}
	return poolExec(c)
}

// poolExec executes c's script in place of this process, under c's
// limits, which are set last: RLIMIT_AS binds what execve maps next, as
// in limitExec, and nothing is allocated between the two system calls.
func poolExec(c *poolConfig) int {
	if c.WorkDir != "" {
		// In /tmp, the bundle's host folder (see poolSpec): the
		// script's, as the unpooled run's host folder; its parents as
		// the mount points runsc makes for an unpooled run's.
		if err := os.MkdirAll(filepath.Dir(c.WorkDir), 0o755); err != nil {
			return poolFail(err)
		}
		if err := os.Mkdir(c.WorkDir, 0o700); err != nil {
			return poolFail(err)
		}
	}
	if err := os.Chdir(c.Dir); err != nil {
		return poolFail(err)
	}
	prog := lookPathIn(c.Argv[0], c.Env)
	p, err := syscall.BytePtrFromString(prog)
	if err != nil {
		return poolFail(err)
	}
	av, err := syscall.SlicePtrFromStrings(c.Argv)
	if err != nil {
		return poolFail(err)
	}
	ev, err := syscall.SlicePtrFromStrings(c.Env)
	if err != nil {
		return poolFail(err)
	}
	lims := make([]syscall.Rlimit, len(c.Rlimits))
	nums := make([]int, len(c.Rlimits))
	for i, l := range c.Rlimits {
		lims[i] = syscall.Rlimit{Cur: l.Soft, Max: l.Hard}
		nums[i], _ = poolRlimit(l.Type) // checked by parsePoolConfig
	}
	for i, l := range c.Rlimits {
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(nums[i]), uintptr(unsafe.Pointer(&lims[i])), 0, 0, 0); e != 0 {
			return poolFail(fmt.Errorf("%s: %v", l.Type, e))
		}
	}
	// A raw write: RLIMIT_AS is set, nothing is allocated from here on.
	goByte := [1]byte{poolGo}
	if _, _, e := syscall.RawSyscall(syscall.SYS_WRITE, 1, uintptr(unsafe.Pointer(&goByte[0])), 1); e != 0 {
		return poolFail(fmt.Errorf("telling the supervisor: %v", e))
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&av[0])), uintptr(unsafe.Pointer(&ev[0])))
	return poolFail(fmt.Errorf("starting %s: %v", c.Argv[0], e))
}

// lookPathIn finds prog on the PATH of env, as runsc looks up the
// process of an unpooled run; prog itself when it holds a slash or is
// found nowhere (execve then says why).
func lookPathIn(prog string, env []string) string {
	if strings.Contains(prog, "/") {
		return prog
	}
	for _, kv := range env {
		dirs, ok := strings.CutPrefix(kv, "PATH=")
		if !ok {
			continue
		}
		for _, d := range filepath.SplitList(dirs) {
			p := filepath.Join(d, prog)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	return prog
}
